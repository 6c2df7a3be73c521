// Rules that locate the stage that set a test's rate from that stage's own measured signature
// (docs/design.md, "The bottleneck"): a link full of this test and other traffic, a reverse path
// that holds back TCP's ACKs. What each data NIC carried — the test's flow, its ACKs, everyone
// else's frames — comes from the probes' traces; the stages the ledger places (loss) and the
// hosts' CPU are read by the rules that own them, and whatever none of them shows is said to be
// not located (below_ceiling, rules_throughput.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "analysis/explanation/bursts.hpp"
#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

// A link carrying at least this fraction of its rate is full (wire bytes per second, each frame
// with its preamble, FCS and gap, against the nominal rate).
constexpr double kFullLinkFraction = 0.95;
// Other traffic below this fraction of the link's rate is noise (ARP, neighbour discovery, the
// odd SSH packet of the control network leaking onto the data port).
constexpr double kOtherTrafficFraction = 0.02;
// A reverse-path shaper carrying at least this fraction of its rate was the ACKs' limit.
constexpr double kFullReverseFraction = 0.9;
// A round trip under load at least this many times the idle one, and this much longer, is a
// standing queue on it, not a busy host's delay (measured on the local testbed: hosts too slow
// for 1 Gbit/s, TCP at 396 Mbit/s, 0.223 ms under load against 0.044 ms idle — five times, but
// only 0.18 ms longer; ACKs queued on a 1 Mbit/s hop, 2.66 ms against 0.084 ms).
constexpr double kQueuedRttFactor = 5.0;
constexpr double kQueuedRttMinMs = 1.0;

double bits_per_s(uint64_t bytes, double seconds) {
    return seconds > 0 ? static_cast<double>(bytes) * 8.0 / seconds : 0;
}

// Traffic on the NIC that is not the test's. A datagram larger than the MTU leaves in fragments
// of which only the first carries the port: the others count as other UDP, so for a test whose
// datagrams fragment, other UDP is not taken for someone else's.
uint64_t other_bytes(const DirectionTraffic& d, const TrafficCounts& test, bool own_fragments) {
    uint64_t other =
        d.total.wire_bytes > test.wire_bytes ? d.total.wire_bytes - test.wire_bytes : 0;
    if (own_fragments)
        if (const auto udp = d.by_protocol.find("udp"); udp != d.by_protocol.end()) {
            const auto flow = d.by_flow.find("iperf_udp");
            const uint64_t ported = flow != d.by_flow.end() ? flow->second.wire_bytes : 0;
            const uint64_t unported =
                udp->second.wire_bytes > ported ? udp->second.wire_bytes - ported : 0;
            other -= std::min(other, unported);
        }
    return other;
}

NicLoad load_of(const TracedSide& side, const DirectionTraffic& d, const char* direction,
                double test_s, bool own_fragments) {
    NicLoad n;
    n.node = side.trace->node;
    n.iface = side.trace->iface;
    n.direction = direction;
    const double phase_s = side.phase.duration_ms() / 1000.0;
    const TrafficCounts test = flow_counts(d, "");
    const uint64_t other = other_bytes(d, test, own_fragments);
    // The test's bytes crossed during the test; other traffic is spread over the whole phase.
    n.test_bps = bits_per_s(test.wire_bytes, test_s > 0 ? std::min(test_s, phase_s) : phase_s);
    n.other_bps = bits_per_s(other, phase_s);
    n.test_frames = test.wire_packets;
    return n;
}

// The load on a NIC whose probe counts no flows, from its own counters (/proc/net/dev): frames
// plus their 24 bytes of preamble, FCS and gap. `tool_bytes`: what the tool says the test moved
// through it (payload), 0 when the test's share is not known (the ACK direction).
std::optional<NicLoad> counted_load(const TracedSide& side, const char* prefix,
                                    const char* direction, double tool_bytes, const Ceiling* c,
                                    double test_s) {
    const auto& dev = side.phase.dev_stats;
    const auto bytes = dev.find(std::string(prefix) + "_bytes");
    const auto packets = dev.find(std::string(prefix) + "_packets");
    const double phase_s = side.phase.duration_ms() / 1000.0;
    if (bytes == dev.end() || packets == dev.end() || phase_s <= 0) return std::nullopt;
    NicLoad n;
    n.node = side.trace->node;
    n.iface = side.trace->iface;
    n.direction = direction;
    n.per_flow = false;
    const double total = double(bytes->second) + 24.0 * double(packets->second);
    double test = 0;
    if (tool_bytes > 0 && c && c->payload_bytes_per_unit > 0) {
        test = std::min(total, tool_bytes * c->wire_bytes_per_unit / c->payload_bytes_per_unit);
        n.test_frames = uint64_t(tool_bytes / c->payload_bytes_per_unit);
    }
    n.test_bps = bits_per_s(uint64_t(test), test_s > 0 ? std::min(test_s, phase_s) : phase_s);
    n.other_bps = bits_per_s(uint64_t(total - test), phase_s);
    return n;
}

std::string load_text(const NicLoad& n) {
    if (!n.per_flow)
        return fmt::format(
            "{}'s {} {} {} on the wire by its own counters (its probe counts no flows): {} of it "
            "the test's by the tool's count and {} of other traffic",
            n.node, n.iface, n.direction, format_rate(n.total_bps()), format_rate(n.test_bps),
            format_rate(n.other_bps));
    return fmt::format("{}'s {} {} {} on the wire: {} of the test's and {} of other traffic",
                       n.node, n.iface, n.direction, format_rate(n.total_bps()),
                       format_rate(n.test_bps), format_rate(n.other_bps));
}

void link_shared(const TestEvidence& v, const PathLoads& loads, std::vector<Finding>& out) {
    const auto& t = v.test;
    const double capacity = v.model_bps();
    const NicLoad* busiest = nullptr;
    for (const auto* n : {&loads.data_out, &loads.data_in})
        if (*n && (*n)->total_bps() >= capacity * kFullLinkFraction &&
            (*n)->other_bps >= capacity * kOtherTrafficFraction &&
            (!busiest || (*n)->other_bps > busiest->other_bps))
            busiest = &**n;
    if (!busiest) return;
    Finding f = make_finding("LINK_SHARED", t.label);
    f.title = fmt::format("The link was full, and not with this test alone: {} of other traffic",
                          format_rate(busiest->other_bps));
    f.detail = fmt::format(
        "{} — {} of the {} link's rate. The test had {} of it, {} of the wire; the ceiling of "
        "{} assumes the link to itself. What the test lost or was held back by at its queue "
        "followed from the full link, not the other way round.",
        load_text(*busiest), format_pct(busiest->total_bps() / capacity),
        format_link_rate(capacity), rate_text(*v.measured_bps, t.rate_resolution_bps),
        format_pct(busiest->test_bps / busiest->total_bps()), format_rate(v.ceiling->goodput_bps));
    f.evidence = {{"node", busiest->node},
                  {"link_busy_mbps", rounded(busiest->total_bps() / 1e6)},
                  {"test_wire_mbps", rounded(busiest->test_bps / 1e6)},
                  {"other_wire_mbps", rounded(busiest->other_bps / 1e6)},
                  {"link_mbps", rounded(capacity / 1e6)}};
    f.next_step = fmt::format(
        "Measure on an idle link, or find the other traffic on {} of {} (ss -tunap, nft or tc "
        "counters): the test's share of a shared link is not the link's capacity.",
        busiest->iface, busiest->node);
    out.push_back(std::move(f));
}

// How often the kernel counted the side's data NIC losing its carrier in the phase; 0 unread.
int64_t carrier_down_count(const TracedSide& side) {
    const auto it = side.phase.dev_stats.find("carrier_down_count");
    return it != side.phase.dev_stats.end() ? it->second : 0;
}

