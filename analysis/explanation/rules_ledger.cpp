// Rules that read the probes' traces through a test's ledger: every drop of the measured flow
// named with its node, stage and kernel reason (each in exactly one stage), traffic that did
// not cross the data NIC, traces that did not cover the test, and a tool's error explained from
// what its packets met on each node.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

// The finding that places loss in each stage.
const char* loss_code(Stage s) {
    switch (s) {
        case Stage::sender_stack:
            return "LOSS_AT_SENDER_STACK";
        case Stage::sender_queue:
            return "LOSS_AT_SENDER_QDISC";
        case Stage::wire:
            return "LOSS_ON_WIRE";
        case Stage::receiver_nic:
            return "LOSS_AT_RECEIVER_NIC";
        case Stage::receiver_filter:
            return "LOSS_AT_RECEIVER_FILTER";
        case Stage::receiver_ip:
            return "LOSS_AT_RECEIVER_IP";
        case Stage::receiver_socket:
            return "LOSS_AT_RECEIVER_SOCKET";
        case Stage::receiver_tcp:
            return "LOSS_AT_RECEIVER_TCP";
        default:
            return "LOSS_UNATTRIBUTED";
    }
}

std::string why_there(Stage s, const std::string& node) {
    switch (s) {
        case Stage::sender_stack:
            return fmt::format(
                "{}'s kernel dropped them on the way out, before its egress hook "
                "(a firewall, no route, or the peer's address unresolved)",
                node);
        case Stage::sender_queue:
            return fmt::format(
                "{}'s queue dropped them before the driver: the sender offered "
                "more than its interface queue could hold",
                node);
        case Stage::wire:
            return "they left the sender's NIC (counted after its queue) but neither the "
                   "receiver's kernel nor its NIC counters saw them: lost between the NICs "
                   "(cable, switch, or a NIC that drops before the kernel sees the frame)";
        case Stage::receiver_nic:
            return fmt::format(
                "{} did not take them off its NIC fast enough (ring, backlog, "
                "CPU), before its ingress hook",
                node);
        case Stage::receiver_filter:
            return fmt::format("a filter on {} dropped them (a tc ingress action or netfilter)",
                               node);
        case Stage::receiver_ip:
            return fmt::format("{}'s IP layer refused them", node);
        case Stage::receiver_socket:
            return fmt::format(
                "{}'s receiving socket did not take them: the application did "
                "not read fast enough for its receive buffer, or no socket was "
                "there",
                node);
        case Stage::receiver_tcp:
            return fmt::format("{}'s TCP dropped them on receipt (window, out-of-order queue)",
                               node);
        default:
            return "no kernel reason says where";
    }
}

// Whether a traced side's data NIC lost its carrier during the test's phase.
bool carrier_lost_in_phase(const std::optional<TracedSide>& side) {
    if (!side) return false;
    const auto it = side->phase.dev_stats.find("carrier_down_count");
    return it != side->phase.dev_stats.end() && it->second > 0;
}

struct LossReading {
    std::string why, next_step;
};

constexpr const char* kCarrierStep =
    "Check the data link's carrier on both nodes over the test (ip -s link: carrier_changes; "
    "the kernel log for the link going down) and what set it down.";

// What a stage's drops say of themselves by their reasons: any by an XDP program; all on a
// device not ready, all of a queue purged whole, all freed by a named driver function.
struct DropKinds {
    bool xdp = false, dev_ready = true, purged = true, named = true;
};

// The kinds of these drops.
DropKinds kinds_of(const std::vector<LedgerDrop>& drops) {
    DropKinds k;
    for (const auto& d : drops) {
        k.xdp = k.xdp || d.reason.find("xdp") != std::string::npos;
        k.dev_ready = k.dev_ready && d.reason == "DEV_READY";
        k.purged = k.purged && is_queue_purge(d.reason);
        k.named = k.named && d.reason.starts_with("freed in ");
    }
    return k;
}

