#pragma once
// One ledger per test and direction: the measured flow's packets from the sending application
// to the receiving one, filled from every source at once — the tool's counts, both probes'
// traces (before and after the sender's queue, at the receiver's NIC) and the kernel's drops by
// reason — so that every difference between two neighbouring points is placed in exactly one
// stage, named by node and kernel reason, or reported as unattributed. The explanation's loss,
// retransmit and wrong-interface findings are read off it, and the report draws it.
//
//   sent by the application            tool (UDP datagrams; TCP counts bytes)
//     - sender stack drops             netfilter OUTPUT, routing, neighbour
//   egress hook (before the qdisc)     sender probe, tc egress
//     - sender queue drops             qdisc, tc egress action, tx queue
//   left the sender's NIC              sender probe, after the qdisc
//     - receiver NIC drops, wire loss  backlog/ring/XDP, NIC counters; else no kernel saw them
//   arrived (ingress hook)             receiver probe, tc ingress
//     - receiver drops by stage        tc/netfilter, IP, socket, TCP
//     - duplicates discarded           TCP_OLD_DATA, TCP_OLD_SEQUENCE, …: resent, not lost
//   delivered to the application       tool (UDP: received = total − lost)
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/readers/measurement.hpp"
#include "common/trace.hpp"

namespace np {

// Where on the path a packet of the measured flow was dropped.
enum class Stage {
    sender_stack,     // before the sender's egress hook: netfilter OUTPUT, no route, neighbour
    sender_queue,     // between the egress hook and the driver: qdisc, tc egress, tx queue
    wire,             // between the NICs: left the sender, no kernel on the receiver saw it
    receiver_nic,     // at the receiver before its ingress hook: ring, backlog, XDP, device
    receiver_filter,  // tc ingress actions, netfilter
    receiver_ip,      // IP input: routing, martians, checksums, fragments
    receiver_socket,  // the receiving socket: buffer full, no socket, socket filter
    receiver_tcp,     // TCP's receive path: out of window, zero window, out-of-order queue
    duplicate,        // the receiver already had it: a retransmission that was not needed
    reverse,          // the other direction (ACKs, the server's replies): not the data's loss
    unknown,          // a drop without a reason (NOT_SPECIFIED), or one not placed
};

const char* to_string(Stage s);    // "the sender's queue"
std::string_view key_of(Stage s);  // "sender_queue", for JSON
bool is_data_loss(Stage s);        // a drop in this stage lost data the tool counted

// Where a kernel drop reason (enum skb_drop_reason, without SKB_DROP_REASON_) places a drop of
// the measured flow, seen on the sending or the receiving node.
Stage stage_of(std::string_view reason, bool on_sender);

// Where the code that freed a packet places a drop of the measured flow (every drop at the
// drops-without-reasons tier, kernels before 5.17; a drop without a reason at full):
// kfree_skb's caller, named from kallsyms, as dropwatch and tcpdrop read it. Only functions
// whose drops all belong to one stage are placed; the rest are unknown.
Stage stage_of_function(std::string_view function, bool on_sender);

// Where a LedgerDrop's reason places it: a kernel reason (stage_of), or "freed in FUNCTION"
// (stage_of_function) for a drop named by the code that freed it — every drop at the
// drops-without-reasons tier, a drop without a reason (NOT_SPECIFIED) at the full tier.
Stage stage_of_drop(std::string_view reason, bool on_sender);

// How the ledger names a drop: "freed in FUNCTION" when the trace names the function, else the
// kernel's reason.
std::string drop_label(const DropReasonCount& d);

// Drops that cost the test nothing when it ran: segments after the connection closed, flags
// or resets at teardown, a socket's queue purged on close (a reason, or "freed in FUNCTION" of
// is_teardown_function). When the tool failed they are the evidence of why, and are not set
// aside.
bool is_housekeeping_reason(std::string_view reason);
// The kernel functions that free a closing or destroyed socket's queued packets.
bool is_teardown_function(std::string_view function);
// A drop label ("freed in FUNCTION") of a qdisc's queue purged whole (reset, replaced, or
// deactivated with its device): the sender's queue, but not overfilled.
bool is_queue_purge(std::string_view label);

// The part of a trace that covers a test: its node and the test's phase (its own when it has
// one, else the one named after its transport; all phases merged when there is none).
struct TracedSide {
    const Trace* trace = nullptr;
    PhaseTrace phase;
};

struct TestTraces {
    std::optional<TracedSide> sender;
    std::optional<TracedSide> receiver;
    // Traces that could not be held against the test, and why (a trace that covers 8 ms of a
    // 10 s test says nothing about it).
    std::vector<std::string> unusable;
};

// Picks the sender's and receiver's traces for a test: by role (client/server, reversed for
// -R), else by which way the flow went. A trace whose phase covers less than half of the test
// is set aside (unusable) rather than read as "nothing crossed the NIC".
TestTraces traces_for(const ThroughputTest& t, const std::vector<Trace>& traces);

struct LedgerDrop {
    std::string node;  // empty for loss no kernel saw (on the wire)
    Stage stage = Stage::unknown;
    // The kernel's reason; "freed in FUNCTION" (drops-without-reasons); a kernel counter's name
    // (a NIC's, the qdisc's, nstat's: all traffic, not the flow's); empty on the wire.
    std::string reason;
    uint64_t packets = 0;
    bool housekeeping = false;
};

// The label of the ledger's last point: what the receiving application counted.
inline constexpr std::string_view kDeliveredPoint = "delivered to the application";

// One point of the path, with the drops between it and the point before.
struct LedgerPoint {
    std::string label;  // "left the sender's NIC"
    std::string node;
    std::optional<uint64_t> count;  // frames (TCP segments, UDP datagrams); empty: not measured
    bool inferred = false;          // derived from other counts, not measured there
    std::vector<LedgerDrop> drops;  // between the previous point and this one
    // Not lost but not yet there when the phase was cut: still in the sender's queue (at
    // 'left the sender's NIC'), or UDP datagrams still unread in the receiving socket (at
    // 'delivered to the application').
    uint64_t queued_at_end = 0;
    // At 'delivered to the application', UDP datagrams that arrived after the receiving tool's
    // count ended: the sender counted this many past the last datagram the receiver's total
    // covers (iperf3 stops counting at the test's end; what the link still held arrives after).
    uint64_t after_count = 0;
    // Raised to what the next point proves passed here: the counter here saw this many fewer
    // (what arrived at the receiver left the sender, whatever the sender's transmit count says).
    uint64_t undercounted = 0;
    // What proves they passed: "arrived" (the receiver's hook counted them) or "driver" (the
    // NIC driver's own transmit counter, /proc/net/dev, counted more than the tracepoint did).
    std::string undercount_source{};
    // Missing (positive) or extra (negative) beyond the drops, once in-flight slack is allowed;
    // 0 when both ends are measured and agree, or when one is not measured.
    int64_t unattributed = 0;
};

struct Ledger {
    std::string test;
    Transport transport = Transport::tcp;
    std::string unit;  // "datagrams" or "segments"
    std::string sender_node, receiver_node;
    // The server sent (iperf3 -R, --bidir's reverse direction): the server's node is the
    // sender, and its probe counted the sending end.
    bool server_sent = false;
    std::vector<LedgerPoint> points;            // application … application, in path order
    std::vector<LedgerDrop> drops;              // every drop of the flow, each in exactly one stage
    std::optional<uint64_t> retransmitted;      // TCP segments resent on the sender's data NIC
    std::optional<uint64_t> sender_flow_bytes;  // egress hook bytes of the flow
    std::optional<uint64_t> receiver_flow_bytes;  // ingress hook bytes of the flow
    std::optional<double> tool_bytes;             // what the tool says it moved
    // What each end's probe could measure (full when untraced: nothing to say then).
    ProbeTier sender_tier = ProbeTier::full, receiver_tier = ProbeTier::full;
    // A stream's own ledger: its client-side port. Empty in a test's (the sum of its streams).
    std::optional<int> stream_port;
    // A test of several streams: each stream's ledger (stream_ledgers), in the tool's order.
    std::vector<Ledger> streams;