// Whether a drop of the test's packets on their way back from the receiver shows its egress
// queue or shaper holding them back: dropped by the queue (by reason, or by the function that
// freed it). Not a drop of a link that was down (DEV_READY) or had no route (IP_OUTNOROUTES, a
// link set down takes its routes): those say the way back was absent, not too slow.
bool held_back_by_queue(const LedgerDrop& d) {
    return d.reason != "DEV_READY" && stage_of_drop(d.reason, true) == Stage::sender_queue;
}

// The receiver's egress shaper and what it carried during the test, said in `f`'s detail with
// its evidence.
void say_reverse_shaper(const PathLoads& loads, Finding& f) {
    const NicLoad& back = *loads.reverse_out;
    f.detail += fmt::format(
        "Its egress qdisc ({}) shapes to {}, and it carried {} during the test — {} of "
        "that rate",
        loads.reverse_qdisc, format_link_rate(*loads.reverse_capacity_bps),
        format_rate(back.total_bps()), format_pct(back.total_bps() / *loads.reverse_capacity_bps));
    f.detail += back.per_flow
                    ? fmt::format(
                          ", {} of it the test's own ACKs ({} frames for {} "
                          "data frames). ",
                          format_rate(back.test_bps), format_count(double(back.test_frames)),
                          format_count(double(loads.data_frames)))
                    : " by its NIC's own counters (its probe counts no flows). ";
    f.evidence.emplace_back("reverse_shaper_mbps", rounded(*loads.reverse_capacity_bps / 1e6, 3));
    f.evidence.emplace_back("reverse_wire_mbps", rounded(back.total_bps() / 1e6, 3));
}

// The round trip under load against the idle one, where both are known: the ACKs waited. Said
// in `f`'s detail with its evidence.
void say_acks_waited(const ThroughputTest& t, const PathLoads& loads, Finding& f) {
    if (!t.rtt_mean_us || !loads.idle_rtt_ms) return;
    f.detail += fmt::format(
        "The round trip under load was {:.2f} ms against {:.3f} ms idle (ping): the ACKs "
        "waited in that queue. ",
        *t.rtt_mean_us / 1e3, *loads.idle_rtt_ms);
    f.evidence.emplace_back("rtt_under_load_ms", rounded(*t.rtt_mean_us / 1e3, 3));
    f.evidence.emplace_back("idle_rtt_ms", rounded(*loads.idle_rtt_ms, 3));
}

void reverse_path(const TestEvidence& v, const PathLoads& loads, std::vector<Finding>& out) {
    const auto& t = v.test;
    // In --bidir the way back also carries the test's other direction: not an ACK path.
    if (t.transport != Transport::tcp || t.bidir || !loads.reverse_out) return;
    const NicLoad& back = *loads.reverse_out;
    const bool full = loads.reverse_capacity_bps &&
                      back.total_bps() >= *loads.reverse_capacity_bps * kFullReverseFraction;
    if (!full && loads.reverse_drops == 0) return;
    Finding f = make_finding("REVERSE_PATH_LIMITED", t.label);
    f.title = fmt::format("TCP's ACKs were held back on their way to the sender: {} at {}",
                          loads.reverse_capacity_bps
                              ? "a " + format_link_rate(*loads.reverse_capacity_bps) + " shaper"
                              : std::string("drops"),
                          back.node);
    f.detail =
        fmt::format("The data needs its ACKs back; they leave {} by {}. ", back.node, back.iface);
    if (loads.reverse_capacity_bps) say_reverse_shaper(loads, f);
    if (loads.reverse_drops > 0) {
        f.detail +=
            fmt::format("{} dropped {} of the test's packets on their way out ({}). ", back.node,
                        format_count(double(loads.reverse_drops)), loads.reverse_drop_reasons);
        f.evidence.emplace_back("reverse_drops", loads.reverse_drops);
    }
    say_acks_waited(t, loads, f);
    f.detail += fmt::format(
        "A sender may have only a window of unacknowledged data in flight: ACKs that wait or are "
        "lost hold it back, so the data direction ran at {} ({} of its {} ceiling) though "
        "nothing of the data was lost.",
        rate_text(*v.measured_bps, t.rate_resolution_bps),
        format_pct(*v.measured_bps / v.ceiling->goodput_bps), format_rate(v.ceiling->goodput_bps));
    f.evidence.emplace_back("measured_mbps", rounded(*v.measured_bps / 1e6));
    f.next_step = fmt::format(
        "Check the reverse direction: tc -s qdisc show dev {} on {} (a shaper or policer on the "
        "way back), and the hops back from the receiver.",
        back.iface, back.node);
    out.push_back(std::move(f));
}

}  // namespace

std::string QueueBacklog::text() const {
    std::string s = fmt::format("{}'s {} queue held packets in {} of {} samples", node, iface,
                                nonempty, samples);
    if (max_packets > 0)
        s += fmt::format(", at most {} packets ({} bytes)", format_count(double(max_packets)),
                         format_count(double(max_bytes)));
    return s;
}

std::optional<QueueBacklog> queue_backlog(const TracedSide& side) {
    const auto& q = side.phase.qdisc_stats;
    const auto get = [&](const char* key) {
        const auto it = q.find(key);
        return it != q.end() ? it->second : int64_t{0};
    };
    QueueBacklog b{side.trace->node,           side.trace->iface,
                   get("backlog_samples"),     get("backlog_nonempty_samples"),
                   get("backlog_max_packets"), get("backlog_max_bytes")};
    if (b.samples <= 0) return std::nullopt;
    return b;
}

PathLoads path_loads(const TestEvidence& v) {
    PathLoads loads;
    const double test_s = v.test.duration_s;
    const bool frags = v.test.transport == Transport::udp && v.ceiling && v.ceiling->fragmented();
    // A side whose tier counts no flows gives the load from its NIC's own counters.
    const Transport tr = v.test.transport;
    // What the tool moved through each NIC, TCP's retransmitted segments included.
    const double resent = tr == Transport::tcp && v.ceiling && v.test.retransmits
                              ? double(*v.test.retransmits) * v.ceiling->payload_bytes_per_unit
                              : 0;
    const double sent = v.test.sent_bytes.value_or(v.test.received_bytes.value_or(0)) + resent;
    const double received = v.test.received_bytes.value_or(v.test.sent_bytes.value_or(0));
    if (const auto& s = v.traces.sender) {
        loads.data_out = measures(s->trace->tier).flows
                             ? load_of(*s, s->phase.left_nic(), "sent", test_s, frags)
                             : counted_load(*s, "tx", "sent", sent, v.ceiling, test_s);
        if (loads.data_out) loads.data_frames = loads.data_out->test_frames;
        loads.data_queue = queue_backlog(*s);
    }
    if (const auto& r = v.traces.receiver) {
        if (measures(r->trace->tier).flows) {
            loads.data_in = load_of(*r, r->phase.rx, "received", test_s, frags);
            loads.reverse_out = load_of(*r, r->phase.left_nic(), "sent", test_s, false);
        } else {
            loads.data_in = counted_load(*r, "rx", "received", received, v.ceiling, test_s);
            loads.reverse_out = counted_load(*r, "tx", "sent", 0, v.ceiling, test_s);
        }
        if (!loads.data_out && loads.data_in) loads.data_frames = loads.data_in->test_frames;
        loads.reverse_queue = queue_backlog(*r);
        const LinkFacts& link = r->trace->link;
        loads.reverse_qdisc = link.qdisc;
        if (link.qdisc_rate_bps && *link.qdisc_rate_bps > 0)
            loads.reverse_capacity_bps = double(*link.qdisc_rate_bps);
    }
    // A receiver whose link went down in the phase purged its queue then: those drops are the
    // outage's (LINK_WENT_DOWN), not a queue holding the ACKs back.
    const bool receiver_link_down = v.traces.receiver && carrier_down_count(*v.traces.receiver) > 0;
    if (v.ledger && !receiver_link_down) {
        std::vector<LedgerDrop> back;
        for (const auto& d : v.ledger->drops)
            if (d.stage == Stage::reverse && !d.housekeeping && d.node == v.ledger->receiver_node &&
                held_back_by_queue(d)) {
                loads.reverse_drops += d.packets;
                back.push_back(d);
            }
        loads.reverse_drop_reasons = describe_drops(back);
    }
    for (const auto& p : v.input.measurements.pings)
        if (p.rtt_min_ms && (!loads.idle_rtt_ms || *p.rtt_min_ms < *loads.idle_rtt_ms))
            loads.idle_rtt_ms = p.rtt_min_ms;
    return loads;
}

