#pragma once
// The probe's trace, schema "np-trace/1" (docs/design.md "Contracts"; key by key in
// docs/formats.md): what crossed one node's data NIC per phase and direction, TCP retransmits,
// drops by the kernel's reason, kernel counter deltas, a time series and the probe's own cost.
//
// np-probe writes it with to_json() and the analyzer reads it with parse_trace(), so the
// schema lives in one place. This file depends on nlohmann_json and the standard library
// only: np-probe is linked fully static and compiles it in directly.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace np {

inline constexpr const char* kTraceSchema = "np-trace/1";

// What the probe on a node could measure, best first: chosen on the node by probing its
// kernel's features and the probe's privileges (docs/formats.md, "tier").
enum class ProbeTier {
    full,                   // tc hooks, the driver handoff, retransmits, drops with reasons
    drops_without_reasons,  // as full, but each drop named by the function that freed it
    tc_counters,            // the tc hooks only: per-flow counts, no drops, no retransmits
    kernel_counters,        // no BPF: the kernel's own counters, none per flow
};

// "full", "drops-without-reasons", "tc-counters", "kernel-counters".
const char* to_string(ProbeTier t);
std::optional<ProbeTier> parse_tier(std::string_view name);
// "full, drops-without-reasons, tc-counters or kernel-counters": for messages naming them.
inline constexpr const char* kTierNames =
    "full, drops-without-reasons, tc-counters or kernel-counters";
// Whether `have` measures at least what `want` does.
inline bool at_least(ProbeTier have, ProbeTier want) {
    return static_cast<int>(have) <= static_cast<int>(want);
}

// What a tier measures: the analysis reads nothing else of a trace at that tier, so what was
// not measured is unknown, never zero.
struct TierMeasures {
    bool flows = false;        // tx/rx (and by_flow) from the tc hooks
    bool xmit = false;         // what the driver was handed after the qdisc
    bool retransmits = false;  // TCP retransmits by flow
    bool drops = false;        // drops by flow (with a reason or a function)
    bool drop_reasons = false;
};
TierMeasures measures(ProbeTier t);

// Names of the protocol and flow splits, as they appear in the JSON (by_flow spells the
// iperf flow with its transport: iperf_tcp, iperf_udp; drop locations name it "iperf").
inline constexpr const char* kTraceProtocols[] = {"tcp", "udp", "icmp", "arp", "other"};
inline constexpr const char* kTraceFlows[] = {"other", "iperf", "icmp_echo"};
// The drop reason kept apart as "unattributed": the kernel freed a packet without a reason.
inline constexpr const char* kUnattributedDropReason = "NOT_SPECIFIED";

struct TrafficCounts {
    uint64_t packets = 0;       // skbs seen by tc (a GSO/GRO skb is one)
    uint64_t bytes = 0;         // skb lengths: MAC header .. payload, headers once per skb
    uint64_t wire_packets = 0;  // Ethernet frames
    uint64_t wire_bytes = 0;    // frames with replicated headers + preamble/SFD, FCS, gap

    TrafficCounts& operator+=(const TrafficCounts& o);
};

struct FrameSizeBucket {
    uint64_t max_frame_bytes = 0;  // inclusive upper bound, MAC header .. FCS
    uint64_t frames = 0;
};

struct DirectionTraffic {
    TrafficCounts total;
    std::map<std::string, TrafficCounts> by_protocol;  // keys: kTraceProtocols
    // keys: iperf_tcp, iperf_udp (the iperf port, by transport), icmp_echo, other
    std::map<std::string, TrafficCounts> by_flow;
    std::vector<FrameSizeBucket> frame_sizes;
};

struct DropLocation {
    std::string iface;  // empty when the drop had no device (socket-level drops)
    uint32_t ifindex = 0;
    std::string protocol;  // kTraceProtocols
    std::string flow;      // kTraceFlows
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint64_t skbs = 0;  // the drops (skbs freed); 0 in traces of older probes
};

