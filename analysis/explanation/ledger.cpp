#include "analysis/explanation/ledger.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>

#include "analysis/explanation/format.hpp"
#include "analysis/explanation/model.hpp"
#include "analysis/readers/rate.hpp"
#include "common/errors.hpp"
#include "common/json_field.hpp"

namespace np {
namespace {

bool any_of(std::string_view r, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), r) != names.end();
}

// Drops in the queue between the egress hook and the driver (on the data's sender; on the
// receiver they are its own replies).
bool is_queue_reason(std::string_view r) {
    return r.starts_with("QDISC_") || r.starts_with("FQ_") ||
           any_of(r, {"TC_EGRESS", "TXQUEUE_FULL", "CAKE_FLOOD"});
}

// Drops on the way out before the egress hook: routing, neighbour resolution, egress filters.
bool is_output_reason(std::string_view r) {
    return r.starts_with("NEIGH_") ||
           any_of(r, {"IP_OUTNOROUTES", "BPF_CGROUP_EGRESS", "IPV6DISABLED", "PKT_TOO_BIG"});
}

// At the receiver before its ingress hook runs: the NIC's ring, the backlog, XDP.
bool is_nic_reason(std::string_view r) {
    return any_of(r, {"CPU_BACKLOG", "FULL_RING", "DEV_READY", "DEV_HDR", "XDP", "PKT_TOO_BIG",
                      "NOMEM", "DUP_FRAG"});
}

bool is_filter_reason(std::string_view r) {
    return (r.starts_with("TC_") && r != "TC_EGRESS") ||
           any_of(r, {"NETFILTER_DROP", "BPF_CGROUP_INGRESS"});
}

bool is_socket_reason(std::string_view r) {
    return any_of(r, {"SOCKET_RCVBUFF", "SOCKET_BACKLOG", "PROTO_MEM", "SOCKET_FILTER", "UDP_CSUM",
                      "NO_SOCKET", "SOCKET_CLOSE", "QUEUE_PURGE", "SOCKET_RCV_SHUTDOWN"});
}

// A segment the receiver already had: a retransmission that arrived as a duplicate.
bool is_duplicate_reason(std::string_view r) {
    return any_of(r, {"TCP_OLD_DATA", "TCP_OLD_SEQUENCE", "TCP_OFOMERGE", "TCP_RFC7323_PAWS"});
}

bool is_ip_reason(std::string_view r) {
    return r.starts_with("IP_") || r.starts_with("IPV6") || r.starts_with("XFRM_") ||
           r.starts_with("FRAG_") ||
           any_of(r, {"OTHERHOST", "PKT_TOO_SMALL", "UNHANDLED_PROTO", "IP_NOPROTO"});
}

// Drops of the flow for a socket gone or closing (is_housekeeping_reason) that cost the test
// nothing. A ledger is built only for a test the tool measured to its end, so the receiving
// connection lived through it: TCP's segments dropped that way arrived after it closed, and TCP
// needed none of them for what was measured, however many were in flight then (with a choked
// ACK path a whole window of them: 107 in one run, at a listener as TCP_FLAGS). A UDP datagram
// that finds the socket gone may be one the tool counted as lost: beyond this many, they are
// loss.
bool costs_nothing(std::string_view label, uint64_t n, std::string_view proto, uint64_t arrived) {
    if (!is_housekeeping_reason(label)) return false;
    return proto == "tcp" || n <= std::max<uint64_t>(64, arrived / 100);
}

void add_traffic(DirectionTraffic& a, const DirectionTraffic& b) {
    a.total += b.total;
    for (const auto& [k, v] : b.by_protocol) a.by_protocol[k] += v;
    for (const auto& [k, v] : b.by_flow) a.by_flow[k] += v;
}

PhaseTrace phase_of(const Trace& t, const std::string& name) {
    if (const PhaseTrace* p = t.find_phase(name)) return *p;
    return merged_phases(t);
}

std::string transport_key(Transport t) {
    return t == Transport::tcp ? "tcp" : "udp";
}

// The receiving NIC's own drop counters that rose during the phase (not per flow).
std::vector<std::pair<std::string, uint64_t>> nic_counters(const PhaseTrace& p) {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const auto& [k, v] : p.ethtool_stats)
        if (v > 0 && (k.starts_with("rx") || k.find("rx_") != std::string::npos))
            out.emplace_back("ethtool " + k, static_cast<uint64_t>(v));
    if (p.softnet_dropped > 0)
        out.emplace_back("softnet_stat dropped", static_cast<uint64_t>(p.softnet_dropped));
    return out;
}

int64_t beyond_slack(int64_t difference, uint64_t scale) {
    const auto slack = static_cast<int64_t>(ledger_slack(scale));
    if (difference > slack || difference < -slack) return difference;
    return 0;
}

uint64_t sum_drops(const std::vector<LedgerDrop>& drops, bool only_data_loss) {
    uint64_t n = 0;
    for (const auto& d : drops)
        if (!only_data_loss || (is_data_loss(d.stage) && !d.housekeeping)) n += d.packets;
    return n;
}

}  // namespace

const char* to_string(Stage s) {
    switch (s) {
        case Stage::sender_stack:
            return "the sender's stack, before its egress hook";
        case Stage::sender_queue:
            return "the sender's queue (qdisc)";
        case Stage::wire:
            return "the wire, between the NICs";
        case Stage::receiver_nic:
            return "the receiver's NIC or input backlog";
        case Stage::receiver_filter:
            return "the receiver's filters (tc ingress, netfilter)";
        case Stage::receiver_ip:
            return "the receiver's IP layer";
        case Stage::receiver_socket:
            return "the receiving socket";
        case Stage::receiver_tcp:
            return "the receiver's TCP";
        case Stage::duplicate:
            return "duplicates the receiver discarded";
        case Stage::reverse:
            return "the other direction (ACKs, replies)";
        case Stage::unknown:
            return "an unknown stage (no drop reason)";
    }
    return "?";
}

std::string_view key_of(Stage s) {
    static constexpr std::array<std::string_view, 11> keys = {
        "sender_stack", "sender_queue",    "wire",         "receiver_nic", "receiver_filter",
        "receiver_ip",  "receiver_socket", "receiver_tcp", "duplicate",    "reverse",
        "unknown"};
    return keys[static_cast<size_t>(s)];
}

bool is_data_loss(Stage s) {
    return s != Stage::duplicate && s != Stage::reverse;
}

Stage stage_of(std::string_view r, bool on_sender) {
    if (r == "NOT_SPECIFIED") return Stage::unknown;
    if (on_sender) {
        // DEV_READY on the way out is __dev_queue_xmit finding the device not up: the data's.
        if (is_queue_reason(r) || r == "DEV_READY") return Stage::sender_queue;
        if (is_output_reason(r) || r == "NETFILTER_DROP") return Stage::sender_stack;
        // Everything else the sender drops of the flow came in: ACKs, replies.
        return Stage::reverse;
    }
    if (is_queue_reason(r) || is_output_reason(r)) return Stage::reverse;  // its own replies
    if (is_nic_reason(r)) return Stage::receiver_nic;
    if (is_filter_reason(r)) return Stage::receiver_filter;
    if (is_duplicate_reason(r)) return Stage::duplicate;
    if (is_socket_reason(r)) return Stage::receiver_socket;
    if (r.starts_with("TCP_")) return Stage::receiver_tcp;
    if (is_ip_reason(r)) return Stage::receiver_ip;
    return Stage::unknown;
}