// Drops on the way out of `node` (its stack or its queue): its device not up, or its queue
// purged whole; empty when the drops show neither.
std::optional<LossReading> leaving_reading(const TestEvidence& v, Stage stage, const DropKinds& k,
                                           const std::string& node) {
    const auto& node_side = !v.traces.sender || v.traces.sender->trace->node != node
                                ? v.traces.receiver
                                : v.traces.sender;
    bool not_up = k.dev_ready;
    if (!node.empty() && node_side && node_side->trace->node == node &&
        carrier_lost_in_phase(node_side)) {
        const auto& q = node_side->phase.qdisc_stats;
        const auto counted = q.find("drops");
        not_up =
            not_up || stage == Stage::sender_stack || counted == q.end() || counted->second <= 0;
    }
    if (not_up)
        return LossReading{fmt::format("{}'s data NIC was not up when they reached it (DEV_READY, "
                                       "or the link's carrier lost in the phase: the link down or "
                                       "its queue deactivated), not a queue that could not keep up",
                                       node),
                           kCarrierStep};
    if (k.purged)
        return LossReading{fmt::format("{}'s queue was purged whole (a qdisc reset or replaced, or "
                                       "deactivated with its device), not overfilled",
                                       node),
                           "Check what changed the sender's qdisc during the test (tc qdisc show; "
                           "whatever ran tc or set the link down)."};
    return std::nullopt;
}

// Drops on the wire: freed by a driver whose peer did not take them, or lost while the link's
// carrier was (then naming, when the drops name no node, the node that lost it); empty when the
// drops show neither.
std::optional<LossReading> wire_reading(const TestEvidence& v, const DropKinds& k,
                                        std::string& node) {
    std::string down;
    for (const auto* side : {&v.traces.sender, &v.traces.receiver})
        if (carrier_lost_in_phase(*side)) down = (*side)->trace->node;
    if (k.named && !down.empty())
        return LossReading{fmt::format("{}'s driver freed them after counting them out, its peer "
                                       "not taking them: the data link was down while they "
                                       "crossed it ({}'s carrier was lost in the phase), not a "
                                       "cable or switch dropping frames",
                                       node, down),
                           kCarrierStep};
    if (k.named)
        return LossReading{fmt::format("{}'s driver freed them after counting them out: its peer "
                                       "did not take them (down, or the frame larger than the "
                                       "peer's MTU), not a cable or switch dropping frames",
                                       node),
                           "Compare both data ports' state and MTU (ip link) over the test."};
    if (down.empty()) return std::nullopt;
    if (node.empty()) node = down;
    return LossReading{fmt::format("they left the sender's NIC and never arrived, in a phase in "
                                   "which the data link's carrier was lost ({}): frames sent while "
                                   "it was down are lost this way",
                                   down),
                       kCarrierStep};
}

// Why the drops of one stage were lost, read from the drops' own kernel meaning and the phase's
// carrier count before the stage's usual cause (why_there): an XDP program; the device not up
// (DEV_READY, or dropped on the way out of a node whose carrier was lost while its qdisc counted
// no drop: the queue that stands in while the device is down); a queue purged whole, not
// overfilled; a driver whose peer did not take what it had counted out.
LossReading read_loss(const TestEvidence& v, Stage stage, const std::vector<LedgerDrop>& drops,
                      std::string& node) {
    const DropKinds k = kinds_of(drops);
    if (k.xdp)
        return {fmt::format("an XDP program on {}'s NIC dropped them, before the kernel's stack "
                            "and its ingress hook saw them",
                            node),
                next_step_for(stage, v.test.transport)};
    if (stage == Stage::sender_queue || stage == Stage::sender_stack)
        if (auto r = leaving_reading(v, stage, k, node)) return *r;
    if (stage == Stage::wire)
        if (auto r = wire_reading(v, k, node)) return *r;
    return {why_there(stage, node), next_step_for(stage, v.test.transport)};
}

}  // namespace