namespace {

// The seconds a phase's CPU times are set against: the test's, when it fits in the phase.
double cpu_window_s(const TracedSide& side, double test_s) {
    const double phase_s = side.phase.duration_ms() / 1000.0;
    return test_s > 0 && test_s < phase_s ? test_s : phase_s;
}

// A CPU's time that a test at the default priority could not have had: its busy time (what the
// ticks counted and what they missed, CpuTime::working_ms) less that of tasks at a lowered
// priority (CpuTime::niced_ms), which yield to the test. A build or backup run under nice beside
// the test keeps every CPU busy without taking the test's time.
int64_t contended_ms(const CpuTime& c) {
    return std::max<int64_t>(0, c.working_ms() - c.niced_ms);
}

double busy_of(const CpuTime& c, double window_s) {
    return window_s > 0 ? std::min(1.0, double(contended_ms(c)) / (window_s * 1000)) : 0;
}

// "40 % of it softirq", and where a twentieth of it or more was work no tick counted
// (CpuTime::unticked_ms), that share too.
std::string softirq_share(const CpuTime& c) {
    const int64_t busy = contended_ms(c);
    if (busy <= 0) return "0 % of it softirq";
    std::string s = format_pct(double(c.softirq_ms) / double(busy), 0) + " of it softirq";
    if (c.unticked_ms * 20 >= busy)
        s += fmt::format(
            ", {} time /proc/stat counted neither busy nor idle, work done from idle between the "
            "kernel's ticks",
            format_pct(std::min(1.0, double(c.unticked_ms) / double(busy)), 0));
    return s;
}

// "; another 64 % in tasks at lowered priority", where those kept the CPU busier than the test's.
std::string niced_share(const CpuTime& c, double window_s) {
    if (window_s <= 0 || c.niced_ms < window_s * 1000 * 0.05) return "";
    return fmt::format("; another {} in tasks at lowered priority, which yield to the test",
                       format_pct(std::min(1.0, double(c.niced_ms) / (window_s * 1000)), 0));
}

// The measured flow's packets at a node's busier hook: what a saturated core's time went on.
uint64_t flow_packets(const PhaseTrace& p) {
    const auto at = [](const DirectionTraffic& d) {
        uint64_t n = 0;
        for (const char* flow : {"iperf_tcp", "iperf_udp"})
            if (const auto it = d.by_flow.find(flow); it != d.by_flow.end())
                n += it->second.packets;
        return n;
    };
    return std::max(at(p.tx), at(p.rx));
}

// The next step for a core the account names: by the part of the test's work (its process, or
// the network's softirq and the NIC's IRQs) that took most of it, where that part took no less
// than the work the account does not name. None otherwise: a cause the account does not measure.
std::string core_step(int cpu, const CpuAccount& a, int64_t busy_us) {
    const int64_t softirq = std::max(a.net_rx_us, a.net_tx_us) + a.nic_irq_us;
    const int64_t other = busy_us - a.named_us();
    if (std::max(a.tool_own_us(), softirq) < other) return {};
    if (a.tool_own_us() >= softirq)
        return fmt::format(
            "The tool's own thread is the limit on CPU {}: spread the test over cores with more "
            "streams (-P 2 or more; iperf3 3.16 and later runs a thread per stream), make each "
            "write carry more (-l; for TCP, -Z saves the copy), or use a faster core.",
            cpu);
    return fmt::format(
        "The network's {} work shares CPU {} with the tool: move it off the tool's core (the "
        "NIC queues' IRQ affinity, /proc/irq/N/smp_affinity_list, or RPS), pin the tool to "
        "another core (iperf3 -A), or spread the flow over more queues with more streams (-P).",
        a.net_rx_us >= a.net_tx_us ? "NET_RX softirq" : "NET_TX softirq", cpu);
}

// The CPU the test's own process ran on most, by the probe's account; none without one.
const CpuTime* tool_cpu(const std::vector<CpuTime>& cpus) {
    const CpuTime* tools = nullptr;
    for (const auto& c : cpus)
        if (c.account && c.account->tool_us > 0 &&
            (!tools || c.account->tool_us > tools->account->tool_us))
            tools = &c;
    return tools;
}

// Whether the test's process ran on `cpu` alone: less than a twentieth of its time there on all
// the other CPUs together.
bool bound_to(const std::vector<CpuTime>& cpus, const CpuTime& cpu) {
    if (!cpu.account || cpu.account->tool_us == 0) return false;
    int64_t elsewhere_us = 0;
    for (const auto& c : cpus)
        if (&c != &cpu && c.account) elsewhere_us += c.account->tool_us;
    return elsewhere_us < cpu.account->tool_us / 20;
}

// Work from idle between the kernel's ticks that the account holds in none of its parts: all of
// the CPU's unticked time where the account was sampled at the kernel's tick, none where the
// probe's own timer ran through it and sampled it into the parts. Said as what it is, not as
// other work.
int64_t unsampled_us(const CpuTime& c) {
    return c.account && c.account->at_kernel_tick ? c.unticked_ms * 1000 : 0;
}

// A saturated CPU said by the probe's account of it: the shares of the test's window its parts
// took, whether the tool ran on no other CPU, and what each packet of the flow cost it.
void add_core_account(SaturatedCpu& s, const TracedSide& side, const CpuTime& top,
                      double window_s) {
    const CpuAccount& a = *top.account;
    // Shares of the CPU's own time over the phase, which the account covers (the window is the
    // test's, a little shorter), so that the parts add up to its busy share.
    const double all_us = double(top.working_ms() + top.idle_ms + top.steal_ms) * 1000;
    const double window_us = all_us > 0 ? all_us : window_s * 1e6;
    const auto share = [&](int64_t us) { return format_pct(std::min(1.0, us / window_us), 0); };
    const int64_t parts = a.named_us();
    const int64_t unticked = unsampled_us(top);
    const int64_t other = std::max<int64_t>(0, contended_ms(top) * 1000 - parts - unticked);
    s.text += fmt::format(
        ": of its time, {} in the test's own process, {} in the NET_RX softirq, {} in NET_TX",
        share(a.tool_own_us()), share(a.net_rx_us), share(a.net_tx_us));
    if (a.nic_irq_us > 0) s.text += fmt::format(", {} in the NIC's IRQs", share(a.nic_irq_us));
    if (unticked > 0)
        s.text += fmt::format(
            ", {} in interrupt work from idle between the kernel's ticks, which neither "
            "/proc/stat nor the account places",
            share(unticked));
    s.text += fmt::format(", {} in other work", share(other));
    if (bound_to(side.phase.cpus, top))
        s.text += fmt::format(
            "; the test's process ran on no other CPU: the test was bound to "
            "CPU {}",
            top.cpu);
    if (const uint64_t packets = flow_packets(side.phase); packets > 0) {
        const double ns = double(top.working_ms()) * 1e6 / double(packets);
        s.text += fmt::format(" (~{:.0f} ns of it per packet of the flow)", ns);
        s.evidence.emplace_back(s.node + ".cpu_ns_per_packet", rounded(ns, 0));
    }
    s.evidence.emplace_back(s.node + ".cpu", top.cpu);
    s.evidence.emplace_back(s.node + ".cpu_tool_pct",
                            rounded(100.0 * a.tool_own_us() / window_us, 1));
    s.evidence.emplace_back(s.node + ".cpu_net_rx_pct",
                            rounded(100.0 * a.net_rx_us / window_us, 1));
    s.evidence.emplace_back(s.node + ".cpu_net_tx_pct",
                            rounded(100.0 * a.net_tx_us / window_us, 1));
    s.next_step = core_step(top.cpu, a, contended_ms(top) * 1000);
}

// A saturated CPU the probe's account covers: "node1-2: CPU 1 busy 100 % of the 2.0 s test",
// then its parts (add_core_account).
SaturatedCpu core_by_account(const TracedSide& side, const CpuTime& cpu, double window) {
    const double busy = busy_of(cpu, window);
    SaturatedCpu s{side.trace->node,
                   fmt::format("{}: CPU {} busy {} of the {:.1f} s test", side.trace->node, cpu.cpu,
                               format_pct(busy, 0), window),
                   busy,
                   {},
                   {},
                   cpu.cpu};
    add_core_account(s, side, cpu, window);
    return s;
}

// The test's own work on a node's CPUs over the phase and their busy time, in µs, where the
// trace can tell: by the probe's account of every CPU, else by the node's tool processes' CPU
// time and /proc/stat's softirq and IRQ time (the network's, on a host the test has to itself).
struct TestsShare {
    int64_t test_us = 0, busy_us = 0;
    bool accounted = false;  // by the account of every CPU, not the processes
    double share() const {
        return busy_us > 0 ? std::min(1.0, double(test_us) / double(busy_us)) : 0;
    }
};
std::optional<TestsShare> tests_share(const TracedSide& side, const std::vector<CpuTime>& cpus) {
    TestsShare t;
    t.accounted = std::all_of(cpus.begin(), cpus.end(), [](const CpuTime& c) { return c.account; });
    if (!t.accounted && side.phase.processes.empty()) return std::nullopt;
    for (const auto& c : cpus) {
        t.busy_us += contended_ms(c) * 1000;
        t.test_us += t.accounted ? c.account->named_us() + unsampled_us(c)
                                 : (c.softirq_ms + c.irq_ms) * 1000;
    }
    if (!t.accounted)
        for (const auto& p : side.phase.processes) t.test_us += p.cpu_ms * 1000;
    return t;
}

// The share of a saturated CPU's busy time (or every CPU's) the test's own work must have taken
// for the saturation to be the test's: other work (the run's own, a node's daemons, the other
// node's tool on a machine both share) no more than the rest. Measured on the local testbed
// (docs/design.md, "The stage that set the rate"): a core the test's UDP sender was pinned to,
// 88-94 % its own; a TCP sender's core that a busy loop at the least CPU weight filled, 79 %.
constexpr double kTestsShareOfSaturation = 0.85;

// Adds processes_wait's text to `s.other_work` and its evidence to `s.wait`: the evidence of other
// work holding the test back, which CPU times alone do not give. Nothing where the trace has no
// wait.
void say_wait(const TracedSide& side, SaturatedCpu& s) {
    const auto w = processes_wait(side);
    if (!w) return;
    s.other_work += "; " + w->text;
    s.wait = w->evidence;
}

// The test's busiest process ran for nearly all the time it was watched and was seldom kept
// waiting for a CPU: bound by its own work, so the one core it ran on was its own, whatever else
// that core's phase counted (the run's own work before and after the test, the other node's tool on
// a machine both share). Measured on the local testbed: a UDP sender pinned to CPU 1 ran 92 % of
// its 1.9 s and waited 7 % of its ready time while its core's phase was only 81 % the test's
// work; the TCP sender a busy loop kept from its core waited 30-51 % (docs/design.md).
constexpr double kRanThroughout = 0.85;
constexpr double kSeldomWaited = 0.15;
bool process_held_its_core(const TracedSide& side) {
    const ProcessCpu* top = nullptr;
    for (const auto& p : side.phase.processes)
        if (p.cpu_wait_ms && p.watched_ms > 0 && (!top || p.cpu_ms > top->cpu_ms)) top = &p;
    if (!top || top->cpu_share() < kRanThroughout) return false;
    const double ready = double(top->cpu_ms + *top->cpu_wait_ms);
    return ready > 0 && double(*top->cpu_wait_ms) / ready <= kSeldomWaited;
}

// SaturatedCpu::other_work and other_work_ruled_out for `s`.
void say_other_work(const TracedSide& side, SaturatedCpu& s, double window) {
    const auto& cpus = side.phase.cpus;
    if (s.cpu < 0) {
        const auto t = tests_share(side, cpus);
        if (!t || t->share() >= kTestsShareOfSaturation) return;
        s.other_work = fmt::format(
            "{}, but the test's own work (its process{}, the network's softirqs and IRQs) was "
            "only {} of it",
            s.text, t->accounted ? "" : "es", format_pct(t->share(), 0));
        say_wait(side, s);
        return;
    }
    const auto named =
        std::find_if(cpus.begin(), cpus.end(), [&](const CpuTime& c) { return c.cpu == s.cpu; });
    if (named == cpus.end() || !named->account) return;  // whose work it was is not known
    const auto t = tests_share(side, {*named});
    if (t->share() >= kTestsShareOfSaturation) return;
    const CpuTime* tools = tool_cpu(cpus);
    // Bound to this core alone, else the process's share of its time is not this core's.
    if (tools && tools->cpu == s.cpu && bound_to(cpus, *tools) && process_held_its_core(side))
        return;
    // The test's process ran on another CPU, and under half of this one's time was the test's:
    // it had room there, so this core did not hold it.
    s.other_work_ruled_out = tools && tools->cpu != s.cpu && t->share() < 0.5;
    s.other_work = fmt::format(
        "{}: CPU {} busy {} of the {:.1f} s test, but the test's own work (its process, the "
        "network's softirqs and IRQs) was only {} of it",
        side.trace->node, named->cpu, format_pct(busy_of(*named, window), 0), window,
        format_pct(t->share(), 0));
    if (s.other_work_ruled_out)
        s.other_work += fmt::format("; its process ran on CPU {}, busy {}", tools->cpu,
                                    format_pct(busy_of(*tools, window), 0));
    // Said of a core not ruled out: one the test's process had room beside did not hold it.
    if (!s.other_work_ruled_out) say_wait(side, s);
}

std::optional<SaturatedCpu> saturated_cpu_of(const TracedSide& side, double test_s) {
    const auto& cpus = side.phase.cpus;
    if (cpus.empty()) return std::nullopt;
    const double window = cpu_window_s(side, test_s);
    const std::string& node = side.trace->node;
    double least = 1, most = 0;
    const CpuTime* top = nullptr;
    int64_t busy = 0, softirq = 0;
    for (const auto& c : cpus) {
        least = std::min(least, busy_of(c, window));
        if (busy_of(c, window) >= most) {
            most = busy_of(c, window);
            top = &c;
        }
        busy += contended_ms(c);
        softirq += c.softirq_ms;
    }
    // Every CPU busy, and the test's process ran on one of them alone: that core set its pace
    // whatever kept the others busy (another node's share of a shared machine, other work).
    if (const CpuTime* bound = tool_cpu(cpus);
        least >= 0.9 && bound && bound_to(cpus, *bound) && busy_of(*bound, window) >= 0.95) {
        double others = 1;
        for (const auto& c : cpus)
            if (&c != bound) others = std::min(others, busy_of(c, window));
        SaturatedCpu s = core_by_account(side, *bound, window);
        s.text +=
            fmt::format("; the other{} busy too, the least {}, but not with the test's process",
                        cpus.size() > 2 ? " CPUs were" : " CPU was", format_pct(others, 0));
        return s;
    }
    if (least >= 0.9) {
        return SaturatedCpu{
            node,
            fmt::format("{}: all {} CPUs busy, the least {} of the {:.1f} s test ({} of the time "
                        "in softirq)",
                        node, cpus.size(), format_pct(least, 0), window,
                        busy > 0 ? format_pct(double(softirq) / double(busy), 0) : "0 %"),
            least,
            {},
            {}};
    }
    if (top && most >= 0.95) {
        if (top->account) return core_by_account(side, *top, window);
        return SaturatedCpu{node,
                            fmt::format("{}: CPU {} busy {} of the {:.1f} s test ({}), the "
                                        "other{} less",
                                        node, top->cpu, format_pct(most, 0), window,
                                        softirq_share(*top), cpus.size() > 2 ? "s" : ""),
                            most,
                            {},
                            {},
                            top->cpu};
    }
    return std::nullopt;
}

}  // namespace