namespace {

bool starts_with_any(std::string_view f, std::initializer_list<std::string_view> prefixes) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](std::string_view p) { return f.starts_with(p); });
}

// Functions of the transmit path after the egress hook: the qdisc, the device queue, the driver
// handoff (kfree_skb_list frees what a qdisc dropped).
bool is_queue_function(std::string_view f) {
    return starts_with_any(f, {"__dev_queue_xmit",
                               "__dev_xmit_skb",
                               "dev_qdisc_enqueue",
                               "qdisc_",
                               "__qdisc_",
                               "sch_direct_xmit",
                               "dev_hard_start_xmit",
                               "kfree_skb_list",
                               "rtnl_kfree_skbs",  // a qdisc's queue purged (is_queue_purge)
                               "__rtnl_unlock",    // where rtnl_kfree_skbs' deferred frees run
                               "validate_xmit_skb",
                               "sch_handle_egress",
                               "tbf_",
                               "htb_",
                               "pfifo_",
                               "bfifo_",
                               "fq_codel_",
                               "fq_",
                               "netem_",
                               "cake_",
                               "sfq_",
                               "red_",
                               "prio_",
                               "mq_",
                               "tcf_",
                               "tcx_"});
}

// Functions of the output path before the egress hook: routing, neighbour, fragmentation.
bool is_output_function(std::string_view f) {
    return starts_with_any(
        f, {"ip_finish_output", "ip6_finish_output", "__ip_finish_output", "ip_output",
            "ip6_output", "ip_local_out", "__ip_local_out", "ip6_local_out", "neigh_", "__neigh_",
            "ip_do_fragment", "ip_fragment", "ip6_fragment", "ip_route_output", "ip6_route_output",
            "ip_queue_xmit", "__ip_queue_xmit", "ip6_xmit"});
}

}  // namespace

Stage stage_of_drop(std::string_view reason, bool on_sender) {
    constexpr std::string_view freed_in = "freed in ";
    return reason.starts_with(freed_in)
               ? stage_of_function(reason.substr(freed_in.size()), on_sender)
               : stage_of(reason, on_sender);
}

Stage stage_of_function(std::string_view f, bool on_sender) {
    if (on_sender) {
        if (is_queue_function(f)) return Stage::sender_queue;
        if (is_output_function(f) || f.starts_with("nf_hook_slow")) return Stage::sender_stack;
        // The driver of a veth (or another forwarding device) freeing a frame it could not hand
        // to its peer (the peer down, not forwardable): after the transmit tracepoint counted it
        // as leaving the NIC, so lost on the link.
        if (starts_with_any(f, {"veth_xmit", "veth_forward_skb", "__dev_forward_skb",
                                "dev_forward_skb", "____dev_forward_skb"}))
            return Stage::wire;
        // What the sender frees on a receive path or at its socket's close came in: ACKs,
        // replies. Any other function is unknown, placed where a count shows data missing.
        if (stage_of_function(f, false) != Stage::unknown ||
            starts_with_any(f, {"tcp_v4_rcv", "tcp_v6_rcv", "__udp4_lib_rcv", "__udp6_lib_rcv",
                                "__netif_receive_skb", "netif_receive_skb"}))
            return Stage::reverse;
        return Stage::unknown;
    }
    if (is_teardown_function(f)) return Stage::receiver_socket;
    if (is_queue_function(f) || is_output_function(f)) return Stage::reverse;
    if (starts_with_any(f, {"enqueue_to_backlog", "netif_rx", "do_xdp_generic",
                            "netif_receive_generic_xdp", "veth_", "napi_", "gro_", "dev_gro_"}))
        return Stage::receiver_nic;
    if (starts_with_any(f, {"nf_hook_slow", "sch_handle_ingress", "tcf_", "tcx_", "tc_run"}))
        return Stage::receiver_filter;
    if (starts_with_any(f, {"udp_queue_rcv", "__udp_queue_rcv", "udpv6_queue_rcv",
                            "__udpv6_queue_rcv", "sock_queue_rcv", "__sock_queue_rcv", "sk_filter",
                            "tcp_add_backlog", "__sk_receive_skb"}))
        return Stage::receiver_socket;
    if (starts_with_any(
            f, {"tcp_data_queue", "tcp_rcv_established", "tcp_validate_incoming", "tcp_ofo_queue",
                "tcp_prune", "tcp_drop", "tcp_try_rmem", "tcp_v4_do_rcv", "tcp_v6_do_rcv"}))
        return Stage::receiver_tcp;
    if (starts_with_any(f, {"ip_rcv", "ip_local_deliver", "ip_protocol_deliver", "ip6_rcv",
                            "ipv6_rcv", "ip6_input", "ip6_protocol_deliver", "ip_defrag", "ip_frag",
                            "ip6_frag", "ipv6_frag", "ip_route_input", "ip_error", "ip6_pkt_drop"}))
        return Stage::receiver_ip;
    // tcp_v4_rcv, __udp4_lib_rcv, __netif_receive_skb_core (tc ingress, an unhandled protocol,
    // another host's frame), …: several stages' drops.
    return Stage::unknown;
}

bool is_housekeeping_reason(std::string_view r) {
    constexpr std::string_view freed_in = "freed in ";
    if (r.starts_with(freed_in)) return is_teardown_function(r.substr(freed_in.size()));
    return any_of(
        r, {"NO_SOCKET", "TCP_FLAGS", "TCP_CLOSE", "TCP_RESET", "SOCKET_CLOSE", "TCP_ABORT_ON_DATA",
            "QUEUE_PURGE", "TCP_OLD_ACK", "TCP_TOO_OLD_ACK", "SOCKET_RCV_SHUTDOWN"});
}

bool is_teardown_function(std::string_view f) {
    // TCP's out-of-order queue freed whole when its socket is destroyed (seen on the testbed:
    // the segments held behind a link flap's hole when the test ended).
    return f.starts_with("skb_rbtree_purge");
}

bool is_queue_purge(std::string_view label) {
    constexpr std::string_view freed_in = "freed in ";
    return label.starts_with(freed_in) &&
           starts_with_any(label.substr(freed_in.size()), {"rtnl_kfree_skbs", "__rtnl_unlock"});
}

std::string drop_label(const DropReasonCount& d) {
    return d.function.empty() ? d.reason : "freed in " + d.function;
}

uint64_t ledger_slack(uint64_t packets) {
    return std::max<uint64_t>(2, packets / 1000);
}