struct DropReasonCount {
    // The kernel's enum skb_drop_reason name without SKB_DROP_REASON_; empty at the
    // drops-without-reasons tier, whose drops are named by `function` instead.
    std::string reason;
    // The kernel function that freed the packet (kfree_skb's location, symbolized), as
    // dropwatch and tcpdrop placed drops before reasons: every drop's at the
    // drops-without-reasons tier, a drop without a reason's (NOT_SPECIFIED) at full; empty in
    // traces of older probes.
    std::string function;
    bool unattributed = false;  // reason == NOT_SPECIFIED
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint64_t skbs = 0;  // as DropLocation::skbs
    std::vector<DropLocation> where;
};

struct Retransmits {
    uint64_t segments = 0;  // as TcpRetransSegs / tcpi_total_retrans count them
    std::map<std::string, uint64_t> segments_by_flow;
};

// What the probe's CPU account (bpf/cpu_account.h) saw one CPU spend its time on over a phase,
// in µs: the test's own processes, and the softirqs and the data NIC's IRQs, which /proc/stat
// counts as softirq and irq time whatever task they interrupted.
struct CpuAccount {
    int64_t tool_us = 0;         // a tool's threads were the CPU's current task
    int64_t tool_in_irq_us = 0;  // of tool_us: softirqs and NIC IRQs that ran meanwhile
    int64_t net_tx_us = 0;       // the NET_TX softirq
    int64_t net_rx_us = 0;       // the NET_RX softirq
    int64_t other_softirq_us = 0;
    int64_t nic_irq_us = 0;  // the data NIC's hard IRQ handlers (none on a veth)
    // The ticks the account was sampled at on this CPU (all but nic_irq_us are whole ticks of
    // them); 0 in traces of probes that traced every switch instead.
    int64_t samples = 0;
    // Sampled at the kernel's own tick, which also charges /proc/stat's busy time: then a CPU's
    // work from idle between ticks (CpuTime::unticked_ms) is in none of the parts. Else at the
    // probe's own timer, busy or idle (traces before the kernel's tick was used: "sampled_at"
    // absent).
    bool at_kernel_tick = false;
    // The tool's own time: its threads' time less what interrupted them.
    int64_t tool_own_us() const { return std::max<int64_t>(0, tool_us - tool_in_irq_us); }
    // What the account names of the CPU's time: the tool's own, NET_RX, NET_TX, the NIC's IRQs.
    int64_t named_us() const { return tool_own_us() + net_rx_us + net_tx_us + nic_irq_us; }
};

// One CPU's time over a phase, from /proc/stat (the whole host's, not the namespace's), in ms.
struct CpuTime {
    int cpu = 0;
    int64_t busy_ms = 0;     // user, nice, system, irq and softirq
    int64_t softirq_ms = 0;  // of busy: softirq (NET_RX, NET_TX, …)
    int64_t irq_ms = 0;      // of busy: hard interrupts
    int64_t idle_ms = 0;     // idle and iowait
    int64_t steal_ms = 0;    // taken by the hypervisor: neither busy here nor idle
    // Of busy: tasks at a lowered priority (nice above 0). The scheduler gives a nice-0 task
    // ~1.25 times the share of a task one nice level below it (about 70 times at nice 19), so a
    // CPU busy with such work is one a test at the default priority could still have had.
    int64_t niced_ms = 0;
    // The probe's CPU account of this CPU; absent in older traces and at the tiers that load
    // no tracing programs.
    std::optional<CpuAccount> account = std::nullopt;
    // The phase's time that /proc/stat placed nowhere: the wall time between the probe's two
    // readings less busy, idle and steal, where that is more than the readings' own rounding
    // (80 ms, or 2 % of the phase), else 0. Where the kernel counts busy time by its tick
    // (TICK_CPU_ACCOUNTING, without IRQ_TIME_ACCOUNTING) and idle time by its own clock (NO_HZ),
    // an idle CPU with its tick stopped that runs interrupts and the softirqs they raise (an IPI
    // of RPS, a NIC's IRQ) is out of idle but never ticked: that work lands here. Not idle and
    // not stolen, so counted as busy; 0 in older traces.
    int64_t unticked_ms = 0;
    // The CPU's time out of idle and not stolen: busy as ticked, and what no tick saw.
    int64_t working_ms() const { return busy_ms + unticked_ms; }
};