std::optional<ProcessesWait> processes_wait(const TracedSide& side) {
    int64_t wait_ms = 0, ran_ms = 0;
    size_t known = 0;
    for (const auto& p : side.phase.processes) {
        if (!p.cpu_wait_ms) continue;  // not kept, or never read (it ended as it was found)
        ++known;
        wait_ms += *p.cpu_wait_ms;
        ran_ms += p.cpu_ms;
    }
    if (known == 0 || wait_ms + ran_ms <= 0) return std::nullopt;
    const double share = double(wait_ms) / double(wait_ms + ran_ms);
    const std::string& node = side.trace->node;
    return ProcessesWait{
        fmt::format("the threads of the test's process{} waited {:.2f} s in all for a CPU, {} of "
                    "the time they were ready to run",
                    known > 1 ? "es" : "", double(wait_ms) / 1000, format_pct(share, 0)),
        {{node + ".cpu_wait_ms", wait_ms}, {node + ".cpu_wait_pct", rounded(100 * share, 1)}}};
}

std::optional<SaturatedCpu> saturated_cpu(const TracedSide& side, double test_s) {
    auto s = saturated_cpu_of(side, test_s);
    if (s) say_other_work(side, *s, cpu_window_s(side, test_s));
    return s;
}

std::optional<SaturatedCpu> saturated_tool_cpu(const TracedSide& side, double test_s) {
    const CpuTime* tools = tool_cpu(side.phase.cpus);
    if (!tools) return std::nullopt;
    const double window = cpu_window_s(side, test_s);
    const double busy = busy_of(*tools, window);
    if (busy < 0.95) return std::nullopt;
    const std::string& node = side.trace->node;
    SaturatedCpu s{node,
                   fmt::format("{}: CPU {}, where its process ran, busy {} of the {:.1f} s test",
                               node, tools->cpu, format_pct(busy, 0), window),
                   busy,
                   {},
                   {},
                   tools->cpu};
    add_core_account(s, side, *tools, window);
    return s;
}