TrafficCounts flow_counts(const DirectionTraffic& d, std::string_view transport) {
    TrafficCounts c;
    for (const char* p : {"tcp", "udp"}) {
        if (!transport.empty() && transport != p) continue;
        if (auto it = d.by_flow.find(std::string("iperf_") + p); it != d.by_flow.end())
            c += it->second;
    }
    return c;
}

std::vector<std::pair<std::string, uint64_t>> flow_drops(const PhaseTrace& p,
                                                         std::string_view transport) {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const auto& d : p.drops) {
        uint64_t n = 0;
        for (const auto& w : d.where)
            if (w.flow == "iperf" && (transport.empty() || w.protocol == transport)) n += w.packets;
        if (n > 0) out.emplace_back(drop_label(d), n);
    }
    return out;
}

namespace {

// Adds a drop to a list of drops by reason: to the entry of its reason, or as a new one.
void merge_drop(std::vector<DropReasonCount>& into, const DropReasonCount& d) {
    auto it = std::find_if(into.begin(), into.end(), [&](const DropReasonCount& x) {
        return x.reason == d.reason && x.function == d.function;
    });
    if (it == into.end()) {
        into.push_back(d);
        return;
    }
    it->packets += d.packets;
    it->bytes += d.bytes;
    it->skbs += d.skbs;
    it->where.insert(it->where.end(), d.where.begin(), d.where.end());
}

}  // namespace

PhaseTrace stream_phase(const PhaseTrace& p, const StreamTrace& s) {
    PhaseTrace one = p;
    const std::string key = "iperf_" + s.transport;
    one.tx.by_flow[key] = s.tx;
    one.rx.by_flow[key] = s.rx;
    if (one.xmit) one.xmit->by_flow[key] = s.xmit.value_or(TrafficCounts{});
    if (s.transport == "tcp") one.retransmits.segments_by_flow["iperf"] = s.retransmits;
    // The flow's drops of this transport become the stream's; every other drop stays.
    one.drops.clear();
    for (DropReasonCount d : p.drops) {
        std::vector<DropLocation> kept;
        for (const auto& w : d.where) {
            if (w.flow == "iperf" && w.protocol == s.transport) {
                d.packets -= std::min(d.packets, w.packets);
                d.bytes -= std::min(d.bytes, w.bytes);
                d.skbs -= std::min(d.skbs, w.skbs);
            } else {
                kept.push_back(w);
            }
        }
        d.where = std::move(kept);
        if (!d.where.empty()) one.drops.push_back(std::move(d));
    }
    for (const auto& d : s.drops) merge_drop(one.drops, d);
    one.streams = {s};
    return one;
}

namespace {

// Whether a side's phase counts every stream of the flow by itself: its streams of the
// transport sum to the flow at both hooks (a stream the probe's map had no room for would not).
bool counts_every_stream(const PhaseTrace& p, std::string_view transport) {
    if (p.streams.empty())
        return flow_counts(p.tx, transport).packets == 0 &&
               flow_counts(p.rx, transport).packets == 0;
    TrafficCounts tx, rx;
    for (const auto& st : p.streams) {
        if (st.transport != transport) continue;
        tx += st.tx;
        rx += st.rx;
    }
    return tx.packets == flow_counts(p.tx, transport).packets &&
           rx.packets == flow_counts(p.rx, transport).packets;
}

}  // namespace

std::vector<Ledger> stream_ledgers(const ThroughputTest& t, const TestTraces& traces) {
    if (t.per_stream.size() < 2) return {};
    const std::string proto = transport_key(t.transport);
    for (const auto* side : {&traces.sender, &traces.receiver})
        if (*side && !counts_every_stream((*side)->phase, proto)) return {};
    std::vector<Ledger> out;
    for (const auto& s : t.per_stream) {
        TestTraces one = traces;
        for (auto* side : {&one.sender, &one.receiver}) {
            if (!*side) continue;
            const StreamTrace* st =
                (*side)->phase.find_stream(proto, static_cast<uint16_t>(s.port));
            StreamTrace none;  // the stream crossed this NIC not once
            none.transport = proto;
            none.port = static_cast<uint16_t>(s.port);
            if ((*side)->phase.xmit) none.xmit.emplace();
            (*side)->phase = stream_phase((*side)->phase, st ? *st : none);
        }
        Ledger l = build_ledger(stream_test(t, s), one);
        l.stream_port = s.port;
        out.push_back(std::move(l));
    }
    return out;
}

PhaseTrace merged_phases(const Trace& t) {
    PhaseTrace m;
    m.name = "all";
    if (!t.phases.empty()) {
        m.start_ms = t.phases.front().start_ms;
        m.end_ms = t.phases.back().end_ms;
    }
    bool all_xmit = !t.phases.empty();
    for (const auto& p : t.phases) all_xmit = all_xmit && p.xmit.has_value();
    if (all_xmit) m.xmit.emplace();
    for (const auto& p : t.phases) {
        add_traffic(m.tx, p.tx);
        add_traffic(m.rx, p.rx);
        if (all_xmit) add_traffic(*m.xmit, *p.xmit);
        m.retransmits.segments += p.retransmits.segments;
        for (const auto& [k, v] : p.retransmits.segments_by_flow)
            m.retransmits.segments_by_flow[k] += v;
        for (const auto& d : p.drops) merge_drop(m.drops, d);
        for (const auto& st : p.streams) {
            auto it = std::find_if(m.streams.begin(), m.streams.end(), [&](const StreamTrace& x) {
                return x.transport == st.transport && x.port == st.port;
            });
            if (it == m.streams.end()) {
                m.streams.push_back(st);
                if (!all_xmit) m.streams.back().xmit.reset();
                continue;
            }
            it->tx += st.tx;
            it->rx += st.rx;
            if (all_xmit && it->xmit && st.xmit) *it->xmit += *st.xmit;
            it->retransmits += st.retransmits;
            for (const auto& d : st.drops) merge_drop(it->drops, d);
        }
        for (const auto& [k, v] : p.nstat) m.nstat[k] += v;
        for (const auto& [k, v] : p.ethtool_stats) m.ethtool_stats[k] += v;
        for (const auto& [k, v] : p.qdisc_stats)  // the largest of each phase's, else summed
            m.qdisc_stats[k] = k.starts_with("backlog_max_") ? std::max(m.qdisc_stats[k], v)
                                                             : m.qdisc_stats[k] + v;
        m.softnet_dropped += p.softnet_dropped;
    }
    return m;
}