    // Data-loss drops (not housekeeping, not duplicates, not the other direction) in a stage,
    // and in all stages; duplicates; unattributed packets over the whole ledger.
    uint64_t lost_in(Stage s) const;
    uint64_t lost() const;
    uint64_t duplicates() const;
    uint64_t unattributed() const;
    // Both ends of the path were traced at tiers that count the flow and its drops (full or
    // drops-without-reasons): only then do the counts say where every packet went, and "nothing
    // was lost" is a measurement. Below that the ledger holds what the tiers measured and the
    // rest is unknown.
    bool complete() const {
        return !sender_node.empty() && !receiver_node.empty() && measures(sender_tier).drops &&
               measures(receiver_tier).drops;
    }
};

// How many packets may differ between two counts for reasons that are not loss: frames in
// flight when the phases were cut on two nodes, the odd frame of control traffic, and the
// counting itself: measured on this project's machines (kernel 6.18, veth with a tbf at
// 100 Mbit/s), the driver-handoff count fell short of the egress hook by up to 15 of 24,400
// frames (0.06 %) with no drop and no program run missed, so 0.1 % (at least 2) is allowed.
uint64_t ledger_slack(uint64_t packets);

// The ledger of one test, with its streams' (stream_ledgers).
Ledger build_ledger(const ThroughputTest& t, const TestTraces& traces);

// The phase as one stream of the measured flow saw it: the flow's counts, retransmits and drops
// of the stream's transport are the stream's; everything else (other traffic, the kernel's and
// the qdisc's counters, all traffic's) is the phase's.
PhaseTrace stream_phase(const PhaseTrace& p, const StreamTrace& s);

// Each stream's ledger, for a test the tool ran with several (iperf3 -P): built as a test's,
// from the tool's counts for that stream and each trace's stream_phase. Empty for one stream,
// and when a trace does not count every stream by itself (a probe older than streams, the
// kernel-counters tier, or a stream its map had no room for: the streams then sum short).
std::vector<Ledger> stream_ledgers(const ThroughputTest& t, const TestTraces& traces);

// The measured flow's traffic of one transport ("tcp", "udp"; both when empty) in one direction.
TrafficCounts flow_counts(const DirectionTraffic& d, std::string_view transport);

// Drops of the measured flow in a phase, of one transport (both when empty), by reason.
std::vector<std::pair<std::string, uint64_t>> flow_drops(const PhaseTrace& p,
                                                         std::string_view transport);

// All phases of a trace summed into one (name "all"), for traces not cut into phases.
PhaseTrace merged_phases(const Trace& t);

// The ledgers for a terminal: one line per test, its counts point by point and what was lost
// where ("iperf3 UDP node1-2 → node1-1, datagrams: sent 23,973 → … → delivered 23,870; lost 102
// SOCKET_RCVBUFF on node1-1"), or "" when there are none.
std::string render_ledgers(const std::vector<Ledger>& ledgers);

// The ledger as JSON (inside the findings document's "ledgers"), and back; parse_ledger throws
// InputError naming `where` and the key.
nlohmann::json to_json(const Ledger& l);
Ledger parse_ledger(const nlohmann::json& doc, const std::string& where);

}  // namespace np