// One of the test's own processes on the node (a process holding a socket on the iperf port: the
// server listening and serving, the client sending) over the part of a phase it was seen, with
// what its cgroup's CPU controller allowed it: the evidence that names the host that set a
// test's pace, where a CPU-wide view shows nothing (one throttled process on an idle machine).
struct ProcessCpu {
    int64_t pid = 0;
    std::string comm;        // /proc/PID/comm: iperf3, iperf, …
    int64_t watched_ms = 0;  // how long of the phase it was watched (first seen to its end)
    int64_t cpu_ms = 0;      // user and system time, all its threads
    std::string cgroup;      // the cgroup whose CPU limit throttled it most ("" unknown)
    std::optional<double> quota_cores;  // that cgroup's CPU limit (cpu.max); absent: none
    int64_t periods = 0;                // its enforcement periods over the watch
    int64_t throttled_periods = 0;      // of those, periods its quota ran out in
    int64_t throttled_ms = 0;           // time its tasks were held back for it
    // How long its threads were ready to run but waited for a CPU over the watch (the kernel's
    // schedstat run_delay, every thread): other work on its CPUs keeping it waiting. Absent
    // where the kernel keeps no scheduling statistics, and in older traces.
    std::optional<int64_t> cpu_wait_ms;
    double cpu_share() const { return watched_ms > 0 ? double(cpu_ms) / double(watched_ms) : 0; }
};

// TCP's own account of the test's connection on a node (the kernel's tcp_info for its socket,
// as `ss -ti` shows it), its last reading in the phase: of the connections on the iperf port,
// the one that moved the most bytes in the phase (the data connection, not iperf3's control
// one). The chrono counters are the sender's: how long it had data to send, and of that how
// long the peer's receive window or its own send buffer held it back (the rest, its congestion
// window or the path).
struct TcpAccount {
    int64_t local_port = 0, remote_port = 0;
    int64_t bytes_acked = 0;     // sent and acknowledged: the sending side's
    int64_t bytes_received = 0;  // the receiving side's
    int64_t busy_us = 0;
    int64_t rwnd_limited_us = 0;
    int64_t sndbuf_limited_us = 0;
    int64_t snd_cwnd = 0;  // segments
    int64_t snd_mss = 0;
    int64_t rtt_us = 0;  // smoothed, at the reading
    int64_t min_rtt_us = 0;
    int64_t delivery_rate_bps = 0;
    int64_t total_retrans = 0;
    int64_t snd_wnd = 0;  // the peer's last advertised window, bytes (0 before kernel 6.2)
    // The cap the application put on the socket's pacing (SO_MAX_PACING_RATE: iperf3's
    // --fq-rate), bit/s of payload; 0: none (absent from traces before it was read).
    int64_t max_pacing_rate_bps = 0;
    bool sender() const { return bytes_acked > bytes_received; }
};

// One stream of the measured flow over a phase — a TCP connection or a UDP socket (iperf3 -P
// runs several) — named by the port of its end that is not the iperf port: the client's, the
// same in both nodes' traces. What it moved at each point and its drops, as far as the tier
// measures them.
struct StreamTrace {
    std::string transport;               // "tcp" or "udp"
    uint16_t port = 0;                   // 0: the server's listening socket (no other end yet)
    TrafficCounts tx, rx;                // at the egress and ingress hooks
    std::optional<TrafficCounts> xmit;   // handed to the driver; absent below the full tiers
    uint64_t retransmits = 0;            // TCP segments resent, as Retransmits counts them
    std::vector<DropReasonCount> drops;  // as the phase's, largest first; every `where` "iperf"
};