TestTraces traces_for(const ThroughputTest& t, const std::vector<Trace>& traces) {
    TestTraces out;
    const std::string proto = transport_key(t.transport);
    const std::string sender_role = t.reverse ? "server" : "client";
    const std::string receiver_role = t.reverse ? "client" : "server";
    for (const auto& trace : traces) {
        // A test that names its phase is held only against that phase.
        if (!t.phase.empty() && !trace.find_phase(t.phase)) {
            out.unusable.push_back(fmt::format("the trace of {} has no phase {}",
                                               trace.node.empty() ? trace.iface : trace.node,
                                               t.phase));
            continue;
        }
        TracedSide side{&trace, phase_of(trace, t.phase.empty() ? proto : t.phase)};
        // A phase much shorter than the test did not watch it: say so, do not read it as
        // "nothing crossed the NIC".
        if (t.duration_s > 0 && side.phase.duration_ms() < t.duration_s * 1000 / 2) {
            out.unusable.push_back(fmt::format(
                "the trace of {} covers {:.3f} s ({}) of the {:.1f} s test",
                trace.node.empty() ? trace.iface : trace.node, side.phase.duration_ms() / 1000.0,
                side.phase.name == "all" ? "all its phases" : "phase " + side.phase.name,
                t.duration_s));
            continue;
        }
        bool is_sender;
        if (trace.role == sender_role) {
            is_sender = true;
        } else if (trace.role == receiver_role) {
            is_sender = false;
        } else {
            is_sender =
                flow_counts(side.phase.tx, proto).bytes >= flow_counts(side.phase.rx, proto).bytes;
        }
        (is_sender ? out.sender : out.receiver) = std::move(side);
    }
    return out;
}

uint64_t Ledger::lost_in(Stage s) const {
    uint64_t n = 0;
    for (const auto& d : drops)
        if (d.stage == s && !d.housekeeping) n += d.packets;
    return n;
}

uint64_t Ledger::lost() const {
    return sum_drops(drops, true);
}

uint64_t Ledger::duplicates() const {
    return lost_in(Stage::duplicate);
}

uint64_t Ledger::unattributed() const {
    uint64_t n = 0;
    for (const auto& p : points)
        if (p.unattributed > 0) n += static_cast<uint64_t>(p.unattributed);
    return n;
}

namespace {

// The points of every ledger, in path order, and how the one-line summary names them.
constexpr std::string_view kSent = "sent by the application";
constexpr std::string_view kEgress = "passed the sender's egress hook (before its queue)";
constexpr std::string_view kLeft = "left the sender's NIC (after its queue)";
constexpr std::string_view kArrived = "arrived at the receiver's NIC (its ingress hook)";
constexpr std::string_view kDelivered = kDeliveredPoint;
// The most frames one GSO skb can be: 64 KiB (the kernel's GSO limit unless BIG TCP raised it)
// of segments no smaller than IPv4's minimum MSS, 536 bytes.
constexpr uint64_t kMaxFramesPerGsoSkb = (65536 + 535) / 536;

std::string_view short_label(std::string_view label) {
    if (label == kSent) return "sent";
    if (label == kEgress) return "egress hook";
    if (label == kLeft) return "left NIC";
    if (label == kArrived) return "arrived";
    if (label == kDelivered) return "delivered";
    return label;
}

}  // namespace

namespace {

// The drops of the flow a node saw, each placed in its stage.
// What marks a receiver's drops of the flow without a reason or a stage that had no device
// ("NOT_SPECIFIED, no device", "freed in F, no device"; placed_drops).
constexpr std::string_view kFreedAboveNic = ", no device";

uint64_t deviceless_drops(const PhaseTrace& p, std::string_view proto, std::string_view label) {
    uint64_t n = 0;
    for (const auto& d : p.drops)
        if (drop_label(d) == label)
            for (const auto& w : d.where)
                if (w.flow == "iperf" && w.protocol == proto && w.iface.empty()) n += w.packets;
    return n;
}

std::vector<LedgerDrop> placed_drops(const TracedSide& side, bool on_sender,
                                     const std::string& proto) {
    std::vector<LedgerDrop> into;
    const uint64_t arrived = flow_counts(side.phase.rx, proto).wire_packets;
    for (auto [reason, n] : flow_drops(side.phase, proto)) {
        const Stage stage = stage_of_drop(reason, on_sender);
        if (!on_sender && stage == Stage::unknown &&
            (reason == kUnattributedDropReason || reason.starts_with("freed in "))) {
            // The receiver's reasonless frees without a device were made above its NIC: by the
            // socket or TCP (a connection's queues purged at close, skbs of several kilobytes),
            // never a frame the NIC lost.
            const uint64_t above = deviceless_drops(side.phase, proto, reason);
            if (above > 0)
                into.push_back(
                    {side.trace->node, stage, reason + std::string(kFreedAboveNic), above, false});
            n -= above;
            if (n == 0) continue;
        }
        LedgerDrop d{side.trace->node, stage, reason, n, false};
        d.housekeeping = costs_nothing(reason, n, proto, arrived);
        into.push_back(d);
    }
    return into;
}

// Below the tiers that count drops by flow: what the node's own counters say, all traffic's —
// the sender's qdisc drops; the receiver's NIC and, for UDP, its receive-buffer errors.
std::vector<LedgerDrop> counted_drops(const TracedSide& side, bool on_sender,
                                      const std::string& proto) {
    std::vector<LedgerDrop> into;
    const std::string& node = side.trace->node;
    const auto count = [](const std::map<std::string, int64_t>& m, const char* key) {
        const auto it = m.find(key);
        return it != m.end() && it->second > 0 ? static_cast<uint64_t>(it->second) : 0;
    };
    if (on_sender) {
        if (const uint64_t n = count(side.phase.qdisc_stats, "drops"))
            into.push_back({node, Stage::sender_queue,
                            fmt::format("qdisc drops on {} (all traffic)", side.trace->iface), n,
                            false});
        return into;
    }
    for (const auto& [counter, n] : nic_counters(side.phase))
        into.push_back({node, Stage::receiver_nic, counter + " (all traffic)", n, false});
    if (proto == "udp") {
        for (const char* key : {"UdpRcvbufErrors", "Udp6RcvbufErrors"})
            if (const uint64_t n = count(side.phase.nstat, key))
                into.push_back({node, Stage::receiver_socket,
                                fmt::format("{} (all UDP sockets)", key), n, false});
    }
    return into;
}

std::vector<LedgerDrop> of_stages(const std::vector<LedgerDrop>& from,
                                  std::initializer_list<Stage> stages) {
    std::vector<LedgerDrop> out;
    for (const auto& d : from)
        if (std::find(stages.begin(), stages.end(), d.stage) != stages.end()) out.push_back(d);
    return out;
}

// Moves reasonless drops from `from` into `into` as stage `as`, as many as `gap` needs.
void fill(std::vector<LedgerDrop>& from, int64_t& gap, Stage as, std::vector<LedgerDrop>& into) {
    for (auto& d : from) {
        if (gap <= 0) return;
        const uint64_t take = std::min<uint64_t>(d.packets, static_cast<uint64_t>(gap));
        if (take == 0) continue;
        into.push_back({d.node, as, d.reason, take, false});
        d.packets -= take;
        gap -= static_cast<int64_t>(take);
    }
}

// What is left of reasonless drops no gap needed, as stage `as`.
std::vector<LedgerDrop> leftover(const std::vector<LedgerDrop>& from, Stage as) {
    std::vector<LedgerDrop> out;
    for (const auto& d : from)
        if (d.packets > 0) out.push_back({d.node, as, d.reason, d.packets, d.housekeeping});
    return out;
}

// The ledger of one test, point by point from the application's count to what the receiving
// application got (docs/design.md, "The ledger").
class LedgerBuilder {
  public:
    LedgerBuilder(const ThroughputTest& t, const TestTraces& traces)
        : t_(t), traces_(traces), proto_(transport_key(t.transport)) {
        frames_per_datagram_ = udp_frames_per_datagram();
        l_.test = t.label;
        l_.transport = t.transport;
        l_.unit = t.transport == Transport::tcp ? "segments" : "datagrams";
        l_.server_sent = t.reverse;
        l_.tool_bytes = t.received_bytes ? t.received_bytes : t.sent_bytes;
    }