std::optional<SaturatedCpu> sending_core(const TracedSide& side, double test_s) {
    auto cpu = saturated_cpu(side, test_s);
    if (!cpu || !cpu->by_test()) return std::nullopt;
    if (cpu->cpu < 0) return cpu;
    const auto& cpus = side.phase.cpus;
    const bool accounted =
        std::any_of(cpus.begin(), cpus.end(), [](const CpuTime& c) { return c.account; });
    const CpuTime* tools = tool_cpu(cpus);
    if (accounted && tools && tools->cpu == cpu->cpu) return cpu;
    return std::nullopt;
}

std::string cores_to_measure(bool probed, bool accounted, const std::string& where) {
    if (accounted) return {};
    if (probed)
        return fmt::format(
            "each core's time {} by what took it (run again without --no-cpu-account and with "
            "the probes at a tier that traces: they then account the tool, NET_RX, NET_TX and the "
            "NIC's IRQs per core), ",
            where);
    return fmt::format("CPU and softirq per core {} during the test (mpstat -P ALL 1), ", where);
}

void add_saturated_cpu(Finding& f, const SaturatedCpu& cpu) {
    f.evidence.emplace_back(cpu.node + std::string(kCpuBusyPctKey),
                            rounded(100 * cpu.busy_fraction, 1));
    for (const auto& e : cpu.evidence) f.evidence.push_back(e);
    if (!cpu.next_step.empty()) f.next_step = cpu.next_step;
}

std::optional<std::string> busiest_cpu_text(const TracedSide& side, double test_s) {
    const auto& cpus = side.phase.cpus;
    if (cpus.empty()) return std::nullopt;
    const double window = cpu_window_s(side, test_s);
    const auto top = std::max_element(cpus.begin(), cpus.end(), [&](const auto& a, const auto& b) {
        return busy_of(a, window) < busy_of(b, window);
    });
    return fmt::format("{}'s busiest CPU, {}, was busy {} of the test ({}{})", side.trace->node,
                       top->cpu, format_pct(busy_of(*top, window), 0), softirq_share(*top),
                       niced_share(*top, window));
}

namespace {

// Watched for less than this, a process's shares say nothing (a client seen once as it ended).
constexpr int64_t kWatchedEnoughMs = 200;
// Throttled in this share of its periods and for this share of the time watched: the cgroup's
// CPU limit held the process back (a quota touched once in a while does not).
constexpr double kThrottledPeriodShare = 0.2;
constexpr double kThrottledTimeShare = 0.1;

bool throttled(const ProcessCpu& p) {
    return p.periods > 0 && p.throttled_periods >= 2 &&
           double(p.throttled_periods) >= kThrottledPeriodShare * double(p.periods) &&
           double(p.throttled_ms) >= kThrottledTimeShare * double(p.watched_ms);
}

std::string cores_text(double cores) {
    return cores >= 1 ? fmt::format("{:.3g} cores", cores)
                      : fmt::format("{} of a core", format_pct(cores, cores < 0.1 ? 1 : 0));
}

std::string process_name(const std::string& node, const ProcessCpu& p) {
    return fmt::format("{}'s {} (pid {})", node, p.comm, p.pid);
}

}  // namespace

std::optional<StarvedTool> starved_tool(const TracedSide& side) {
    const ProcessCpu* worst = nullptr;
    for (const auto& p : side.phase.processes)
        if (p.watched_ms >= kWatchedEnoughMs && throttled(p) &&
            (!worst || p.throttled_ms > worst->throttled_ms))
            worst = &p;
    if (!worst) return std::nullopt;
    const ProcessCpu& p = *worst;
    const std::string& node = side.trace->node;
    StarvedTool s{node, "", p.cgroup, {}};
    // throttled_ms sums the time over the CPUs the cgroup's tasks were held back on.
    s.text = fmt::format(
        "{} was held back by the CPU limit of its cgroup {}{}: throttled in {} of {} "
        "enforcement periods ({:.2f} s held back, summed over CPUs) over the {:.1f} s it was "
        "watched, so it ran only {} of a core",
        process_name(node, p), p.cgroup,
        p.quota_cores ? " (" + cores_text(*p.quota_cores) + ")" : std::string(),
        p.throttled_periods, p.periods, double(p.throttled_ms) / 1000, double(p.watched_ms) / 1000,
        format_pct(p.cpu_share(), p.cpu_share() < 0.1 ? 1 : 0));
    s.evidence = {{node + ".throttled_periods", p.throttled_periods},
                  {node + ".periods", p.periods},
                  {node + std::string(kThrottledMsKey), p.throttled_ms},
                  {node + ".tool_cpu_pct", rounded(100 * p.cpu_share(), 1)}};
    if (p.quota_cores) s.evidence.emplace_back(node + ".cpu_quota_cores", *p.quota_cores);
    return s;
}