const char* next_step_for(Stage s, Transport t) {
    switch (s) {
        case Stage::sender_stack:
            return "Check the sender's firewall (nft list ruleset), its route and the neighbour "
                   "entry of the peer (ip route get, ip neigh).";
        case Stage::sender_queue:
            return t == Transport::udp
                       ? "Lower the offered rate (-b) to the path's ceiling, or raise the sender's "
                         "qdisc limit / txqueuelen."
                       : "Raise the sender's qdisc limit or txqueuelen; a shaper's queue that "
                         "short drops bursts.";
        case Stage::wire:
            return "Check the cable, the switch ports' counters and ethtool -S on both NICs.";
        case Stage::receiver_nic:
            return "Raise the receiver's NIC ring (ethtool -G) or net.core.netdev_max_backlog; "
                   "check its CPU load.";
        case Stage::receiver_filter:
            return "Check the receiver's firewall (nft list ruleset, iptables -L) and tc "
                   "ingress filters (tc filter show dev IFACE ingress).";
        case Stage::receiver_ip:
            return "Check the receiver's routing and addresses (rp_filter, the destination "
                   "address, MTU).";
        case Stage::receiver_socket:
            return "Raise the receive buffer (iperf3 -w, net.core.rmem_max) or lower -b.";
        case Stage::receiver_tcp:
            return "Raise the receiver's socket buffers (net.ipv4.tcp_rmem) and check it keeps "
                   "up (CPU).";
        default:
            return "Compare the NICs' counters (ethtool -S, ip -s link) on both nodes.";
    }
}

void probe_tiers(const ExplainInput& in, Explanation& e) {
    for (const auto& t : in.traces) {
        if (t.tier == ProbeTier::full) continue;
        const std::string& node = t.node.empty() ? t.iface : t.node;
        Finding f = make_finding("PROBE_TIER");
        f.title = fmt::format("{}'s probe counted at the {} tier", node, to_string(t.tier));
        std::string cannot;
        switch (t.tier) {
            case ProbeTier::drops_without_reasons:
                cannot = fmt::format(
                    "drops on {} are placed by the kernel function that freed them, not by the "
                    "kernel's reason: the drops of a function that drops for several reasons "
                    "(tcp_v4_rcv, __udp4_lib_rcv) are in an unknown stage, and a retransmission "
                    "the receiver already had is not told from a loss",
                    node);
                break;
            case ProbeTier::tc_counters:
                cannot = fmt::format(
                    "{}'s flows are counted at its NIC's tc hooks, but not what its driver was "
                    "handed after the queue, nor its drops or TCP retransmits: losses on {} are "
                    "located to its qdisc, NIC or UDP socket from kernel counters only (all "
                    "traffic, not the test's)",
                    node, node);
                break;
            default:
                cannot = fmt::format(
                    "nothing on {} is counted per flow: what crossed its NIC is unknown, and "
                    "losses on {} are located to its qdisc, NIC or UDP socket from kernel "
                    "counters only (all traffic, not the test's)",
                    node, node);
        }
        f.detail = fmt::format("{}{}: {}.", to_string(t.tier),
                               t.tier_why.empty() ? "" : " (" + t.tier_why + ")", cannot);
        f.evidence = {{"node", node}, {"tier", to_string(t.tier)}, {"why", t.tier_why}};
        f.next_step =
            "For every stage on this node: run its probe as root with CAP_BPF, CAP_PERFMON and "
            "CAP_NET_ADMIN on a kernel with BTF and drop reasons (Linux >= 5.17; "
            "docs/commands.md, \"Probe tiers\").";
        e.findings.push_back(std::move(f));
    }
}

void trace_short(const TestEvidence& v, std::vector<Finding>& out) {
    for (const auto& why : v.traces.unusable) {
        Finding f = make_finding("TRACE_SHORT", v.test.label);
        f.title = fmt::format("A trace does not cover {}", v.test.label);
        f.detail = fmt::format(
            "{}: its counts are not held against the test (they would read as traffic that "
            "never crossed the NIC).",
            why);
        f.evidence = {{"test_duration_s", rounded(v.test.duration_s, 1)}};
        f.next_step =
            "Keep the probe running for the whole test: give it --duration, or drive it with "
            "--control / --background (np-explain probe --help).";
        out.push_back(std::move(f));
    }
}