    Ledger build() {
        read_sender();
        read_receiver();
        read_application();
        // Reasonless drops fill the gaps nearest the wire first: the NIC's queue before the
        // sender's stack, the receiver's NIC before its stack.
        LedgerPoint out = left_point();
        LedgerPoint hook = egress_point();
        LedgerPoint in = arrived_point();
        LedgerPoint got = delivered_point();
        LedgerPoint app{std::string(kSent), l_.sender_node, app_sent_, false, {}, 0};
        // Reasonless drops no gap needed: the receiver's stay unplaced (TCP has no application
        // count to hold them against), the sender's were packets coming in.
        for (const auto* from : {&receiver_unknown_, &receiver_unknown_above_nic_})
            for (auto& d : leftover(*from, Stage::unknown)) got.drops.push_back(d);
        for (auto& d : leftover(sender_unknown_, Stage::reverse)) sender_drops_.push_back(d);
        l_.points = {app, hook, out, in, got};
        for (const auto& p : l_.points)
            l_.drops.insert(l_.drops.end(), p.drops.begin(), p.drops.end());
        // The other direction's drops are listed too, apart: they lost no data of this test.
        for (const auto* from : {&sender_drops_, &receiver_drops_})
            for (const auto& d : *from)
                if (d.stage == Stage::reverse) l_.drops.push_back(d);
        return l_;
    }

  private:
    // The frames one of the test's UDP datagrams leaves in: more than one when it is larger than
    // the sender's MTU takes, and IP fragments it (-l 8000 at MTU 1500: 6). The hooks match the
    // flow by its ports, which only the first fragment carries, so they count datagrams; the
    // driver handoff counts the socket's frames, every fragment. 1 for TCP, or when the
    // datagram's size is not known.
    int udp_frames_per_datagram() const {
        if (t_.transport != Transport::udp || !t_.payload_bytes || !traces_.sender) return 1;
        const int mtu = traces_.sender->trace->link.mtu_bytes;
        // Any rate: the frames a datagram takes depend on its size and the MTU only.
        const auto model =
            model_for(t_, kMaxLinkBps, mtu > 0 ? std::optional<int>(mtu) : std::nullopt);
        return model ? std::max<int>(1, int(model->udp.frames.size())) : 1;
    }
    // A count of frames in datagrams.
    uint64_t datagrams(uint64_t frames) const {
        return (frames + uint64_t(frames_per_datagram_) / 2) / uint64_t(frames_per_datagram_);
    }
    // The bytes of the test's flow through a hook: all of its UDP frames when its datagrams are
    // fragmented (the fragments after the first carry no ports), else the flow's own.
    uint64_t flow_bytes(const DirectionTraffic& d, const TrafficCounts& flow) const {
        if (frames_per_datagram_ == 1) return flow.bytes;
        const auto udp = d.by_protocol.find("udp");
        return udp != d.by_protocol.end() ? std::max(flow.bytes, udp->second.bytes) : flow.bytes;
    }

    void read_sender() {
        if (!traces_.sender) return;
        const auto& s = *traces_.sender;
        l_.sender_node = s.trace->node;
        l_.sender_tier = s.trace->tier;
        const TierMeasures m = measures(s.trace->tier);
        sender_drops_ = m.drops ? placed_drops(s, true, proto_) : counted_drops(s, true, proto_);
        if (t_.transport == Transport::tcp && m.retransmits) {
            const auto& by_flow = s.phase.retransmits.segments_by_flow;
            const auto it = by_flow.find("iperf");
            l_.retransmitted = it != by_flow.end() ? it->second : 0;
        }
        // Drops without a reason (NOT_SPECIFIED) could have happened anywhere on their node:
        // they are placed where the counts show packets missing, nearest the wire first, and
        // only what no gap needs is left as unattributed (the sender's: a packet coming in, not
        // data lost).
        sender_unknown_ = of_stages(sender_drops_, {Stage::unknown});
        if (!m.flows) return;  // what passed its hooks is unknown, not zero
        const TrafficCounts tx = flow_counts(s.phase.tx, proto_);
        egress_ = tx.wire_packets;
        l_.sender_flow_bytes = flow_bytes(s.phase.tx, tx);
        // An skb the qdisc dropped unreported was at most this many frames: one where every
        // skb through the egress hook was one frame, else what a GSO skb can hold
        // (kMaxFramesPerGsoSkb).
        frames_per_skb_ = tx.wire_packets > tx.packets ? kMaxFramesPerGsoSkb : 1;
        if (s.phase.xmit && m.xmit) {
            left_ = datagrams(flow_counts(*s.phase.xmit, proto_).wire_packets);
            // The driver's own count of what it was handed (all traffic) above the handoff
            // tracepoint's: frames handed to it unseen by the tracepoint's program, not lost
            // (counted in frames, so a driver that counts GSO skbs once never raises it). Handed
            // is sent plus what the driver itself dropped (tx_dropped: a veth whose peer did not
            // take them), as the tracepoint fires before the driver decides; those drops stay
            // the wire's, after this point, by their freeing function.
            if (const auto dev = s.phase.dev_stats.find("tx_packets");
                dev != s.phase.dev_stats.end()) {
                const auto dropped = s.phase.dev_stats.find("tx_dropped");
                const int64_t handed =
                    dev->second + (dropped != s.phase.dev_stats.end() && dropped->second > 0
                                       ? dropped->second
                                       : 0);
                if (handed > int64_t(s.phase.xmit->total.wire_packets))
                    driver_sent_more_ =
                        datagrams(uint64_t(handed) - s.phase.xmit->total.wire_packets);
            }
        } else {
            const uint64_t queued =
                sum_drops(of_stages(sender_drops_, {Stage::sender_queue}), false);
            left_ = *egress_ >= queued ? *egress_ - queued : 0;
            left_inferred_ = true;
        }
    }