std::string lift_limit_step(const StarvedTool& tool) {
    return fmt::format(
        "Raise or lift the CPU limit of cgroup {} on {} (cpu.max, or cpu.cfs_quota_us under "
        "cgroup v1), or run the tool outside it; then run again.",
        tool.cgroup, tool.node);
}

namespace {

// What the test's processes on a traced node used ("node1-1's iperf3 (pid 812) ran 12 % of a
// core (no CPU limit on its cgroup)"), and whether a cgroup's limit held one back at all: a tool
// throttled in any period, if too little for starved_tool to name it, is not ruled out.
struct ToolProcesses {
    std::vector<std::string> parts;
    bool held_back = false;
};

void add_tool_processes(const TracedSide& side, ToolProcesses& out) {
    for (const auto& p : side.phase.processes) {
        if (p.watched_ms < kWatchedEnoughMs) continue;
        // Where the probe could not read the process's cgroup (no cgroupfs mounted where it
        // runs), nothing is said of a limit either way.
        std::string limit = p.cgroup.empty() ? std::string("its cgroup not readable there")
                            : p.quota_cores
                                ? fmt::format("its cgroup's limit of {} did not throttle it",
                                              cores_text(*p.quota_cores))
                                : std::string("no CPU limit on its cgroup");
        if (p.quota_cores && p.throttled_periods > 0) {
            out.held_back = true;
            limit = fmt::format(
                "its cgroup's limit of {} throttled it in {} of {} periods, {:.2f} s held back "
                "(summed over CPUs) in the {:.1f} s it was watched: too little to say it set the "
                "rate, but the tool did wait for its CPU",
                cores_text(*p.quota_cores), p.throttled_periods, p.periods,
                double(p.throttled_ms) / 1000, double(p.watched_ms) / 1000);
        }
        out.parts.push_back(fmt::format("{} ran {} of a core ({})",
                                        process_name(side.trace->node, p),
                                        format_pct(p.cpu_share(), 0), limit));
    }
}

}  // namespace

std::vector<std::string> ruled_out(const TestEvidence& v, const PathLoads& loads) {
    std::vector<std::string> out;
    const double capacity = v.model_bps();
    // The receiving NIC is named too only when it saw other traffic the sending one did not.
    if (capacity > 0)
        for (const auto* n : {&loads.data_out, &loads.data_in})
            if (*n && (n == &loads.data_out || !loads.data_out ||
                       (*n)->other_bps >= capacity * kOtherTrafficFraction))
                out.push_back(fmt::format(
                    "the link: {}'s {} {} {} on the wire ({} of {}; other traffic {}), not full",
                    (*n)->node, (*n)->iface, (*n)->direction, format_rate((*n)->total_bps()),
                    format_pct((*n)->total_bps() / capacity), format_link_rate(capacity),
                    format_rate((*n)->other_bps)));
    // A standing backlog is not ruled out: the packets waited at the sender's own egress, so
    // what drains it (its root qdisc, or the NIC) went slower than the sender offered.
    if (loads.data_queue)
        out.push_back(loads.data_queue->share() < kStandingQueueShare
                          ? "the sender's queue: " + loads.data_queue->text()
                          : std::string(kNotRuledOut) +
                                "the sender's own queue: " + loads.data_queue->text() +
                                ", a standing backlog: what drains it (its root qdisc or the "
                                "NIC) ran slower than the sender offered");
    if (v.test.transport == Transport::tcp && !v.test.bidir && loads.reverse_out) {
        // The ACKs' own queue, read as the data's is: a standing backlog there means what drains
        // the receiver's egress ran slower than the ACKs came, and that is not ruled out.
        const auto& acks = loads.reverse_queue;
        const bool standing = acks && acks->share() >= kStandingQueueShare;
        std::string line = fmt::format(
            "{}the reverse path: {} dropped none of the test's ACKs{}",
            standing ? kNotRuledOut : "", loads.reverse_out->node,
            loads.reverse_capacity_bps ? fmt::format(" and its {} shaper ran at {} of its rate",
                                                     format_link_rate(*loads.reverse_capacity_bps),
                                                     format_pct(loads.reverse_out->total_bps() /
                                                                *loads.reverse_capacity_bps))
                                       : ", and no shaper sits on its egress");
        if (acks)
            line += standing ? "; but its queue held the ACKs back: " + acks->text() +
                                   ", a standing backlog on the way back"
                             : "; its queue: " + acks->text();
        out.push_back(std::move(line));
    }
    // A CPU saturated with other work than the test's is said as that: one the test's process
    // had room beside is ruled out; otherwise not, since that work may have kept the test
    // waiting for a CPU (each says how long its processes waited, where the trace has it).
    std::vector<std::string> cpus, other_work;
    for (const auto* side : {&v.traces.sender, &v.traces.receiver}) {
        if (!*side) continue;
        const auto sat = saturated_cpu(**side, v.test.duration_s);
        if (sat && sat->other_work_ruled_out)
            cpus.push_back(sat->other_work);
        else if (sat && !sat->by_test())
            other_work.push_back(sat->other_work + (!sat->wait_said()
                                                        ? "; whether it kept the test waiting for "
                                                          "a CPU was not measured"
                                                        : ""));
        else if (auto text = busiest_cpu_text(**side, v.test.duration_s))
            cpus.push_back(std::move(*text));
    }
    if (!cpus.empty()) out.push_back(fmt::format("a saturated CPU: {}", fmt::join(cpus, ", ")));
    if (!other_work.empty())
        out.push_back(fmt::format("{}CPUs saturated with other work than the test's: {}",
                                  kNotRuledOut, fmt::join(other_work, "; ")));
    ToolProcesses tools;
    for (const auto* side : {&v.traces.sender, &v.traces.receiver})
        if (*side) add_tool_processes(**side, tools);
    if (!tools.parts.empty())
        out.push_back(fmt::format("{}a throttled tool: {}", tools.held_back ? kNotRuledOut : "",
                                  fmt::join(tools.parts, "; ")));
    return out;
}

std::optional<TcpLimit> tcp_limit(const TestEvidence& v) {
    if (v.test.transport != Transport::tcp || !v.traces.sender) return std::nullopt;
    const auto& account = v.traces.sender->phase.tcp;
    if (!account || !account->sender() || account->busy_us <= 0) return std::nullopt;
    TcpLimit l;
    l.node = v.traces.sender->trace->node;
    l.busy_s = double(account->busy_us) / 1e6;
    l.rwnd_share = double(account->rwnd_limited_us) / double(account->busy_us);
    l.sndbuf_share = double(account->sndbuf_limited_us) / double(account->busy_us);
    l.text = fmt::format(
        "{}'s TCP had data to send for {:.1f} s: the receiver's window held it {} of that time, "
        "its send buffer {} (the rest, its congestion window or the path)",
        l.node, l.busy_s, format_pct(l.rwnd_share, 0), format_pct(l.sndbuf_share, 0));
    l.evidence = {{l.node + ".tcp_busy_ms", account->busy_us / 1000},
                  {l.node + ".tcp_rwnd_limited_ms", account->rwnd_limited_us / 1000},
                  {l.node + ".tcp_sndbuf_limited_ms", account->sndbuf_limited_us / 1000}};
    return l;
}