namespace {

// How much of the measured flow the probe on the data NIC saw, against what the tool moved, when
// that is less than half of it (or nothing at all): the flow rode another interface.
struct Missed {
    const TracedSide* side;
    uint64_t seen;
    std::optional<double> tool;
    bool all_traffic = false;  // seen is the NIC's own count of everything (no flows counted)
};

// Below the tiers that count flows: the data NIC's own byte counter (/proc/net/dev), all
// traffic — if even that is under half of what the receiver got, the flow went elsewhere. What
// the receiver got crossed both NICs of this path; what the sender sent need not have: the
// NIC counts after the sender's queue, which drops what the link cannot take (a UDP test
// offered 1G through a 100M shaper sends ten times what its NIC carries).
std::optional<Missed> missed_by_nic_counters(const TestEvidence& v) {
    const std::optional<double>& tool = v.test.received_bytes;
    if (!tool || *tool <= 0) return std::nullopt;
    for (const bool sender : {true, false}) {
        const auto& side = sender ? v.traces.sender : v.traces.receiver;
        if (!side || measures(side->trace->tier).flows) continue;
        const auto& dev = side->phase.dev_stats;
        const auto bytes = dev.find(sender ? "tx_bytes" : "rx_bytes");
        if (bytes == dev.end()) continue;
        if (double(bytes->second) < 0.5 * *tool)
            return Missed{&*side, uint64_t(std::max<int64_t>(bytes->second, 0)), tool, true};
    }
    return std::nullopt;
}

std::optional<Missed> missed_data_nic(const TestEvidence& v) {
    if (!v.ledger) return std::nullopt;
    const Ledger& l = *v.ledger;
    const bool sender = l.sender_flow_bytes.has_value();
    const std::optional<uint64_t> seen = sender ? l.sender_flow_bytes : l.receiver_flow_bytes;
    const TracedSide& side = sender ? *v.traces.sender : *v.traces.receiver;
    // What the receiver got crossed the path; what the sender wrote need not have left its host
    // (a TCP test that crawls ends with much of it still in the socket's send buffer).
    const std::optional<double>& tool = l.tool_bytes;
    if (!seen) return missed_by_nic_counters(v);
    const bool absent = tool ? double(*seen) < 0.5 * *tool : *seen == 0;
    if (!absent || (tool && *tool <= 0)) return std::nullopt;
    return Missed{&side, *seen, tool};
}

}  // namespace

void wrong_interface(const TestEvidence& v, std::vector<Finding>& out) {
    const std::optional<Missed> m = missed_data_nic(v);
    if (!m) return;
    const TracedSide& side = *m->side;
    const std::optional<double>& tool = m->tool;
    Finding f = make_finding("WRONG_INTERFACE", v.test.label);
    f.title = fmt::format("{}: the traffic did not cross the data interface {}", v.test.label,
                          side.trace->iface);
    f.detail = fmt::format(
        "The probe on {} watched {} and saw {} bytes of {}{}. The test's traffic rode another "
        "interface, so its numbers say nothing about the data link.",
        side.trace->node, side.trace->iface, format_count(double(m->seen)),
        m->all_traffic ? fmt::format("all traffic by the NIC's own counters (its {} tier counts "
                                     "no flows)",
                                     to_string(side.trace->tier))
                       : std::string("the measured flow"),
        !tool ? std::string()
        : m->all_traffic || v.test.received_bytes
            ? fmt::format(" while the receiver got {} bytes of the test", format_count(*tool))
            : fmt::format(" while the tool moved {} bytes", format_count(*tool)));
    f.evidence = {{"data_nic", side.trace->iface}, {"data_nic_flow_bytes", m->seen}};
    if (tool) f.evidence.emplace_back("tool_bytes", rounded(*tool, 0));
    f.next_step =
        "Use the data interface's address as the iperf target (and bind with -B); check `ip "
        "route get` for it.";
    out.push_back(std::move(f));
}