// One ICMP echo (a ping's request and its reply) as this node's probe stamped it over the phase,
// in ns on the node's monotonic clock from the first of its stamps: at the egress hook (tx,
// before the qdisc), at the driver handoff (xmit, after it; the full tiers only) and at the
// ingress hook (rx). The node that pinged has the request's tx and xmit and the reply's rx; the
// one that answered, the request's rx and the reply's tx and xmit. Two nodes' stamps of one echo
// split its round trip into stages (analysis/explanation/latency.hpp).
enum class EchoStamp { request_tx, request_xmit, request_rx, reply_tx, reply_xmit, reply_rx };
inline constexpr const char* kEchoStampNames[] = {"request_tx", "request_xmit", "request_rx",
                                                  "reply_tx",   "reply_xmit",   "reply_rx"};
inline constexpr size_t kEchoStamps = std::size(kEchoStampNames);
// The most echoes a phase's trace holds (the probe's map holds 1,024).
inline constexpr size_t kMaxPhaseEchoes = 4096;

struct EchoTrace {
    uint16_t id = 0;  // the echo's identifier and sequence number, host order
    uint16_t seq = 0;
    int family = 4;  // 4: ICMP, 6: ICMPv6
    std::array<std::optional<int64_t>, kEchoStamps> ns{};
    std::optional<int64_t> at(EchoStamp s) const { return ns[static_cast<size_t>(s)]; }
    // `to` - `from` when both were stamped.
    std::optional<int64_t> between(EchoStamp from, EchoStamp to) const;
};

// The measured flow's wire bytes over the phase in 1 ms bins from its start: what left the NIC
// (the driver handoff) and what arrived (the ingress hook), both directions of the flow on this
// node. The first 16,384 ms of a phase; the empty bins at its end are left out, so a bin past
// the arrays' end held nothing.
inline constexpr size_t kMaxPhaseBins = 16384;
struct PhaseBins {
    int64_t bin_ms = 1;
    std::vector<uint64_t> tx_wire_bytes, rx_wire_bytes;
};

struct PhaseTrace {
    std::string name;
    int64_t start_ms = 0;  // since the probe started
    int64_t end_ms = 0;
    DirectionTraffic tx;  // egress of the data iface, as tc saw it: before the qdisc
    DirectionTraffic rx;  // ingress
    // Handed to the driver after the qdisc: what left the NIC. Absent in traces of probes
    // older than this field (then it can only be inferred from tx minus the queue's drops).
    std::optional<DirectionTraffic> xmit;
    Retransmits retransmits;
    std::vector<DropReasonCount> drops;  // largest first
    // Deltas over the phase: nstat names (UdpRcvbufErrors, TcpRetransSegs, ...), the data
    // iface's `ethtool -S` drop/miss counters, and /proc/net/softnet_stat drops (all CPUs).
    std::map<std::string, int64_t> nstat;
    std::map<std::string, int64_t> ethtool_stats;
    int64_t softnet_dropped = 0;
    // The root qdisc's drops, overlimits (held back by a shaper) and requeues over the phase.
    std::map<std::string, int64_t> qdisc_stats;
    // Each CPU's time over the phase; empty in traces of probes older than this field.
    std::vector<CpuTime> cpus;
    // The data iface's own counters over the phase (/sys/class/net/IFACE/statistics:
    // rx_packets, tx_bytes, rx_dropped, …), all traffic; empty in older traces.
    std::map<std::string, int64_t> dev_stats;
    // The test's own processes seen in the phase; empty in older traces and where none was.
    std::vector<ProcessCpu> processes;
    // TCP's own account of the test's connection here; absent in older traces and in phases
    // without a TCP connection on the port.
    std::optional<TcpAccount> tcp;
    // The measured flow by stream, by transport and port; empty in traces of probes older than
    // the field, and at the kernel-counters tier. A stream the probe's map had no room for is
    // missing: its streams then sum to less than the flow.
    std::vector<StreamTrace> streams;
    // The ICMP echoes seen in the phase, in no order; empty in traces of probes older than the
    // field, at the kernel-counters tier and where nobody pinged.
    std::vector<EchoTrace> echoes;
    // The flow in 1 ms bins; absent in traces of probes older than the field, below the full
    // tiers and where the probe could not run its timer.
    std::optional<PhaseBins> bins;
    const StreamTrace* find_stream(std::string_view transport, uint16_t port) const;

