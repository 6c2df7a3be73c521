#include "analysis/trace_findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "analysis/format.hpp"

namespace np {
namespace {

// Where in the path a kernel drop reason puts the loss. Names are the running kernel's
// enum skb_drop_reason without the SKB_DROP_REASON_ prefix.
bool is_sender_qdisc_reason(std::string_view r) {
    return r.starts_with("QDISC_") || r == "TC_EGRESS" || r == "TXQUEUE_FULL";
}
bool is_receiver_nic_reason(std::string_view r) {
    return r == "CPU_BACKLOG" || r == "FULL_RING" || r == "DEV_READY" || r == "TC_INGRESS";
}
bool is_receiver_socket_reason(std::string_view r) {
    return r == "SOCKET_RCVBUFF" || r == "SOCKET_BACKLOG" || r == "PROTO_MEM";
}

// Drops of the measured flow (iperf port) with reasons matching `pred`, by reason.
template <typename Pred>
std::vector<std::pair<std::string, uint64_t>> flow_drops(const PhaseTrace& p, Pred pred) {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const auto& d : p.drops) {
        if (!pred(d.reason)) continue;
        uint64_t n = 0;
        for (const auto& w : d.where)
            if (w.flow == "iperf") n += w.packets;
        if (n > 0) out.emplace_back(d.reason, n);
    }
    return out;
}

uint64_t sum(const std::vector<std::pair<std::string, uint64_t>>& v) {
    uint64_t n = 0;
    for (const auto& [k, c] : v) n += c;
    return n;
}

std::string list(const std::vector<std::pair<std::string, uint64_t>>& v) {
    std::string s;
    for (const auto& [k, c] : v)
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", format_count(double(c)), k);
    return s;
}

// The measured flow in one direction: "iperf_tcp" / "iperf_udp", both when `proto` is empty.
TrafficCounts flow_counts(const DirectionTraffic& d, const std::string& proto) {
    TrafficCounts c;
    for (const char* p : {"tcp", "udp"}) {
        if (!proto.empty() && proto != p) continue;
        if (auto it = d.by_flow.find(std::string("iperf_") + p); it != d.by_flow.end())
            c += it->second;
    }
    return c;
}

void add_direction(DirectionTraffic& a, const DirectionTraffic& b) {
    a.total += b.total;
    for (const auto& [k, v] : b.by_protocol) a.by_protocol[k] += v;
    for (const auto& [k, v] : b.by_flow) a.by_flow[k] += v;
}

struct Side {
    const Trace* trace = nullptr;
    PhaseTrace phase;
};

PhaseTrace phase_of(const Trace& t, const std::string& name) {
    if (const PhaseTrace* p = t.find_phase(name)) return *p;
    return merged_phases(t);
}

// The evidence of one test (or one traced phase without a test).
struct Case {
    std::string label;  // what the finding talks about: "iperf3 UDP" or "phase udp"
    std::string proto;  // "tcp" | "udp"
    const ThroughputTest* test = nullptr;
    std::optional<Side> sender, receiver;
};

std::vector<Finding> findings_for(const Case& c) {
    std::vector<Finding> out;
    // Loss at the sender's qdisc.
    if (c.sender) {
        const auto drops = flow_drops(c.sender->phase, is_sender_qdisc_reason);
        if (!drops.empty()) {
            Finding f{"LOSS_AT_SENDER_QDISC",
                      Severity::warn,
                      fmt::format("{}: the sender's queue dropped {} packets", c.label,
                                  format_count(double(sum(drops)))),
                      fmt::format("The probe on {} ({}) saw the kernel drop packets of the "
                                  "measured flow before they reached the wire: {}. The sender "
                                  "offered more than its interface queue could hold.",
                                  c.sender->trace->node, c.sender->trace->iface, list(drops)),
                      {{"sender_qdisc_drops", std::to_string(sum(drops))}},
                      "Lower the offered rate (-b) or raise the qdisc limit / txqueuelen."};
            out.push_back(std::move(f));
        }
    }
    // Loss on the wire: frames the client sent that the server did not receive.
    if (c.sender && c.receiver) {
        const TrafficCounts tx = flow_counts(c.sender->phase.tx, c.proto);
        const TrafficCounts rx = flow_counts(c.receiver->phase.rx, c.proto);
        if (tx.wire_packets > rx.wire_packets) {
            const uint64_t lost = tx.wire_packets - rx.wire_packets;
            // A frame or two in flight when the phases were cut is not loss.
            if (lost > std::max<uint64_t>(2, tx.wire_packets / 10000)) {
                out.push_back(
                    {"LOSS_ON_WIRE",
                     Severity::warn,
                     fmt::format("{}: {} frames left the sender but never reached the receiver",
                                 c.label, format_count(double(lost))),
                     fmt::format("The sender's data NIC transmitted {} frames of the measured "
                                 "flow, the receiver's data NIC received {}: {} ({}) were lost "
                                 "between the two NICs (cable, switch, or a NIC that drops "
                                 "before the kernel sees the frame).",
                                 format_count(double(tx.wire_packets)),
                                 format_count(double(rx.wire_packets)), format_count(double(lost)),
                                 format_pct(double(lost) / double(tx.wire_packets))),
                     {{"sender_tx_frames", std::to_string(tx.wire_packets)},
                      {"receiver_rx_frames", std::to_string(rx.wire_packets)},
                      {"wire_lost_frames", std::to_string(lost)}},
                     "Check the switch port counters and `ethtool -S` on both NICs."});
            }
        }
    }
    if (c.receiver) {
        const PhaseTrace& p = c.receiver->phase;
        // Loss at the receiver's NIC / backlog.
        const auto nic = flow_drops(p, is_receiver_nic_reason);
        int64_t ethtool_drops = 0;
        for (const auto& [k, v] : p.ethtool_stats)
            if (k.starts_with("rx") || k.find("rx_") != std::string::npos) ethtool_drops += v;
        if (!nic.empty() || ethtool_drops > 0 || p.softnet_dropped > 0) {
            out.push_back(
                {"LOSS_AT_RECEIVER_NIC",
                 Severity::warn,
                 fmt::format("{}: the receiver dropped packets at its NIC or input queue", c.label),
                 fmt::format("On {} ({}): {}; NIC receive drop/miss counters rose by {}; "
                             "softnet backlog drops by {}. The receiving host did not take "
                             "packets off the NIC fast enough (CPU, ring size, backlog).",
                             c.receiver->trace->node, c.receiver->trace->iface,
                             nic.empty() ? "no kernel drops of the flow" : list(nic),
                             format_count(double(ethtool_drops)),
                             format_count(double(p.softnet_dropped))),
                 {{"receiver_nic_drops", std::to_string(sum(nic))},
                  {"ethtool_rx_drops", std::to_string(ethtool_drops)},
                  {"softnet_dropped", std::to_string(p.softnet_dropped)}},
                 "Raise the NIC ring (ethtool -G) or net.core.netdev_max_backlog; check CPU load "
                 "on the receiver."});
        }
        // Loss at the receiving socket.
        const auto sock = flow_drops(p, is_receiver_socket_reason);
        if (!sock.empty()) {
            const uint64_t n = sum(sock);
            std::string compare;
            std::vector<std::pair<std::string, std::string>> evidence = {
                {"receiver_socket_drops", std::to_string(n)}};
            if (auto it = p.nstat.find("UdpRcvbufErrors"); it != p.nstat.end()) {
                evidence.emplace_back("UdpRcvbufErrors_delta", std::to_string(it->second));
            }
            if (c.test && c.test->datagrams_lost && *c.test->datagrams_lost > 0) {
                const double share = double(n) / double(*c.test->datagrams_lost);
                evidence.emplace_back("tool_lost_datagrams",
                                      std::to_string(*c.test->datagrams_lost));
                compare = fmt::format(" That is {} of the {} datagrams the tool counted as lost.",
                                      format_pct(share, 1),
                                      format_count(double(*c.test->datagrams_lost)));
            }
            out.push_back(
                {"LOSS_AT_RECEIVER_SOCKET", Severity::warn,
                 fmt::format("{}: the receiving socket's buffer overflowed ({} drops)", c.label,
                             format_count(double(n))),
                 fmt::format("The kernel on {} dropped packets of the measured flow at the "
                             "socket: {}. The receiving application did not read fast enough "
                             "for its receive buffer.{}",
                             c.receiver->trace->node, list(sock), compare),
                 evidence,
                 "Raise the receive buffer (iperf -w, net.core.rmem_max) or lower the offered "
                 "rate."});
        }
    }
    // Retransmits on the data NIC.
    if (c.sender && c.proto == "tcp") {
        const Retransmits& r = c.sender->phase.retransmits;
        const auto it = r.segments_by_flow.find("iperf");
        const uint64_t n = it != r.segments_by_flow.end() ? it->second : 0;
        if (n > 0) {
            std::string compare;
            std::vector<std::pair<std::string, std::string>> evidence = {
                {"probe_retransmitted_segments", std::to_string(n)}};
            if (c.test && c.test->retransmits) {
                evidence.emplace_back("tool_retransmits", std::to_string(*c.test->retransmits));
                compare =
                    fmt::format(" iperf reported {}.", format_count(double(*c.test->retransmits)));
            }
            out.push_back({"RETRANSMITS_CONFIRMED", Severity::info,
                           fmt::format("{}: TCP retransmitted {} segments on the data NIC", c.label,
                                       format_count(double(n))),
                           fmt::format("The probe on {} counted {} retransmitted segments of the "
                                       "measured flow leaving {}.{}",
                                       c.sender->trace->node, format_count(double(n)),
                                       c.sender->trace->iface, compare),
                           evidence, ""});
        }
    }
    // Traffic absent from the data NIC.
    const Side* seen = c.sender ? &*c.sender : c.receiver ? &*c.receiver : nullptr;
    if (seen) {
        const bool is_sender = c.sender && seen == &*c.sender;
        const TrafficCounts counts =
            flow_counts(is_sender ? seen->phase.tx : seen->phase.rx, c.proto);
        std::optional<double> tool_bytes;
        if (c.test) tool_bytes = is_sender ? c.test->sent_bytes : c.test->received_bytes;
        if (c.test && !tool_bytes)
            tool_bytes = c.test->sent_bytes ? c.test->sent_bytes : c.test->received_bytes;
        // Less than half of the payload the tool moved (or nothing at all in a phase named
        // after the test) crossed the NIC the probe watched.
        const bool absent = tool_bytes ? double(counts.bytes) < 0.5 * *tool_bytes
                                       : counts.packets == 0 && !c.label.ends_with("all");
        if (absent && (!tool_bytes || *tool_bytes > 0)) {
            std::vector<std::pair<std::string, std::string>> evidence = {
                {"data_nic", seen->trace->iface},
                {"data_nic_flow_bytes", std::to_string(counts.bytes)}};
            if (tool_bytes) evidence.emplace_back("tool_bytes", fmt::format("{:.0f}", *tool_bytes));
            out.push_back(
                {"WRONG_INTERFACE", Severity::error,
                 fmt::format("{}: the traffic did not cross the data interface {}", c.label,
                             seen->trace->iface),
                 fmt::format(
                     "The probe on {} watched {} and saw {} bytes of the measured flow{}. "
                     "The test's traffic rode another interface, so its numbers say "
                     "nothing about the data link.",
                     seen->trace->node, seen->trace->iface, format_count(double(counts.bytes)),
                     tool_bytes
                         ? fmt::format(" while the tool moved {} bytes", format_count(*tool_bytes))
                         : std::string()),
                 evidence,
                 "Use the data interface's address as the iperf target (and bind with -B); "
                 "check `ip route get` for it."});
        }
    }
    return out;
}

// Picks sender and receiver among the traces for a phase: by role, else by direction.
void assign_sides(Case& c, const std::vector<Trace>& traces, const std::string& phase,
                  bool reverse) {
    const std::string sender_role = reverse ? "server" : "client";
    const std::string receiver_role = reverse ? "client" : "server";
    for (const auto& t : traces) {
        Side s{&t, phase_of(t, phase)};
        bool is_sender;
        if (t.role == sender_role) {
            is_sender = true;
        } else if (t.role == receiver_role) {
            is_sender = false;
        } else {
            is_sender =
                flow_counts(s.phase.tx, c.proto).bytes >= flow_counts(s.phase.rx, c.proto).bytes;
        }
        (is_sender ? c.sender : c.receiver) = std::move(s);
    }
}

}  // namespace