    void read_receiver() {
        if (traces_.receiver) {
            const auto& r = *traces_.receiver;
            l_.receiver_node = r.trace->node;
            l_.receiver_tier = r.trace->tier;
            const TierMeasures m = measures(r.trace->tier);
            receiver_drops_ =
                m.drops ? placed_drops(r, false, proto_) : counted_drops(r, false, proto_);
            if (m.flows) {
                const TrafficCounts rx = flow_counts(r.phase.rx, proto_);
                arrived_ = rx.wire_packets;
                l_.receiver_flow_bytes = flow_bytes(r.phase.rx, rx);
            }
            for (auto& d : of_stages(receiver_drops_, {Stage::unknown}))
                (d.reason.ends_with(kFreedAboveNic) ? receiver_unknown_above_nic_
                                                    : receiver_unknown_)
                    .push_back(std::move(d));
        }
        // A frame that arrived at the receiver left the sender: a transmit count below the
        // arrivals is that counter's shortfall, not loss (the kernel fires
        // net_dev_start_xmit for every frame, but runs the BPF program on it for up to 8 in
        // 1,000 fewer under a tbf; docs/codes.md, bench/xmit_tracepoint.sh).
        if (left_ && egress_ && !left_inferred_ && driver_sent_more_ > 0) {
            const uint64_t queued =
                sum_drops(of_stages(sender_drops_, {Stage::sender_queue}), false);
            const uint64_t could = *egress_ > queued ? *egress_ - queued : 0;
            if (could > *left_) {
                left_undercounted_ = std::min(driver_sent_more_, could - *left_);
                *left_ += left_undercounted_;
                undercount_source_ = "driver";
            }
        }
        if (left_ && arrived_ && !left_inferred_ && *arrived_ > *left_) {
            left_undercounted_ += *arrived_ - *left_;
            left_ = arrived_;
            undercount_source_ = "arrived";
        }
    }

    void read_application() {
        if (t_.transport != Transport::udp) return;
        if (t_.datagrams_sent && *t_.datagrams_sent >= 0)
            app_sent_ = static_cast<uint64_t>(*t_.datagrams_sent);
        if (t_.datagrams_total && t_.datagrams_lost && *t_.datagrams_total >= *t_.datagrams_lost &&
            *t_.datagrams_lost >= 0) {
            app_total_ = static_cast<uint64_t>(*t_.datagrams_total);
            app_received_ = static_cast<uint64_t>(*t_.datagrams_total - *t_.datagrams_lost);
        }
    }

    // 1. The sender's egress hook, with the stack's drops between it and the application.
    LedgerPoint egress_point() {
        LedgerPoint hook{std::string(kEgress),
                         l_.sender_node,
                         egress_,
                         false,
                         of_stages(sender_drops_, {Stage::sender_stack}),
                         0};
        if (app_sent_ && egress_) {
            int64_t gap =
                int64_t(*app_sent_) - int64_t(sum_drops(hook.drops, false)) - int64_t(*egress_);
            fill(sender_unknown_, gap, Stage::sender_stack, hook.drops);
            hook.unattributed = beyond_slack(gap, *app_sent_);
        }
        return hook;
    }

    // 2. What left the NIC, with the queue's drops between.
    LedgerPoint left_point() {
        LedgerPoint out{std::string(kLeft),
                        l_.sender_node,
                        left_,
                        left_inferred_,
                        of_stages(sender_drops_, {Stage::sender_queue}),
                        0};
        out.undercounted = left_undercounted_;
        out.undercount_source = undercount_source_;
        if (egress_ && left_ && !left_inferred_) {
            int64_t gap =
                int64_t(*egress_) - int64_t(sum_drops(out.drops, false)) - int64_t(*left_);
            // What the queue still held when the phase was cut left the NIC in the next phase.
            const auto& stats = traces_.sender->phase.qdisc_stats;
            const auto queued = stats.find("queued_at_end");
            if (gap > 0 && queued != stats.end() && queued->second > 0) {
                out.queued_at_end = std::min<uint64_t>(gap, queued->second);
                gap -= static_cast<int64_t>(out.queued_at_end);
            }
            fill(sender_unknown_, gap, Stage::sender_queue, out.drops);
            if (gap > 0)
                if (const uint64_t more = qdisc_counted_more()) {
                    const uint64_t n =
                        std::min<uint64_t>(static_cast<uint64_t>(gap), more * frames_per_skb_);
                    const std::string& iface = traces_.sender->trace->iface;
                    out.drops.push_back(
                        {l_.sender_node, Stage::sender_queue,
                         frames_per_skb_ == 1
                             ? fmt::format("qdisc drops on {} the drop tracepoint did not report",
                                           iface)
                             : fmt::format("frames in the {} qdisc drops on {} the drop "
                                           "tracepoint did not report",
                                           more, iface),
                         n, false});
                    gap -= static_cast<int64_t>(n);
                }
            out.unattributed = beyond_slack(gap, *egress_);
        }
        return out;
    }

    // The sender's qdisc's own drop counter (all traffic, in skbs) above every drop the probe
    // reported on that node at the queue or with no reason: drops the qdisc made that
    // kfree_skb's tracepoint never reported (measured: 33 of 7,547 under a tbf's short queue on
    // a busy machine, with no BPF recursion miss; 59 of 967 GSO skbs under another). Counted in
    // skbs where the probe reports them, else in frames (older probes: never more than the
    // skbs, so never more unreported). Only at the tiers that report drops; below them the
    // counter is the drops (counted_drops).
    uint64_t qdisc_counted_more() const {
        const PhaseTrace& p = traces_.sender->phase;
        if (!measures(traces_.sender->trace->tier).drops) return 0;
        const auto counted = p.qdisc_stats.find("drops");
        if (counted == p.qdisc_stats.end() || counted->second <= 0) return 0;
        uint64_t reported = 0;
        for (const auto& d : p.drops) {
            const Stage s = stage_of_drop(drop_label(d), true);
            if (s == Stage::sender_queue || s == Stage::unknown)
                reported += d.skbs > 0 ? d.skbs : d.packets;
        }
        const auto qdisc = static_cast<uint64_t>(counted->second);
        return qdisc > reported ? qdisc - reported : 0;
    }

    // 3. What arrived: the receiver's drops before its hook (with a reason, then without one),
    // its NIC's counters, and what no kernel saw (the wire).
    LedgerPoint arrived_point() {
        LedgerPoint in{std::string(kArrived),
                       l_.receiver_node,
                       arrived_,
                       false,
                       of_stages(receiver_drops_, {Stage::receiver_nic}),
                       0};
        // What the sender's driver freed after counting it out: lost on the link, by name.
        for (auto& d : of_stages(sender_drops_, {Stage::wire})) in.drops.push_back(std::move(d));
        if (!left_ || !arrived_) return in;
        int64_t missing =
            int64_t(*left_) - int64_t(*arrived_) - int64_t(sum_drops(in.drops, false));
        const size_t reasonless = in.drops.size();
        fill(receiver_unknown_, missing, Stage::receiver_nic, in.drops);
        // Below the tiers that count drops, the NIC's counters are in in.drops already.
        const auto counters = measures(l_.receiver_tier).drops
                                  ? nic_counters(traces_.receiver->phase)
                                  : std::vector<std::pair<std::string, uint64_t>>{};
        // A NIC counter that rose by as many says what the reasonless drops were (placed here by
        // a gap, or by the function that freed them).
        for (size_t i = 0; i < in.drops.size(); ++i) {
            LedgerDrop& d = in.drops[i];
            if (d.stage != Stage::receiver_nic ||
                (i < reasonless && !d.reason.starts_with("freed in ")))
                continue;
            for (const auto& [counter, n] : counters)
                if (std::llabs(int64_t(n) - int64_t(d.packets)) <= int64_t(ledger_slack(n)))
                    d.reason += fmt::format(" ({} +{})", counter, n);
        }
        if (beyond_slack(missing, *left_) > 0) {
            for (const auto& [counter, n] : counters) {
                const uint64_t take = std::min<uint64_t>(n, static_cast<uint64_t>(missing));
                if (take == 0) break;
                in.drops.push_back({l_.receiver_node, Stage::receiver_nic, counter, take, false});
                missing -= static_cast<int64_t>(take);
            }
        }
        if (beyond_slack(missing, *left_) > 0) {
            in.drops.push_back({"", Stage::wire, "", static_cast<uint64_t>(missing), false});
        } else {
            in.unattributed = beyond_slack(missing, *left_);  // more arrived than left
        }
        return in;
    }

