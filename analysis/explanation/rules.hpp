#pragma once
// The explanation engine's rules (analysis/explanation/explain.cpp runs them; nothing else
// includes this).
// A test rule reads everything measured about one throughput test — the tool's output, the
// model for the link or the slower path the numbers show, and the ledger built from both
// probes' traces — and adds findings about it; which finding supersedes which is declared in
// analysis/explanation/codes.cpp, not decided by the order rules run in.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/explanation/evidence.hpp"
#include "analysis/explanation/latency.hpp"
#include "analysis/explanation/ledger.hpp"

namespace np::rules {

// Within this fraction below the ceiling a test is line-rate bound: a 1 GbE TCP run at 934
// (99.2 %) is, and so is a 100 Mbit/s tbf-shaped one at 93.99 (99.8 %).
inline constexpr double kLineRateFraction = 0.985;

// ---------------------------------------------------------------- text shared by the rules

std::string mbps(double bps);  // "94.15"
// A rate as the tool printed it: 3 significant digits for iperf2 (resolution > 0).
std::string rate_text(double bps, double resolution);
// Wire loads compared with a nominal link rate: 1.046 Gbit/s against 1 Gbit/s.
std::string wire_text(double bps);
std::optional<double> recomputed_loss_pct(const ThroughputTest& t);
// "node1-1: 7,968 QDISC_DROP, 8 TC_EGRESS"
std::string describe_drops(const std::vector<LedgerDrop>& drops);
// "7,968 at the sender's queue (node1-2: QDISC_DROP); 3 on the wire"
std::string describe_loss(const Ledger& l);
// What to do about packets lost at a stage, for a test of that transport (every rule's one
// source of per-stage advice: rules_ledger.cpp).
const char* next_step_for(Stage s, Transport t);

// ---------------------------------------------------------------- readings of a throughput test
// (rules_shared.cpp: more than one of the throughput rules makes them)

// Above the ceiling by more than this (beyond the tool's print rounding) is not measurement
// jitter: the link is faster than --link says, or the figure is not what crossed the wire.
inline constexpr double kAboveCeilingSlack = 0.005;
// UDP loss at or above this (percent) is a warning; below it, information.
inline constexpr double kLossWarnPct = 1.0;
std::string pct_number(double pct);  // "4.80"
// "a 100 Mbit/s link" or, when the numbers show a slower path, "a 100 Mbit/s path".
std::string link_words(const TestEvidence& v);
bool is_udp(const ThroughputTest& t);
// The sender sent (nearly) the offered rate: within 3 % of it, beyond the tool's rounding.
bool reached_offered(const ThroughputTest& t);
// A UDP sender below this fraction of a rate (the offered one; the ceiling) did not send it: the
// one threshold of reached_offered, the UDP ceiling search's steps and OFFERED_ABOVE_CEILING.
inline constexpr double kSenderShortfall = 0.97;
// The most any point of the ledger counted: the scale of its slack for what was in flight.
uint64_t counted_frames(const Ledger& l);
// The ledger's verdict on loss: placed drops of the flow beyond in-flight slack.
bool ledger_shows_loss(const Ledger& l);
// A TCP test whose sender kept the path full but whose receiver's figure falls short: what was
// still queued or in flight when the test was cut arrived after the receiver stopped counting.
// The sender's own rate at the ceiling with nothing of the flow lost (by the ledger, else no
// retransmits) says the link was the limit. Returns the bytes the receiver had not counted.
std::optional<double> tcp_tail_bytes(const TestEvidence& v);

// ---------------------------------------------------------------- the slower-path pre-pass

// The rate the path behaves like when it is slower than the link, and every test is then
// judged against it: a shaper on a test sender's data iface slower than the link (measured),
// or else the numbers' signature — every test the link does not explain sits at the ceiling of
// one standard rate (10M … 400G) below the link's. Never a rate some test exceeded.
std::optional<double> slower_path_bps(const ExplainInput& in);
// Whether a test sits at the ceiling of a path of that rate, frames of at most `mtu` bytes.
bool at_path_ceiling(const ThroughputTest& t, double path_bps, std::optional<int> mtu);

// Below the ceiling for a reason still to find: not within kLineRateFraction of it, not a UDP
// test held to an offered rate the link can carry, not a TCP test whose receiver is short only
// by a full link's tail (rules_throughput.cpp). The rules that name the stage start from it.
bool short_of_ceiling(const TestEvidence& v);

// ---------------------------------------------------------------- what the data NICs carried

// One data NIC's traffic in one direction during a test, in wire bits per second (frames with
// preamble, FCS and gap): the test's flow (its data or ACKs, and its control connection) and
// everything else that went that way.
struct NicLoad {
    std::string node, iface;
    std::string direction;  // "sent" or "received"
    double test_bps = 0;    // over the test's duration
    double other_bps = 0;   // over the phase
    uint64_t test_frames = 0;
    // Counted by flow at the probe's hooks; false at tiers that count none: the NIC's own
    // counters (all traffic) then, the test's share estimated from what the tool moved at the
    // model's wire bytes per payload byte (none for the ACK direction: test_bps 0).
    bool per_flow = true;
    double total_bps() const { return test_bps + other_bps; }
};

// A traced node's egress queue (its root qdisc) over the test's phase, as its probe sampled it
// every sample interval: in how many samples it held packets, and at most how many. What fills
// and drains between two samples is not seen, so a queue that held packets in most samples
// had a standing backlog — the stage behind it was sending no faster than it was fed.
struct QueueBacklog {
    std::string node, iface;
    int64_t samples = 0, nonempty = 0, max_packets = 0, max_bytes = 0;
    double share() const { return samples > 0 ? double(nonempty) / double(samples) : 0; }
    // "node1-2's enp0s25 queue held packets in 28 of 30 samples, at most 21 packets (31,794
    // bytes)"
    std::string text() const;
};
// Empty in traces from probes older than these samples, or where the qdisc could not be read.
std::optional<QueueBacklog> queue_backlog(const TracedSide& side);
// A queue that held packets in at least this share of the samples had a standing backlog.
inline constexpr double kStandingQueueShare = 0.5;

// The loads on the test's path, for the stages they are the evidence of (rules_bottleneck.cpp):
// the data direction at both NICs, the reverse one at the receiver's.
struct PathLoads {
    std::optional<NicLoad> data_out;             // the sender's NIC, after its qdisc when measured
    std::optional<NicLoad> data_in;              // the receiver's NIC, ingress
    std::optional<NicLoad> reverse_out;          // the receiver's NIC, egress: the test's ACKs
    uint64_t data_frames = 0;                    // the test's data frames (sender, else receiver)
    std::string reverse_qdisc;                   // the receiver's root qdisc
    std::optional<double> reverse_capacity_bps;  // its shaping rate, when it shapes
    uint64_t reverse_drops = 0;         // the flow's packets the receiver dropped going out
    std::string reverse_drop_reasons;   // "node1-1: 264 QDISC_DROP"
    std::optional<double> idle_rtt_ms;  // the lowest ping RTT of the run
    // The egress queues over the test: the sender's (data), the receiver's (ACKs).
    std::optional<QueueBacklog> data_queue, reverse_queue;
};
PathLoads path_loads(const TestEvidence& v);

// A traced node whose CPUs were saturated during the test: every CPU busy for 90 % of the test's
// duration or more, or one CPU for 95 % (a single-threaded tool, or the NIC's softirq, on one
// core). Busy time is what the test could not have had: tasks at a lowered priority (nice above
// 0) are left out, since they yield to it. It is counted over the phase that holds the test and
// set against the test's own duration, since the phase's few hundred extra milliseconds are the
// tool starting and stopping. Empty when the trace has no CPU times or none was saturated.
//
// One CPU with the probe's account of it (CpuAccount) is said by what it spent its time on — the
// test's own process, each network softirq, the NIC's IRQs — and whether the tool ran on any
// other CPU, with the CPU time each packet of the flow cost; the next step follows from the part
// that dominates.
//
// A saturated CPU is the host's limit on the test only where the test's work kept it busy: its
// process, the network's softirqs and IRQs (and, for an account sampled at the kernel's tick,
// work from idle between ticks) 85 % of its busy time or more. Where it was less, `other_work`
// says so ("node1-2: CPU 0 busy 99 % of the 2.0 s test, but the test's own work (…) was only
// 22 % of it"): for one CPU by its account (a CPU without one is taken as the test's), for every
// CPU by the account of each or, without one, by the node's tool processes' CPU time and
// /proc/stat's softirq and IRQ time (none of these: taken as the test's). Where the test's
// process ran on another CPU and under half of this one's time was the test's, the process had
// room there: that core is ruled out (`other_work_ruled_out`). Otherwise other work at the
// default priority may have kept the test waiting for a CPU: it is neither named nor ruled out,
// and how long the test's processes waited for one is said where the trace has it (`wait`).
// (On the local testbed both nodes share the CPUs: from each node's trace the other's tool is other
// work.)
struct SaturatedCpu {
    std::string node;
    std::string text;  // "node1-1: CPU 1 busy 2.98 s of the 3.0 s test (41 % of it softirq)"
    double busy_fraction = 0;
    Evidence evidence;      // the account's parts, where there is one
    std::string next_step;  // what would move the rate, where the account says; else empty
    int cpu = -1;           // the CPU named; -1 for all of them
    // Where the trace shows the CPU (or every CPU) kept busy by other work than the test's, that
    // said: not the host's limit on the test by this evidence. Empty where the test's work kept
    // it busy, or where the trace cannot tell (above).
    std::string other_work{};
    // … and the test's process had room on another CPU: this one did not hold it.
    bool other_work_ruled_out = false;
    // other_work says how long the node's test processes waited for a CPU while ready to run
    // (their threads' run delay, ProcessCpu::cpu_wait_ms): the measure of whether that work held
    // the test back. Empty where the trace does not have it: `<node>.cpu_wait_ms` and
    // `<node>.cpu_wait_pct` (of the time they were ready to run) otherwise.
    Evidence wait{};
    bool wait_said() const { return !wait.empty(); }
    bool by_test() const { return other_work.empty(); }
};
std::optional<SaturatedCpu> saturated_cpu(const TracedSide& side, double test_s);
// How long a node's test processes waited for a CPU while ready to run (the kernel's run delay of
// their threads, summed over the processes whose trace has it: ProcessCpu::cpu_wait_ms): "the
// threads of the test's process waited 1.07 s in all for a CPU, 25 % of the time they were ready
// to run", with `<node>.cpu_wait_ms` and `<node>.cpu_wait_pct`. None where no process has it.
struct ProcessesWait {
    std::string text;
    Evidence evidence;
};
std::optional<ProcessesWait> processes_wait(const TracedSide& side);
// The evidence key, after the node's name, of a saturated CPU's busy share: a finding that carries
// it names a core.
inline constexpr std::string_view kCpuBusyPctKey = ".cpu_busy_pct";
// The cores still to measure, as a "Measure what was not: …" step names them, where `where`
// ("on both nodes", "on the sender") had CPU times in its traces (`probed`) and the probe's
// account of them (`accounted`): nothing once accounted, else how to get the account or per-core
// times; each ends ", ".
std::string cores_to_measure(bool probed, bool accounted, const std::string& where);
// What held back a UDP sender that set its own pace, from the sending host's CPUs: every CPU
// busy, or the one its process ran on by the probe's account (never a saturated CPU the account
// shows the process did not run on, nor one CPU without an account). Empty where neither.
std::optional<SaturatedCpu> sending_core(const TracedSide& side, double test_s);
// A finding's evidence of a saturated CPU (its busy share under kCpuBusyPctKey, the account's
// parts), and its next step where it has one.
void add_saturated_cpu(Finding& f, const SaturatedCpu& cpu);
// A tool process at or above this share of one core (iperf3's own figure) ran a core flat out.
inline constexpr double kBusyCpuPct = 90.0;
// The CPU the test's own process ran on most, by the probe's account, when it was saturated
// (≥ 95 % busy), said by its account; empty without an account or when that CPU had room.
std::optional<SaturatedCpu> saturated_tool_cpu(const TracedSide& side, double test_s);
// The busiest CPU of a traced node during the test, for what was ruled out ("node1-1's busiest
// CPU, 1, was busy 62 % of the test"); empty without CPU times.
std::optional<std::string> busiest_cpu_text(const TracedSide& side, double test_s);
// The test's own process on a traced node that its cgroup's CPU limit held back, by its own
// counters (the probe's `processes`, src/probe/tool_processes.hpp): throttled in at least a
// fifth of the enforcement periods and for a tenth of the time it was watched. The most held
// back of the node's, with its evidence; empty where none was. (A process's CPU time alone does
// not show one core flat out: it sums its threads, and iperf3 since 3.16 runs one per stream.)
struct StarvedTool {
    std::string node;
    std::string text;    // "node1-1's iperf3 (pid 812) was held back by the CPU limit of …"
    std::string cgroup;  // the cgroup whose limit throttled it
    Evidence evidence;   // NODE + kThrottledMsKey among them: a finding that carries it names one
};
inline constexpr std::string_view kThrottledMsKey = ".throttled_ms";
std::optional<StarvedTool> starved_tool(const TracedSide& side);
// The next step for a tool a cgroup's CPU limit held back: lift that limit.
std::string lift_limit_step(const StarvedTool& tool);
// Where the data link lost its carrier in the test's phase, by the kernel's own count on each
// traced data NIC ("node1-2's enp0s25 1 time and node1-1's enp0s25 1 time"), with its evidence;
// empty where neither did.
struct CarrierLost {
    std::string where;
    Evidence evidence;
};
std::optional<CarrierLost> carrier_lost(const TestEvidence& v);
// A TCP test's round trip under load far above the idle one (ping's) while neither node's own
// egress queue was full: packets waited in a queue the probes do not see — a hop between the
// NICs, on the way out or back, or a host's stack. One sentence with its evidence for a limit
// that was not located; empty without both RTTs or without such a rise.
struct UnseenQueue {
    std::string text;
    Evidence evidence;
};
std::optional<UnseenQueue> unseen_queue(const TestEvidence& v, const PathLoads& loads);
// TCP's own account of what held the test's sender (its tcp_info, the probe's `tcp`): the share
// of the time it had data to send that the receiver's window, and its own send buffer, held it.
struct TcpLimit {
    std::string node;  // the sender's
    double busy_s = 0;
    double rwnd_share = 0, sndbuf_share = 0;
    Evidence evidence;
    // "node1-2's TCP had data to send for 2.9 s: the receiver's window held it 85 % of that
    // time, its send buffer 0 %"
    std::string text;
};
std::optional<TcpLimit> tcp_limit(const TestEvidence& v);
// The share of the busy time above which a window or buffer set the pace.
inline constexpr double kTcpLimitedShare = 0.5;
// The pacing cap the test's sending application put on each of its TCP sockets
// (SO_MAX_PACING_RATE: iperf3's --fq-rate), when the test moved what those caps allow: at least
// kPacedShare of the cap times its streams. TCP's own pacing counts each segment's payload, so
// a flow it paces runs at its cap (a little under while its first ten segments and its ACKs'
// gaps go by: 99.9 % measured here); under the fq qdisc the packet's length counts, headers
// included, and the payload runs at 1448/1500 of the cap at MTU 1500: still above the share,
// not at an MTU much below 1500.
struct PacingCap {
    std::string node;  // the sender's
    double cap_bps = 0;
    int streams = 1;
    Evidence evidence;
    std::string text;  // "node1-2's TCP socket was capped at 90 Mbit/s by its application"
};
std::optional<PacingCap> pacing_cap(const TestEvidence& v);
inline constexpr double kPacedShare = 0.95;
// The stages the loads rule out, one sentence each, for a limit that was not located; a stage
// whose own evidence does not rule it out begins with kNotRuledOut.
std::vector<std::string> ruled_out(const TestEvidence& v, const PathLoads& loads);
inline constexpr std::string_view kNotRuledOut = "not ruled out — ";

// ---------------------------------------------------------------- rules

// Whole input, before the tests: a tool's error, explained from what its packets met on each
// node when there are traces (rules_ledger.cpp); no link rate (rules_ping.cpp).
void tool_failures(const ExplainInput& in, Explanation& e);
void link_unknown(const ExplainInput& in, Explanation& e);
// PROBE_TIER: each traced node whose probe counted below the full tier, and what that tier
// cannot tell (rules_ledger.cpp).
void probe_tiers(const ExplainInput& in, Explanation& e);

// Per test: the tool's output against the model. A path slower than the link
// (rules_slower_path.cpp); the offered load and the sender (rules_offered.cpp); loss as the tool
// counted it (rules_tool_loss.cpp); against the ceiling (rules_throughput.cpp).
void path_slower_than_link(const TestEvidence& v, std::vector<Finding>& out);
void offered_above_ceiling(const TestEvidence& v, std::vector<Finding>& out);
void sender_limited(const TestEvidence& v, std::vector<Finding>& out);
void udp_loss(const TestEvidence& v, std::vector<Finding>& out);
void printed_loss(const TestEvidence& v, std::vector<Finding>& out);
void line_rate(const TestEvidence& v, std::vector<Finding>& out);
void offered_rate_reached(const TestEvidence& v, std::vector<Finding>& out);
void bidir_acks(const TestEvidence& v, std::vector<Finding>& out);
void below_ceiling(const TestEvidence& v, std::vector<Finding>& out);
void retransmits(const TestEvidence& v, std::vector<Finding>& out);

// Per test of several streams (rules_streams.cpp): STREAMS_UNEVEN when the slowest stream moved
// less than kEvenStreamShare of the fastest, explained by its own ledger when it lost more than
// kUnevenLossFactor times the others' mean loss, else said not to be located (its resends told,
// not taken for a cause).
void uneven_streams(const TestEvidence& v, std::vector<Finding>& out);
inline constexpr double kEvenStreamShare = 0.75;
inline constexpr double kUnevenLossFactor = 1.5;

// Per test: the tool's own counters when they cannot be right (rules_counters.cpp): UDP loss
// counts that contradict themselves or the receiver's bytes, and reordering that is not loss.
void loss_counters(const TestEvidence& v, std::vector<Finding>& out);
void reordering(const TestEvidence& v, std::vector<Finding>& out);

// Per test: the stage the loads on the path show (rules_bottleneck.cpp): a link shared with
// other traffic, a reverse path that held back the ACKs.
void bottleneck(const TestEvidence& v, std::vector<Finding>& out);

// Per test: ping's round trip beside it against idle, split by stage from both probes' stamps
// of its echoes (rules_latency.cpp, latency.hpp).
struct RttGrowth {
    const Trace* pinger = nullptr;
    const Trace* responder = nullptr;
    RttSplit loaded, idle;  // the test's phase; the run's idle ping phase
    double growth_us() const { return loaded.round_trip_us - idle.round_trip_us; }
    std::optional<double> stage_growth_us(RttStage s) const {
        const auto a = loaded.stage(s), b = idle.stage(s);
        return a && b ? std::optional<double>(*a - *b) : std::nullopt;
    }
};
// Empty unless both nodes' traces stamped enough echoes beside the test and in the idle phase.
std::optional<RttGrowth> rtt_growth(const TestEvidence& v);
void rtt_under_load(const TestEvidence& v, std::vector<Finding>& out);

// Per test: loss between the NICs that came with the sender's bursts, at 1 ms scale
// (rules_bursts.cpp, bursts.hpp).
void loss_in_bursts(const TestEvidence& v, std::vector<Finding>& out);

// Per test: the ledger (rules_ledger.cpp).
void trace_short(const TestEvidence& v, std::vector<Finding>& out);
void wrong_interface(const TestEvidence& v, std::vector<Finding>& out);
void loss_located(const TestEvidence& v, std::vector<Finding>& out);

// Whole input, after the tests (rules_ping.cpp).
void ping(const ExplainInput& in, Explanation& e);
// The client's and the server's own summary of one UDP test, when both are given and their loss
// disagrees: the receiver's count is the loss (rules_counters.cpp).
void client_server_loss(const ExplainInput& in, Explanation& e);

}  // namespace np::rules