std::optional<PacingCap> pacing_cap(const TestEvidence& v) {
    if (v.test.transport != Transport::tcp || !v.traces.sender) return std::nullopt;
    const auto& account = v.traces.sender->phase.tcp;
    const auto measured = v.test.received_bps ? v.test.received_bps : v.test.sent_bps;
    if (!account || !account->sender() || account->max_pacing_rate_bps <= 0 || !measured)
        return std::nullopt;
    PacingCap c;
    c.node = v.traces.sender->trace->node;
    c.cap_bps = double(account->max_pacing_rate_bps);
    c.streams = std::max(1, v.test.streams);
    const double allowed = c.cap_bps * c.streams;
    // Above the caps the test was not held by them (another stream's socket had none).
    if (*measured < allowed * kPacedShare || *measured > allowed * (2 - kPacedShare))
        return std::nullopt;
    c.text = fmt::format(
        "{}'s TCP socket{} capped at {} {}by its application (SO_MAX_PACING_RATE, what iperf3's "
        "--fq-rate sets), and the kernel paced {} payload to it: {} moved {} of the {} the "
        "{}",
        c.node, c.streams > 1 ? "s were each" : " was", format_rate(c.cap_bps),
        c.streams > 1 ? fmt::format("({} streams) ", c.streams) : "",
        c.streams > 1 ? "each socket's" : "its", v.test.label, format_pct(*measured / allowed),
        format_rate(allowed), c.streams > 1 ? "caps allow" : "cap allows");
    c.evidence = {{c.node + ".tcp_max_pacing_rate_mbps", rounded(c.cap_bps / 1e6, 3)},
                  {"streams", c.streams},
                  {"measured_mbps", rounded(*measured / 1e6, 2)}};
    return c;
}

std::optional<UnseenQueue> unseen_queue(const TestEvidence& v, const PathLoads& loads) {
    const auto& t = v.test;
    if (t.transport != Transport::tcp || !t.rtt_mean_us || !loads.idle_rtt_ms ||
        *loads.idle_rtt_ms <= 0)
        return std::nullopt;
    const double loaded_ms = *t.rtt_mean_us / 1e3;
    if (loaded_ms < *loads.idle_rtt_ms * kQueuedRttFactor ||
        loaded_ms - *loads.idle_rtt_ms < kQueuedRttMinMs)
        return std::nullopt;
    // The nodes' own egress queues: full when their NIC carried 90 % of its shaper's rate, or
    // when the probe's samples found a standing backlog in them.
    const auto full = [](const std::optional<NicLoad>& n, std::optional<double> rate,
                         const std::optional<QueueBacklog>& queue) {
        return (n && rate && n->total_bps() >= *rate * kFullReverseFraction) ||
               (queue && queue->share() >= kStandingQueueShare);
    };
    std::optional<double> data_rate;
    if (v.traces.sender && v.traces.sender->trace->link.qdisc_rate_bps)
        data_rate = double(*v.traces.sender->trace->link.qdisc_rate_bps);
    if (full(loads.data_out, data_rate, loads.data_queue) ||
        full(loads.reverse_out, loads.reverse_capacity_bps, loads.reverse_queue))
        return std::nullopt;
    std::vector<std::string> sampled;
    for (const auto* queue : {&loads.data_queue, &loads.reverse_queue})
        if (*queue) sampled.push_back((*queue)->text());
    UnseenQueue q;
    q.text = fmt::format(
        "{}a queue no probe sees: the round trip under load was {:.2f} ms against "
        "{:.3f} ms idle (ping), so packets waited somewhere on it, and neither node's own egress "
        "queue was full{}; a hop between the NICs holds such a queue, on the way out or on the "
        "way back (its ACKs), where neither node's counters reach",
        kNotRuledOut, loaded_ms, *loads.idle_rtt_ms,
        sampled.empty() ? "" : fmt::format(" — {} —", fmt::join(sampled, ", ")));
    q.evidence = {{"rtt_under_load_ms", rounded(loaded_ms, 3)},
                  {"idle_rtt_ms", rounded(*loads.idle_rtt_ms, 3)}};
    // Ping's echoes beside the test, stamped on both nodes, measure the time spent between the
    // NICs itself: where most of their growth was there, the queue is placed by its own numbers.
    // Only where both nodes' queues are split from the path (the driver handoff: full tiers),
    // else the path's time holds theirs too.
    if (const auto g = rtt_growth(v)) {
        const auto path = g->stage_growth_us(RttStage::path);
        const bool split =
            g->loaded.stage(RttStage::pinger_queue) && g->loaded.stage(RttStage::responder_queue);
        if (split && path && g->growth_us() > 0 && *path >= g->growth_us() * 0.5) {
            q.text += fmt::format(
                " — and ping's echoes beside the test, stamped on both nodes, spent {:.2f} ms "
                "beyond both NICs against {:.3f} ms idle ({} of their round trip's growth): the "
                "queue is between the NICs (or a receiving NIC's ring before its ingress hook, "
                "which the stamps count there too)",
                *g->loaded.stage(RttStage::path) / 1000, *g->idle.stage(RttStage::path) / 1000,
                format_pct(std::min(1.0, *path / g->growth_us()), 0));
            q.evidence.emplace_back("echo_path_ms",
                                    rounded(*g->loaded.stage(RttStage::path) / 1000, 3));
            q.evidence.emplace_back("idle_echo_path_ms",
                                    rounded(*g->idle.stage(RttStage::path) / 1000, 3));
        }
    }
    for (const auto* queue : {&loads.data_queue, &loads.reverse_queue})
        if (*queue)
            q.evidence.emplace_back((*queue)->node + ".queue_nonempty_samples",
                                    fmt::format("{} of {}", (*queue)->nonempty, (*queue)->samples));
    return q;
}

std::optional<CarrierLost> carrier_lost(const TestEvidence& v) {
    std::vector<std::string> where;
    CarrierLost lost;
    for (const auto* side : {&v.traces.sender, &v.traces.receiver}) {
        if (!*side) continue;
        const int64_t down = carrier_down_count(**side);
        if (down <= 0) continue;
        const std::string& node = (*side)->trace->node;
        where.push_back(fmt::format("{}'s {} {} time{}", node, (*side)->trace->iface, down,
                                    down == 1 ? "" : "s"));
        lost.evidence.emplace_back(node + ".carrier_down_count", down);
    }
    if (where.empty()) return std::nullopt;
    lost.where = fmt::format("{}", fmt::join(where, " and "));
    return lost;
}