// One finding per stage that lost data of the flow, from the ledger: a drop is in exactly one
// stage, so no loss is placed twice.
// A drop the kernel named in a stage is exact evidence of loss there, however few. Drops without
// a reason that no gap between two counts needed (Stage::unknown) may not have cost the test
// anything (the kernel frees some of the flow's packets without a reason), so like differences
// between counts they are reported only beyond the ledger's slack. Not for a flow that did not
// cross the probed NIC: its ledger counts other traffic.
namespace {

// Why the receiving application did not read faster, where its own evidence says: its process
// held back by its cgroup's CPU limit, or the CPU it ran on saturated (by the probe's account of
// that CPU, with what took its time). Else the stage's own next step.
void say_why_not_read(Finding& f, const TestEvidence& v, Stage stage,
                      const std::string& next_step) {
    f.next_step = next_step;
    if ((stage != Stage::receiver_socket && stage != Stage::receiver_tcp) || !v.traces.receiver)
        return;
    if (const auto tool = starved_tool(*v.traces.receiver)) {
        f.detail += " Why it did not read faster: " + tool->text + ".";
        for (const auto& e : tool->evidence) f.evidence.push_back(e);
        f.next_step = lift_limit_step(*tool);
        return;
    }
    const auto cpu = saturated_tool_cpu(*v.traces.receiver, v.test.duration_s);
    if (!cpu) return;
    f.detail += " Why it did not read faster: " + cpu->text + ".";
    add_saturated_cpu(f, *cpu);
}

// The loss the ledger places in one stage: its drops, where and why, with the tool's own count
// beside it and, for a receiving socket, the receiving process held back where it runs.
Finding stage_loss_finding(const TestEvidence& v, Stage stage, const std::vector<LedgerDrop>& drops,
                           uint64_t n, std::string node) {
    const Ledger& l = *v.ledger;
    const bool udp = v.test.transport == Transport::udp;
    Finding f = make_finding(loss_code(stage), v.test.label);
    f.title = fmt::format("{}: {} {} lost at {}", v.test.label, format_count(double(n)), l.unit,
                          to_string(stage));
    const LossReading reading = read_loss(v, stage, drops, node);
    f.detail = fmt::format("{}: {}.", describe_drops(drops), reading.why);
    f.evidence = {{"stage", std::string(key_of(stage))}, {"lost_" + l.unit, n}};
    if (!node.empty()) f.evidence.emplace_back("node", node);
    for (const auto& d : drops)
        if (!d.reason.empty())
            f.evidence.emplace_back("reason." + d.reason.substr(0, d.reason.find(' ')), d.packets);
    if (udp && v.test.datagrams_lost && *v.test.datagrams_lost > 0) {
        f.detail += fmt::format(" That is {} of the {} datagrams the tool counted as lost.",
                                format_pct(double(n) / double(*v.test.datagrams_lost), 1),
                                format_count(double(*v.test.datagrams_lost)));
        f.evidence.emplace_back("tool_lost_datagrams", *v.test.datagrams_lost);
    }
    if (!udp && l.retransmitted && *l.retransmitted > 0)
        f.detail += fmt::format(" TCP resent what it lost ({} retransmits on the data NIC).",
                                format_count(double(*l.retransmitted)));
    say_why_not_read(f, v, stage, reading.next_step);
    return f;
}

// Counts that do not add up between two points with no drop to name: not located on a node
// whose tier counts no drops, else unattributed.
Finding unplaced_loss_finding(const TestEvidence& v, const LedgerPoint& p) {
    const Ledger& l = *v.ledger;
    const ProbeTier tier = p.node == l.receiver_node ? l.receiver_tier : l.sender_tier;
    if (!measures(tier).drops) {
        Finding f = make_finding("LOSS_NOT_LOCATED", v.test.label);
        f.title = fmt::format("{}: {} {} lost before '{}' on {}, whose probe counts no drops",
                              v.test.label, format_count(double(p.unattributed)), l.unit, p.label,
                              p.node);
        f.detail = fmt::format(
            "The ledger's count at '{}' on {} is {} lower than the point before it minus what "
            "its kernel counters name. {}'s probe counted at the {} tier, which counts no "
            "drops of the flow: the stage that lost them is not located.",
            p.label, p.node, format_count(double(p.unattributed)), p.node, to_string(tier));
        f.evidence = {{"point", p.label},
                      {"node", p.node},
                      {"tier", to_string(tier)},
                      {"lost_" + l.unit, p.unattributed}};
        f.next_step = fmt::format(
            "Run {}'s probe at the full tier (root with CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN, "
            "a kernel with BTF and drop reasons) to name the stage.",
            p.node);
        return f;
    }
    Finding f = make_finding("LOSS_UNATTRIBUTED", v.test.label);
    f.title = fmt::format("{}: {} {} missing before '{}' with no drop to name them", v.test.label,
                          format_count(double(p.unattributed)), l.unit, p.label);
    f.detail = fmt::format(
        "The ledger's count at '{}' on {} is {} lower than the point before it minus the drops "
        "both probes saw between them: no kernel drop reason or NIC counter accounts for them.",
        p.label, p.node.empty() ? "the node" : p.node, format_count(double(p.unattributed)));
    f.evidence = {{"point", p.label}, {"unattributed_" + l.unit, p.unattributed}};
    f.next_step = next_step_for(Stage::unknown, l.transport);
    return f;
}

}  // namespace