    // 4. What the receiving application got: the receiver's drops after its hook.
    LedgerPoint delivered_point() {
        LedgerPoint got{std::string(kDelivered),
                        l_.receiver_node,
                        app_received_,
                        false,
                        of_stages(receiver_drops_,
                                  {Stage::receiver_filter, Stage::receiver_ip,
                                   Stage::receiver_socket, Stage::receiver_tcp, Stage::duplicate}),
                        0};
        if (arrived_ && app_received_) {
            int64_t gap =
                int64_t(*arrived_) - int64_t(sum_drops(got.drops, false)) - int64_t(*app_received_);
            // Accepted by the receiving socket but read by no application when the phase was
            // cut: still queued, not lost (iperf3 stops counting before it has drained its
            // socket, the more so on a host slow to run it). The kernel counts a datagram in
            // UdpInDatagrams when it is read, so what the socket took less what was read is
            // what it still held — a bound, as other sockets' reads count there too. IPv6's
            // reads count in Udp6InDatagrams: both are summed (a trace of an older probe has
            // only the IPv4 one, which then covers no IPv6 flow and fails the check below).
            const auto& nstat = traces_.receiver->phase.nstat;
            std::optional<int64_t> read;
            for (const char* key : {"UdpInDatagrams", "Udp6InDatagrams"})
                if (const auto it = nstat.find(key); it != nstat.end())
                    read = read.value_or(0) + it->second;
            if (gap > 0 && read && *read >= int64_t(*app_received_)) {
                const int64_t unread =
                    int64_t(*arrived_) - int64_t(sum_drops(got.drops, false)) - *read;
                if (unread > 0) {
                    got.queued_at_end = uint64_t(std::min(gap, unread));
                    gap -= int64_t(got.queued_at_end);
                }
            }
            // Past the last datagram the receiver's total covers (its sequence numbers end
            // there), the sender counted more: those arrived after the count ended, as many as
            // the link held when the test stopped — with a full queue, more than the slack.
            if (gap > 0 && app_sent_ && app_total_ && *app_sent_ > *app_total_) {
                got.after_count = std::min<uint64_t>(uint64_t(gap), *app_sent_ - *app_total_);
                gap -= int64_t(got.after_count);
            }
            fill(receiver_unknown_, gap, Stage::unknown, got.drops);
            fill(receiver_unknown_above_nic_, gap, Stage::unknown, got.drops);
            got.unattributed = beyond_slack(gap, *arrived_);
        }
        return got;
    }

    const ThroughputTest& t_;
    const TestTraces& traces_;
    const std::string proto_;
    Ledger l_;
    std::vector<LedgerDrop> sender_drops_, receiver_drops_;
    std::vector<LedgerDrop> sender_unknown_, receiver_unknown_;  // reasonless, not yet placed
    // The receiver's reasonless drops without a device: only for gaps after its ingress hook.
    std::vector<LedgerDrop> receiver_unknown_above_nic_;
    std::optional<uint64_t> egress_, left_, arrived_;
    bool left_inferred_ = false;
    uint64_t left_undercounted_ = 0;
    uint64_t driver_sent_more_ = 0;
    uint64_t frames_per_skb_ = 1;  // at most, in an skb through the sender's egress hook
    int frames_per_datagram_ = 1;  // udp_frames_per_datagram()
    std::string undercount_source_;
    // UDP: the tool's datagram counts (the receiver's total: received and lost)
    std::optional<uint64_t> app_sent_, app_total_, app_received_;
};

}  // namespace

Ledger build_ledger(const ThroughputTest& t, const TestTraces& traces) {
    Ledger l = LedgerBuilder(t, traces).build();
    l.streams = stream_ledgers(t, traces);
    return l;
}

namespace {

nlohmann::json drop_json(const LedgerDrop& d) {
    return {{"node", d.node},
            {"stage", key_of(d.stage)},
            {"reason", d.reason},
            {"packets", d.packets},
            {"housekeeping", d.housekeeping}};
}

LedgerDrop parse_drop(const JsonField& j) {
    if (!j.value().is_object()) j.fail("expected a drop object");
    LedgerDrop d;
    d.node = j.at("node").str();
    const JsonField stage = j.at("stage");
    const std::string name = stage.str();
    bool known = false;
    for (int i = 0; i <= static_cast<int>(Stage::unknown); ++i) {
        if (key_of(static_cast<Stage>(i)) == name) {
            d.stage = static_cast<Stage>(i);
            known = true;
        }
    }
    if (!known) stage.fail(fmt::format("'{}' is not a stage", name));
    d.reason = j.at("reason").str();
    d.packets = j.at("packets").u64();
    d.housekeeping = j.at("housekeeping").boolean();
    return d;
}

}  // namespace

nlohmann::json to_json(const Ledger& l) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : l.points) {
        nlohmann::json drops = nlohmann::json::array();
        for (const auto& d : p.drops) drops.push_back(drop_json(d));
        points.push_back({{"label", p.label},
                          {"node", p.node},
                          {"count", p.count ? nlohmann::json(*p.count) : nlohmann::json(nullptr)},
                          {"inferred", p.inferred},
                          {"unattributed", p.unattributed},
                          {"queued_at_end", p.queued_at_end},
                          {"after_count", p.after_count},
                          {"undercounted", p.undercounted},
                          {"undercount_source", p.undercount_source},
                          {"drops", drops}});
    }
    nlohmann::json reverse = nlohmann::json::array();
    for (const auto& d : l.drops)
        if (d.stage == Stage::reverse) reverse.push_back(drop_json(d));
    nlohmann::json streams = nlohmann::json::array();
    for (const auto& s : l.streams) streams.push_back(to_json(s));
    return {
        {"test", l.test},
        {"transport", l.transport == Transport::tcp ? "tcp" : "udp"},
        {"unit", l.unit},
        {"sender_node", l.sender_node},
        {"receiver_node", l.receiver_node},
        {"server_sent", l.server_sent},
        {"sender_tier", to_string(l.sender_tier)},
        {"receiver_tier", to_string(l.receiver_tier)},
        {"points", points},
        {"other_direction_drops", reverse},
        {"retransmitted_segments",
         l.retransmitted ? nlohmann::json(*l.retransmitted) : nlohmann::json(nullptr)},
        {"stream_port", l.stream_port ? nlohmann::json(*l.stream_port) : nlohmann::json(nullptr)},
        {"streams", streams}};
}