namespace {

// A data NIC that lost its carrier in the test's phase: an outage, named from the kernel's own
// count beside the test's verdict (the drops it caused are read as the link's in the ledger;
// a test held below its ceiling by it says so in its verdict, rules_throughput.cpp).
void link_went_down(const TestEvidence& v, std::vector<Finding>& out) {
    const auto lost = carrier_lost(v);
    if (!lost) return;
    Finding f = make_finding("LINK_WENT_DOWN", v.test.label);
    f.title =
        fmt::format("The data link went down during the test: carrier lost on {}", lost->where);
    f.detail = fmt::format(
        "The kernel counted the carrier lost on {} over this test's phase. While a link is down "
        "nothing crosses it: what the sender handed its NIC then was dropped (DEV_READY, or by "
        "the queue that stands in while the device has no carrier) and TCP waited for its "
        "retransmission timer.",
        lost->where);
    // How long the link was down is not counted: whether the outage set the test's rate is the
    // verdict's to say, from the loss the ledger places and the loads on the link.
    f.evidence = lost->evidence;
    f.next_step =
        "Find why the link went down: ip -s link (carrier_changes) and the kernel log (link "
        "down / up) on both nodes, the cable or the switch port, what else configured the NIC; "
        "then run again.";
    out.push_back(std::move(f));
}

// A CPU of a traced node the hypervisor ran something else on for this share of the test's time
// and at least this long (steal in /proc/stat), and a pause this long in what left the sender's
// NIC: said beside the verdict of a test short of its ceiling.
constexpr double kStolenShare = 0.01;
constexpr int64_t kStolenMs = 20;
constexpr int64_t kPauseMs = 10;

// The least and the most time the hypervisor took from one of a node's CPUs in the phase.
std::pair<int64_t, int64_t> steal_range(const TracedSide& side) {
    const auto& cpus = side.phase.cpus;
    if (cpus.empty()) return {0, 0};
    int64_t least = cpus.front().steal_ms, most = 0;
    for (const auto& c : cpus) {
        least = std::min(least, c.steal_ms);
        most = std::max(most, c.steal_ms);
    }
    return {least, most};
}

// "100 ms of each of node2-2's 2 CPUs", with the steal's evidence, where it reached the bounds.
std::optional<std::string> stolen_text(const TracedSide& side, double test_s, Evidence& evidence) {
    const auto& cpus = side.phase.cpus;
    const auto [least, most] = steal_range(side);
    if (most < kStolenMs || double(most) < cpu_window_s(side, test_s) * 1000 * kStolenShare)
        return std::nullopt;
    const std::string& node = side.trace->node;
    evidence.emplace_back(node + ".steal_ms_most", most);
    evidence.emplace_back(node + ".steal_ms_least", least);
    if (cpus.size() == 1) return fmt::format("{} ms of {}'s CPU", most, node);
    return fmt::format(
        "{} ms of each of {}'s {} CPUs",
        least == most ? fmt::format("{}", most) : fmt::format("{} to {}", least, most), node,
        cpus.size());
}

// A TCP retransmission timeout is at least this long (the kernel's TCP_RTO_MIN).
constexpr int64_t kRtoMinMs = 200;

// What stops a flow for `pause_ms` by itself in the phase, as the nodes' kernels counted it: a
// carrier either NIC lost, or for TCP a retransmission timeout on the sender (TcpExtTCPTimeouts,
// host-wide: at least kRtoMinMs, so never the cause of a shorter pause). Empty when neither.
std::optional<std::string> pause_of_its_own(const TestEvidence& v, int64_t pause_ms) {
    for (const auto* side : {&v.traces.sender, &v.traces.receiver})
        if (*side && carrier_down_count(**side) > 0)
            return fmt::format("{}'s data NIC lost its carrier in the phase", (*side)->trace->node);
    if (v.traces.sender && !is_udp(v.test) && pause_ms >= kRtoMinMs) {
        const auto& nstat = v.traces.sender->phase.nstat;
        const auto it = nstat.find("TcpExtTCPTimeouts");
        if (it != nstat.end() && it->second > 0)
            return fmt::format(
                "{}'s kernel counted {} TCP retransmission timeout{} in the phase (on any of its "
                "connections)",
                v.traces.sender->trace->node, it->second, it->second == 1 ? "" : "s");
    }
    return std::nullopt;
}

// The hypervisor's own count of the time it gave a node's CPUs to something else: a guest whose
// CPUs are taken runs nothing, not the tool, not its NIC's queue, not the timers that drain it.
// Said beside the verdict of a test short of its ceiling, with the longest pause of what left
// the sender's NIC (1 ms bins) where the steal could hold it: no longer than the least taken from
// any of the sender's CPUs, which is how long the whole guest may have stood still. A longer
// pause (a link that went down, a stalled flow), or one beside something the kernels counted
// that could stop the flow that long by itself (a carrier lost, a TCP retransmission timeout on
// any of the sender's connections), is not set beside the steal and is left to the verdict.
// When in the phase the time was taken is not counted (steal is read at the phase's ends), so
// even a pause the steal could hold is set beside it, not placed in it.
void cpus_stolen(const TestEvidence& v, std::vector<Finding>& out) {
    if (!short_of_ceiling(v)) return;
    Evidence evidence;
    std::vector<std::string> where;
    for (const auto* side : {&v.traces.sender, &v.traces.receiver})
        if (*side)
            if (auto text = stolen_text(**side, v.test.duration_s, evidence))
                where.push_back(std::move(*text));
    if (where.empty()) return;
    const double short_by = 1 - *v.measured_bps / v.ceiling->goodput_bps;
    evidence.emplace_back("short_of_ceiling_pct", rounded(100 * short_by, 1));
    Finding f = make_finding("CPU_STOLEN", v.test.label);
    f.title =
        fmt::format("The hypervisor took {} during the test (steal)", fmt::join(where, " and "));
    f.detail = fmt::format(
        "The kernel counted {} as stolen over this test's phase: time the hypervisor ran "
        "something else on them, in which this guest ran nothing.",
        fmt::join(where, " and "));
    const TracedSide* sender = v.traces.sender ? &*v.traces.sender : nullptr;
    if (sender && sender->phase.bins && v.test.duration_s > 0) {
        const PhaseBins& bins = *sender->phase.bins;
        const Pause pause = longest_pause(bins.tx_wire_bytes, bins.bin_ms);
        // One bin of slack: a pause's edges are the bins'.
        const int64_t stood_still_ms = steal_range(*sender).first + bins.bin_ms;
        const double share = double(pause.ms) / (v.test.duration_s * 1000);
        const bool steal_could_hold = pause.ms >= kPauseMs && pause.ms <= stood_still_ms;
        const auto own = steal_could_hold ? pause_of_its_own(v, pause.ms) : std::nullopt;
        if (own) {
            f.detail += fmt::format(
                " What left {}'s NIC stopped for {} ms at once, but {}, which could stop the "
                "flow that long by itself: the pause is not set beside the steal, nor placed in "
                "that.",
                sender->trace->node, pause.ms, *own);
        } else if (steal_could_hold) {
            f.detail += fmt::format(
                " What left {}'s NIC stopped for {} ms at once, {:.3f} s into the phase (1 ms "
                "bins), no longer than the least taken from any of its CPUs: {} of the {:.1f} s "
                "test, which fell {} short of its ceiling{}. When in the phase the time was taken "
                "is not counted, so the pause is set beside it, not placed in it.",
                sender->trace->node, pause.ms, double(pause.at_ms) / 1000, format_pct(share, 1),
                v.test.duration_s, format_pct(short_by, 1),
                share >= short_by / 2 ? ": most of what it fell short by" : "");
            evidence.emplace_back("longest_pause_ms", pause.ms);
            evidence.emplace_back("pause_at_ms", pause.at_ms);
        }
    }
    f.evidence = std::move(evidence);
    f.next_step =
        "Run again on a host whose virtual CPUs are not shared with other guests (dedicated or "
        "pinned cores); the st column of top or vmstat on the host shows steal while a test "
        "runs.";
    out.push_back(std::move(f));
}

}  // namespace

void bottleneck(const TestEvidence& v, std::vector<Finding>& out) {
    link_went_down(v, out);
    cpus_stolen(v, out);
    if (!short_of_ceiling(v) || (!v.traces.sender && !v.traces.receiver)) return;
    const PathLoads loads = path_loads(v);
    link_shared(v, loads, out);
    reverse_path(v, loads, out);
}

}  // namespace np::rules