    int64_t duration_ms() const { return end_ms - start_ms; }
    // What left the NIC: after the qdisc when the probe measured it, else the egress hook's.
    const DirectionTraffic& left_nic() const { return xmit ? *xmit : tx; }
    uint64_t drops_with_reason(std::string_view reason) const;
    uint64_t drops_total() const;
};

// One interval of the time series; counters are deltas over [t_ms - interval_ms, t_ms].
struct TraceSample {
    int64_t t_ms = 0;
    int64_t interval_ms = 0;
    std::string phase;
    uint64_t tx_wire_packets = 0;  // frames
    uint64_t rx_wire_packets = 0;
    uint64_t tx_wire_bytes = 0;
    uint64_t rx_wire_bytes = 0;
    uint64_t retransmits = 0;
    uint64_t drops = 0;
};

struct ProgramCost {
    std::string program;
    // Counted by the kernel's BPF run-time statistics, only while they are on: np-probe
    // --time-programs (they cost every BPF program on the host two clock reads a run). Not
    // timed: both 0, null in the JSON.
    uint64_t run_cnt = 0;
    uint64_t run_time_ns = 0;
    // Runs the kernel skipped because the program was already running on that CPU (tracing
    // programs do not nest): events the probe did not count. Absent in older traces (0).
    uint64_t recursion_misses = 0;
    bool timed = true;
    double ns_per_run() const { return run_cnt ? double(run_time_ns) / double(run_cnt) : 0; }
};

struct LinkFacts {
    bool carrier = false;
    std::optional<int64_t> speed_mbps;  // absent when the driver does not report it
    std::string duplex;                 // full | half | unknown
    int mtu_bytes = 0;
    std::string driver;
    std::string qdisc;                      // the root qdisc's kind: tbf, htb, fq_codel, mq, …
    std::optional<int64_t> qdisc_rate_bps;  // the rate it shapes to, when it is a shaper
};

struct Trace {
    std::string schema = kTraceSchema;
    std::string node;
    std::string role;  // e.g. client | server; empty when not given
    std::string iface;
    uint32_t ifindex = 0;
    uint64_t netns_inode = 0;
    std::string kernel;
    // What this probe could measure and, below full, why no more ("CAP_BPF missing").
    // Traces of probes older than the field are full.
    ProbeTier tier = ProbeTier::full;
    std::string tier_why;
    LinkFacts link;
    uint16_t iperf_port = 0;
    int64_t sample_interval_ms = 0;
    std::string started_at;  // UTC, ISO 8601
    int64_t duration_ms = 0;
    std::vector<PhaseTrace> phases;
    std::vector<TraceSample> samples;
    std::vector<ProgramCost> probe_cost;

    const PhaseTrace* find_phase(std::string_view name) const;
};

nlohmann::json to_json(const TrafficCounts& c);
nlohmann::json to_json(const EchoTrace& e);
nlohmann::json to_json(const PhaseTrace& p);
nlohmann::json to_json(const TraceSample& s);
nlohmann::json to_json(const Trace& t);

// Throws InputError whose field is the JSON path of what is missing or wrong
// (e.g. "phases[1].tx.wire_bytes"); a schema other than np-trace/1 is an error too.
Trace parse_trace(const nlohmann::json& doc);
Trace parse_trace_text(std::string_view text);

}  // namespace np