PhaseTrace merged_phases(const Trace& t) {
    PhaseTrace m;
    m.name = "all";
    if (!t.phases.empty()) {
        m.start_ms = t.phases.front().start_ms;
        m.end_ms = t.phases.back().end_ms;
    }
    for (const auto& p : t.phases) {
        add_direction(m.tx, p.tx);
        add_direction(m.rx, p.rx);
        m.retransmits.segments += p.retransmits.segments;
        for (const auto& [k, v] : p.retransmits.segments_by_flow)
            m.retransmits.segments_by_flow[k] += v;
        for (const auto& d : p.drops) {
            auto it = std::find_if(m.drops.begin(), m.drops.end(),
                                   [&](const DropReasonCount& x) { return x.reason == d.reason; });
            if (it == m.drops.end()) {
                m.drops.push_back(d);
            } else {
                it->packets += d.packets;
                it->bytes += d.bytes;
                it->where.insert(it->where.end(), d.where.begin(), d.where.end());
            }
        }
        for (const auto& [k, v] : p.nstat) m.nstat[k] += v;
        for (const auto& [k, v] : p.ethtool_stats) m.ethtool_stats[k] += v;
        m.softnet_dropped += p.softnet_dropped;
    }
    return m;
}

std::vector<Finding> trace_findings(const std::vector<Trace>& traces,
                                    const Measurements& measured) {
    std::vector<Finding> out;
    if (traces.empty()) return out;
    std::vector<Case> cases;
    for (const auto& t : measured.throughput) {
        Case c;
        c.label = t.label.empty() ? t.source : t.label;
        c.proto = t.transport == Transport::tcp ? "tcp" : "udp";
        c.test = &t;
        assign_sides(c, traces, c.proto, t.reverse);
        cases.push_back(std::move(c));
    }
    if (measured.throughput.empty()) {
        bool any_named = false;
        for (const char* proto : {"tcp", "udp"}) {
            bool present = false;
            for (const auto& t : traces) present = present || t.find_phase(proto);
            if (!present) continue;
            any_named = true;
            Case c;
            c.label = fmt::format("phase {}", proto);
            c.proto = proto;
            assign_sides(c, traces, proto, false);
            cases.push_back(std::move(c));
        }
        if (!any_named) {
            Case c;
            c.label = "phase all";
            assign_sides(c, traces, "all", false);
            cases.push_back(std::move(c));
        }
    }
    for (const auto& c : cases) {
        auto f = findings_for(c);
        // Name the test as the engine's own findings do, so it can tie the two together.
        if (c.test)
            for (auto& one : f) one.evidence.insert(one.evidence.begin(), {"test", c.label});
        out.insert(out.end(), std::make_move_iterator(f.begin()), std::make_move_iterator(f.end()));
    }
    return out;
}

}  // namespace np