Ledger parse_ledger(const nlohmann::json& document, const std::string& where) {
    const JsonField doc(document, where);
    if (!document.is_object()) doc.fail("expected a ledger object");
    Ledger l;
    l.test = doc.at("test").str();
    const JsonField transport = doc.at("transport");
    const std::string name = transport.str();
    if (name != "tcp" && name != "udp") transport.fail(fmt::format("'{}' is not tcp or udp", name));
    l.transport = name == "tcp" ? Transport::tcp : Transport::udp;
    l.unit = doc.at("unit").str();
    l.sender_node = doc.at("sender_node").str();
    l.receiver_node = doc.at("receiver_node").str();
    if (const auto server_sent = doc.find("server_sent"))  // absent in older ledgers: forward
        l.server_sent = server_sent->boolean();
    for (auto [key, into] :
         {std::pair{"sender_tier", &l.sender_tier}, std::pair{"receiver_tier", &l.receiver_tier}}) {
        const auto name = doc.optional_str(key);
        if (!name) continue;  // ledgers older than tiers: full
        const auto tier = parse_tier(*name);
        if (!tier) doc.at(key).fail(fmt::format("'{}' is not a probe tier", *name));
        *into = *tier;
    }
    const JsonField points = doc.at("points");
    for (size_t i = 0; i < points.array_size(); ++i) {
        const JsonField j = points.at(i);
        if (!j.value().is_object()) j.fail("expected a point object");
        LedgerPoint p;
        p.label = j.at("label").str();
        p.node = j.at("node").str();
        if (const JsonField count = j.at("count"); !count.is_null()) p.count = count.u64();
        p.inferred = j.at("inferred").boolean();
        p.unattributed = j.at("unattributed").i64();
        if (const auto queued = j.find("queued_at_end")) p.queued_at_end = queued->u64();
        if (const auto after = j.find("after_count")) p.after_count = after->u64();
        if (const auto under = j.find("undercounted")) p.undercounted = under->u64();
        p.undercount_source = j.optional_str("undercount_source").value_or("arrived");
        const JsonField drops = j.at("drops");
        for (size_t k = 0; k < drops.array_size(); ++k) p.drops.push_back(parse_drop(drops.at(k)));
        l.drops.insert(l.drops.end(), p.drops.begin(), p.drops.end());
        l.points.push_back(std::move(p));
    }
    const JsonField reverse = doc.at("other_direction_drops");
    for (size_t k = 0; k < reverse.array_size(); ++k) l.drops.push_back(parse_drop(reverse.at(k)));
    if (const auto retransmitted = doc.find("retransmitted_segments"))
        l.retransmitted = retransmitted->u64();
    if (const auto port = doc.find("stream_port"); port && !port->is_null()) {
        const uint64_t n = port->u64();
        if (n > 65535) port->fail("is not a port (0 to 65535)");
        l.stream_port = static_cast<int>(n);
    }
    if (const auto streams = doc.find("streams")) {  // absent in ledgers before streams
        for (size_t i = 0; i < streams->array_size(); ++i) {
            const JsonField s = streams->at(i);
            l.streams.push_back(parse_ledger(s.value(), s.path()));
        }
    }
    return l;
}

namespace {

std::string summary_line(const Ledger& l, bool& inferred) {
    std::string path;
    for (const auto& p : l.points) {
        if (!p.count) continue;
        path += fmt::format("{}{} {}{}", path.empty() ? "" : " → ", short_label(p.label),
                            format_count(double(*p.count)), p.inferred ? "*" : "");
        if (p.undercounted > 0)
            path += fmt::format(" (its counter saw {}; {})",
                                format_count(double(*p.count - p.undercounted)),
                                p.undercount_source == "driver"
                                    ? "the driver's own counters show it was handed the rest"
                                    : "the rest arrived, so they left");
        inferred = inferred || p.inferred;
    }
    // What cost the test packets, then what did not, by kind.
    std::map<std::string, std::vector<std::string>> kinds;
    uint64_t housekeeping = 0;
    for (const auto& d : l.drops) {
        if (d.housekeeping || d.stage == Stage::reverse) {
            housekeeping += d.packets;
            continue;
        }
        const std::string what =
            d.stage != Stage::wire
                ? fmt::format("{} {} on {}", format_count(double(d.packets)), d.reason, d.node)
            : d.reason.empty() ? fmt::format("{} on the wire", format_count(double(d.packets)))
                               : fmt::format("{} {} on {} (on the wire)",
                                             format_count(double(d.packets)), d.reason, d.node);
        kinds[d.stage == Stage::duplicate ? "duplicates" : "lost"].push_back(what);
    }
    uint64_t unattributed = 0;
    for (const auto& p : l.points) unattributed += uint64_t(std::llabs(p.unattributed));
    std::string tail;
    for (const char* kind : {"lost", "duplicates"}) {
        if (!kinds.count(kind)) continue;
        std::string list;
        for (const auto& w : kinds[kind]) list += (list.empty() ? "" : ", ") + w;
        tail += fmt::format("{}{} {}", tail.empty() ? "" : "; ", kind, list);
    }
    if (unattributed > 0)
        tail += fmt::format("{}{} unattributed", tail.empty() ? "" : "; ",
                            format_count(double(unattributed)));
    if (tail.empty()) tail = "nothing lost";
    for (const auto& p : l.points)
        if (p.after_count > 0)
            tail += fmt::format(" ({} arrived after the receiver's count ended)",
                                format_count(double(p.after_count)));
    if (housekeeping > 0)
        tail += fmt::format(" ({} housekeeping or other-direction drops)",
                            format_count(double(housekeeping)));
    return fmt::format("{} {} → {}{}, {}: {}; {}", l.test, l.sender_node, l.receiver_node,
                       l.server_sent ? " (the server sent: its probe counted the sending end)" : "",
                       l.unit, path.empty() ? "no count" : path, tail);
}

}  // namespace

std::string render_ledgers(const std::vector<Ledger>& ledgers) {
    if (ledgers.empty()) return "";
    std::string out = "Where the packets went (the ledger of both data NICs):\n";
    bool inferred = false;
    for (const auto& l : ledgers) {
        out += "  " + summary_line(l, inferred) + "\n";
        for (const auto& s : l.streams) out += "    " + summary_line(s, inferred) + "\n";
    }
    if (inferred)
        out += "  * inferred from the counts around it: the trace has no count after the queue\n";
    return out + "\n";
}

}  // namespace np