void loss_located(const TestEvidence& v, std::vector<Finding>& out) {
    if (!v.ledger || missed_data_nic(v)) return;
    const Ledger& l = *v.ledger;
    const uint64_t frames = counted_frames(l);
    std::map<Stage, std::vector<LedgerDrop>> by_stage;
    for (const auto& d : l.drops)
        if (is_data_loss(d.stage) && !d.housekeeping) by_stage[d.stage].push_back(d);
    for (const auto& [stage, drops] : by_stage) {
        uint64_t n = 0;
        std::string node;
        for (const auto& d : drops) {
            n += d.packets;
            if (!d.node.empty()) node = d.node;
        }
        if (n == 0 || (stage == Stage::unknown && n <= ledger_slack(frames))) continue;
        out.push_back(stage_loss_finding(v, stage, drops, n, node));
    }
    // What no drop explains: counts that do not add up between two points.
    for (const auto& p : l.points)
        if (p.unattributed > 0) out.push_back(unplaced_loss_finding(v, p));
}

namespace {

// What the probes saw of a failed test's packets: the flow's frames sent, received and dropped
// by reason on each node, in the phase of the test (both throughput phases when the failure
// does not say which).
struct TracedFailure {
    std::string seen;                       // a sentence per phase
    std::map<std::string, uint64_t> drops;  // reason -> packets, over the nodes
};

TracedFailure traced_failure(const ExplainInput& in, const ToolFailure& failure) {
    TracedFailure out;
    std::vector<std::string> phases = {"tcp", "udp"};
    if (failure.transport) phases = {*failure.transport == Transport::tcp ? "tcp" : "udp"};
    for (const auto& phase : phases) {
        std::string here;
        for (const auto& t : in.traces) {
            const PhaseTrace* p = t.find_phase(phase);
            if (!p) continue;
            const TrafficCounts tx = flow_counts(p->tx, "");
            const TrafficCounts rx = flow_counts(p->rx, "");
            const auto drops = flow_drops(*p, "");
            if (tx.wire_packets == 0 && rx.wire_packets == 0 && drops.empty()) continue;
            here +=
                fmt::format("{}{} sent {} and received {} frames of the iperf flow",
                            here.empty() ? "" : "; ", t.node, format_count(double(tx.wire_packets)),
                            format_count(double(rx.wire_packets)));
            std::string dropped;
            for (const auto& [reason, n] : drops) {
                dropped += fmt::format("{}{} {}", dropped.empty() ? "" : ", ",
                                       format_count(double(n)), reason);
                out.drops[reason] += n;
            }
            if (!dropped.empty()) here += fmt::format(" and dropped {}", dropped);
        }
        if (!here.empty()) out.seen += fmt::format(" In the {} phase: {}.", phase, here);
    }
    return out;
}

// What the tool's message says went wrong, where it is one iperf3 prints for a known cause: the
// title and next step that cause gives `f`.
void read_message(const std::string& m, Finding& f) {
    auto says = [&](const char* s) { return m.find(s) != std::string::npos; };
    if (says("unable to connect") || says("Connection refused")) {
        f.title = "iperf3 could not connect: the server is not running (or not on that port)";
        f.detail +=
            " The client reached the server's address but nothing accepted the connection "
            "on the iperf3 port.";
        f.next_step =
            "On the server node check the iperf3 server: systemctl status np-iperf3 (the "
            "tutorial's unit) or start one with iperf3 -s; make sure -p matches and no "
            "firewall blocks port 5201.";
    } else if (says("No route to host") || says("Network is unreachable")) {
        f.title = "iperf3 found no path to the server";
        f.next_step =
            "Check that the data interface is up and addressed on both nodes (ip -br addr) "
            "and that both ports are on the same segment.";
    } else if (says("server is busy")) {
        f.title = "the iperf3 server was busy with another test";
        f.next_step = "Wait for the other test to finish, then run again.";
    } else if (says("control message") || says("Connection reset") || says("timed out")) {
        f.title = "the iperf3 control connection broke during the test";
        f.next_step =
            "Check that the server is still running and the path stayed up; run "
            "again.";
    }
}

// What the probes saw of the failed test's packets, added to `f`: in its detail, as the next
// step where a drop's reason names the cause, and its drops as evidence.
void add_traced_failure(const ExplainInput& in, const ToolFailure& failure, Finding& f) {
    const TracedFailure traced = traced_failure(in, failure);
    if (traced.seen.empty()) {
        f.detail +=
            " The probes saw no packet of the iperf flow on either data NIC in the "
            "test's phase: the test never reached the data path.";
    } else {
        f.detail += " What the probes saw of the test's packets:" + traced.seen;
        const auto has = [&](const char* r) { return traced.drops.count(r) > 0; };
        if (has("NETFILTER_DROP")) {
            f.detail += " A firewall dropped them (NETFILTER_DROP).";
            f.next_step =
                "Open the iperf port in the firewall of the node that dropped them (nft "
                "list ruleset / iptables -L): TCP for the control connection, UDP for a "
                "-u test.";
        } else if (has("TC_INGRESS") || has("TC_EGRESS")) {
            f.detail += " A tc filter dropped them.";
            f.next_step = "Check the nodes' tc filters (tc filter show dev IFACE ingress).";
        } else if (has("NO_SOCKET")) {
            f.detail += " They found no socket: nothing listened on that port (NO_SOCKET).";
        }
    }
    std::string drops;
    for (const auto& [r, n] : traced.drops)
        drops += fmt::format("{}{} {}", drops.empty() ? "" : ", ", n, r);
    f.evidence.emplace_back("probe_drops", drops.empty() ? std::string("none") : drops);
}

}  // namespace

void tool_failures(const ExplainInput& in, Explanation& e) {
    for (const auto& failure : in.measurements.failures) {
        Finding f = make_finding("TOOL_ERROR", failure.source);
        f.title = fmt::format("{} reported an error instead of a result", to_string(failure.tool));
        f.detail = fmt::format("{} said: \"{}\".", to_string(failure.tool), failure.message);
        f.evidence = {{"file", failure.source}, {"message", failure.message}};
        read_message(failure.message, f);
        if (!in.traces.empty()) add_traced_failure(in, failure, f);
        Verdict v;
        v.test = f.test;
        v.source = failure.source;
        v.measured = "-";
        v.verdict = std::string(finding_code("TOOL_ERROR").verdict);
        v.codes.push_back(f.code);
        e.verdicts.push_back(std::move(v));
        e.findings.push_back(std::move(f));
    }
}

}  // namespace np::rules
