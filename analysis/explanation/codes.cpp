#include "analysis/explanation/codes.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace np {
namespace {

// Verdict-deciding findings that a test cannot also be "below the ceiling" with.
const std::vector<std::string_view> kBelowCeiling = {
    "BELOW_CEILING",  "HOST_LIMITED",      "RECEIVE_WINDOW_LIMITED",   "SEND_BUFFER_LIMITED",
    "PACING_LIMITED", "LIMIT_NOT_LOCATED", "BELOW_CEILING_NEEDS_TRACE"};

std::vector<std::string_view> plus(std::vector<std::string_view> a,
                                   std::initializer_list<std::string_view> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace

const std::vector<FindingCode>& finding_codes() {
    using S = Severity;
    static const std::vector<FindingCode> codes = {
        // ------------------------------------------------------------ throughput tests
        {"WRONG_INTERFACE", S::error, "wrong interface",
         "the probed data NIC carried less than half of what the tool moved: the traffic rode "
         "another interface, so its numbers say nothing about the data link",
         plus(kBelowCeiling, {"LINE_RATE_BOUND", "BIDIR_LINE_RATE_BOUND"})},
        {"TOOL_ERROR",
         S::error,
         "tool error",
         "the tool reported an error instead of a result; with traces, what the test's packets "
         "met on each node says why",
         {}},
        {"LINE_RATE_BOUND", S::info, "line-rate bound",
         "within 1.5 % of the model's goodput ceiling (or above it by no more than print "
         "rounding), or TCP whose sender reached it with nothing lost, the receiver short only "
         "by what was still queued when the test was cut: what the bytes on the wire are spent "
         "on",
         kBelowCeiling},
        {"BIDIR_LINE_RATE_BOUND", S::info, "line-rate bound (--bidir)",
         "a --bidir direction at the ceiling left by the other flow's ACKs", kBelowCeiling},
        {"ABOVE_CEILING",
         S::warn,
         "above the ceiling",
         "more than the wire can carry: the link is faster than the rate given, or the figure "
         "counts bytes still in buffers (info for a sender-side figure)",
         {}},
        {"LINK_WENT_DOWN",
         S::warn,
         "",
         "a data NIC lost its carrier during the test's phase (the kernel's carrier_down_count): "
         "an outage beside whatever verdict the test gets, which says whether it set the rate",
         {}},
        {"CPU_STOLEN",
         S::warn,
         "",
         "a test short of its ceiling while the hypervisor took a traced node's CPUs (steal in "
         "/proc/stat: on some CPU at least 1 % of the test and 20 ms): said beside the verdict, "
         "with the longest pause of what left the sender's NIC in 1 ms bins where it is no longer "
         "than the least taken from any of the sender's CPUs and the kernels counted nothing "
         "that could stop the flow that long by itself (a carrier lost, a TCP retransmission "
         "timeout); when in the phase the time was taken is not counted",
         {}},
        {"LOSS_IN_BURSTS",
         S::warn,
         "",
         "UDP lost between the NICs beside bursts the path could not carry at once: in 1 ms bins "
         "the sender's NIC ran 1.5 times or more the rate the flow arrived at, its mean fits "
         "that rate, and the loss is no more than the bursts brought above it; which packets "
         "the hop dropped is not seen, and the same mean without bursts tells a random loss "
         "apart",
         {}},
        {"RTT_UNDER_LOAD",
         S::info,
         "",
         "ping's round trip beside the test at least doubled over idle (and grew by 0.2 ms or "
         "more): the growth split by stage from both probes' stamps of its echoes — the "
         "pinger's egress queue, the path beyond both NICs, the answering host, its queue",
         {}},
        {"LINK_SHARED", S::warn, "link shared",
         "below the ceiling on a link that was full with other traffic beside the test (at "
         "least 95 % of its rate on a data NIC, 2 % or more not the test's): the test's share, "
         "not the link's capacity",
         plus(kBelowCeiling, {"SENDER_LIMITED"})},
        {"REVERSE_PATH_LIMITED", S::warn, "reverse path",
         "TCP below the ceiling while its ACKs were held back on the way to the sender: the "
         "receiver's egress shaper full (90 % of its rate or more) or ACKs dropped there; with "
         "the RTT under load against ping's",
         kBelowCeiling},
        {"SENDER_LIMITED", S::warn, "sender-limited",
         "UDP sent under 97 % of the offered rate although the offered load fits the link; "
         "what held the sender back where its host shows it, else that it was not located, "
         "with how long its threads waited for a CPU where the trace has it",
         kBelowCeiling},
        {"OFFERED_ABOVE_CEILING", S::info, "offered load above the ceiling",
         "the UDP offered load needs more wire than the link has: held back by the sender's "
         "queue (info), or the excess was dropped where the ledger says (warn)",
         plus(kBelowCeiling, {"SENDER_LIMITED"})},
        {"OFFERED_RATE_REACHED", S::info, "at the offered rate",
         "UDP ran at the rate it was asked for, which the link can carry", kBelowCeiling},
        {"BELOW_CEILING",
         S::warn,
         "below the ceiling",
         "under 98.5 % of the ceiling, with the cause: loss located on the path (with traces), "
         "or retransmits, window, CPU or stalls in the tool's output",
         {"TCP_RETRANSMITS", "BELOW_CEILING_NEEDS_TRACE", "HOST_LIMITED"}},
        {"HOST_LIMITED",
         S::warn,
         "host-limited",
         "below the ceiling because a host set the pace, named with its own evidence: TCP with "
         "no loss on the path and a host's CPU saturated (the tool's process at 90 % of a core "
         "or more), or the tool's process held back by its cgroup's CPU limit (node, cgroup, "
         "limit, throttled periods and time), or a UDP sender that sent less than the ceiling; "
         "with the per-packet rate; a saturated CPU the probe's account covers is said by its "
         "parts (the test's process, NET_RX, NET_TX, the NIC's IRQs, work from idle between "
         "the kernel's ticks), whether the test was bound to it, its CPU time per packet, and "
         "the next step by the part that dominates; a saturated core, or every CPU saturated, "
         "is the host's limit only where the test's own work (its process, the network's "
         "softirqs and IRQs; without the account, its processes' CPU time and the softirq time) "
         "was 85 % of the busy time or more: a core busy with other work while the test's "
         "process ran on another is ruled out, other CPUs saturated with other work are said "
         "as not ruled out, with how long the test's processes waited for a CPU while ready to "
         "run (their threads' run delay, where the kernel keeps it: <node>.cpu_wait_ms and "
         "<node>.cpu_wait_pct)",
         {"BELOW_CEILING_NEEDS_TRACE", "LIMIT_NOT_LOCATED"}},
        {"RECEIVE_WINDOW_LIMITED",
         S::warn,
         "receive window",
         "TCP below the ceiling with nothing lost and no host's CPU to name, held back by the "
         "receiver's window for at least half of the time it had data to send, by the "
         "sender's own account (tcp_info's rwnd_limited): the receiving application read "
         "slower than the data came, or its receive buffer is smaller than the path needs",
         {"BELOW_CEILING_NEEDS_TRACE", "LIMIT_NOT_LOCATED"}},
        {"SEND_BUFFER_LIMITED",
         S::warn,
         "send buffer",
         "TCP below the ceiling with nothing lost and no host's CPU to name, held back by its own "
         "send buffer for at least half of the time it had data to send, by the sender's own "
         "account (tcp_info's sndbuf_limited): too little buffer for the path's "
         "bandwidth-delay product",
         {"BELOW_CEILING_NEEDS_TRACE", "LIMIT_NOT_LOCATED"}},
        {"PACING_LIMITED",
         S::info,
         "pacing cap",
         "TCP below the ceiling with nothing lost, at the pacing rate its application capped "
         "each socket to (tcp_info's max_pacing_rate: SO_MAX_PACING_RATE, iperf3's --fq-rate): "
         "within 5 % of the cap times the streams; the rate was asked for (busy CPUs beside it "
         "are said, not named: a host that held the sender back would have held it below the "
         "cap)",
         {"BELOW_CEILING_NEEDS_TRACE", "LIMIT_NOT_LOCATED"}},
        {"LIMIT_NOT_LOCATED",
         S::warn,
         "limit not located",
         "below the ceiling with both data NICs traced and no stage showing its own signature "
         "(no loss, no full link or reverse path, no saturated CPU, no window or buffer by TCP's "
         "own account): what was ruled out, and how",
         {"BELOW_CEILING_NEEDS_TRACE"}},
        {"BELOW_CEILING_NEEDS_TRACE",
         S::warn,
         "below the ceiling (needs a trace)",
         "below the ceiling and neither the output nor a trace says why: run with the probe",
         {}},
        {"PATH_SLOWER_THAN_LINK",
         S::warn,
         "",
         "the path behaves like a rate below the link's nominal one (a shaper on a node's data "
         "iface, or TCP and UDP at the ceilings of a slower standard rate): every test is held "
         "against that rate; says where the hop is (the sender's own qdisc, or beyond its NIC)",
         {}},
        // ------------------------------------------------------------ loss, by where it was
        {"UDP_LOSS",
         S::warn,
         "",
         "UDP datagrams lost, recomputed from lost/total, placed by the ledger when traced "
         "(info under 1 %)",
         {},
         true},
        {"LOSS_AT_SENDER_STACK",
         S::warn,
         "",
         "the sender's kernel dropped packets of the flow before its egress hook (netfilter "
         "OUTPUT, no route, unresolved neighbour)",
         {},
         true},
        {"LOSS_AT_SENDER_QDISC",
         S::warn,
         "",
         "the sender's queue dropped packets of the flow: its qdisc, a tc egress action or the "
         "tx queue",
         {},
         true},
        {"LOSS_ON_WIRE",
         S::warn,
         "",
         "frames left the sender's NIC (measured after its queue) but never reached the "
         "receiver's, and no kernel or NIC counter there saw them",
         {},
         true},
        {"LOSS_AT_RECEIVER_NIC",
         S::warn,
         "",
         "the receiver dropped frames before its ingress hook: ring, backlog, XDP, or its NIC's "
         "drop counters",
         {},
         true},
        {"LOSS_AT_RECEIVER_FILTER",
         S::warn,
         "",
         "a filter on the receiver dropped packets of the flow: a tc ingress action or "
         "netfilter",
         {},
         true},
        {"LOSS_AT_RECEIVER_IP",
         S::warn,
         "",
         "the receiver's IP layer dropped packets of the flow",
         {},
         true},
        {"LOSS_AT_RECEIVER_SOCKET",
         S::warn,
         "",
         "the receiving socket dropped packets of the flow (SOCKET_RCVBUFF: its buffer was "
         "full), compared with the tool's lost count; why the application did not read faster "
         "where its own evidence says (its cgroup's CPU limit, or its core saturated, by the "
         "probe's account)",
         {},
         true},
        {"LOSS_AT_RECEIVER_TCP",
         S::warn,
         "",
         "the receiver's TCP dropped segments (zero window, out-of-order queue full, out of "
         "window)",
         {},
         true},
        {"LOSS_UNATTRIBUTED",
         S::warn,
         "",
         "packets of the flow missing between two points of the ledger without a kernel drop "
         "to name them, or dropped without a reason (NOT_SPECIFIED)",
         {},
         true},
        {"LOSS_NOT_LOCATED",
         S::warn,
         "",
         "packets of the flow lost on a node whose probe tier counts no drops: the stage is "
         "not located",
         {},
         true},
        // ------------------------------------------------------------ retransmits
        {"SPURIOUS_RETRANSMITS",
         S::info,
         "",
         "TCP resent segments that had arrived: the receiver discarded them as duplicates and "
         "nothing of the flow was lost on the path",
         {"RETRANSMITS_CONFIRMED", "TCP_RETRANSMITS"}},
        {"RETRANSMITS_CONFIRMED",
         S::info,
         "",
         "TCP retransmits counted on the sender's data NIC, set against the loss and the "
         "duplicates the ledger holds",
         {"TCP_RETRANSMITS"}},
        {"TCP_RETRANSMITS",
         S::info,
         "",
         "retransmits in the tool's output that did not keep the test below its ceiling",
         {}},
        {"PRINTED_LOSS_WRONG",
         S::warn,
         "",
         "the tool's printed loss percentage disagrees with its own counts (Windows ping "
         "counts \"Destination host unreachable\" answers as received: named so)",
         {}},
        {"LOSS_COUNTERS_WRONG",
         S::warn,
         "",
         "the tool's UDP loss counters contradict themselves (negative, more lost than the "
         "total, a percentage outside 0 to 100) or the bytes the same receiver counted, or a "
         "client's and a server's summary of one test disagree: which counter, the known cause "
         "(-O, a 32-bit counter wrapped), the true figure from the ledger, the receiver's bytes "
         "or its own count, the fix; explained, not refused",
         {}},
        {"REORDERED_NOT_LOST",
         S::info,
         "",
         "datagrams that arrived out of order (iperf3's out_of_order, a client's from "
         "--get-server-output), or TCP segments the sender's kernel saw reordered (iperf3 "
         "3.20's reorder, else the sending node's reordering counters in its trace): not loss",
         {}},
        {"TRACE_SHORT",
         S::warn,
         "",
         "a trace that covers less than half of the test it is held against is not used for "
         "it",
         {}},
        {"LINK_RATE_UNKNOWN", S::info, "", "no link rate given: no ceiling is claimed", {}},
        {"STREAMS_UNEVEN",
         S::info,
         "",
         "a test of several streams (iperf3 -P) whose slowest stream moved less than 75 % of "
         "the fastest: each stream's rate and, from its own ledger, what it lost (and TCP "
         "resent); the cause named only when the slowest stream's own loss sets it apart. "
         "Information: how the streams shared the test, not what limited its sum",
         {}},
        // ------------------------------------------------------------ run --repeat
        {"REPEAT_SPREAD",
         S::info,
         "",
         "a test run several times (run --repeat) with the same verdict every time: the median "
         "of what was measured, its spread, and each repetition",
         {}},
        {"VERDICT_FLIPS",
         S::warn,
         "",
         "a test run several times whose verdict changed between repetitions: each "
         "repetition's figure and verdict, so no conclusion rests on one of them",
         {}},
        // ------------------------------------------------------------ run --find-udp-ceiling
        {"UDP_CEILING_FOUND",
         S::info,
         "",
         "the highest UDP offered load that was sent and carried with loss under the threshold, "
         "from short traced tests (the model's ceiling first, then a bisection to 1 % of it): "
         "its share of the ceiling, each step, and what stopped it at the lowest load not "
         "carried, from that step's own counts (the sender's, with the step's own findings in "
         "`step_codes`; or the ledger's stage)",
         {}},
        {"UDP_CEILING_NOT_FOUND",
         S::warn,
         "",
         "the UDP ceiling search found no load carried: each one tried lost more than the "
         "threshold or was not sent (each step, and what stopped the lowest); or a step gave no "
         "result; or the search could not start (no link rate, no UDP result), and why",
         {}},
        // ------------------------------------------------------------ ping
        {"PING_NO_REPLY",
         S::error,
         "",
         "nothing came back to ping (warn when throughput tests on the same path carried data: "
         "only the echo was filtered)",
         {}},
        {"PING_LOSS", S::warn, "", "ping requests without a reply, recomputed from the counts", {}},
        {"PING_DUPLICATES",
         S::warn,
         "",
         "more than one reply per request: a broadcast address or an address conflict",
         {}},
        {"PING_RTT",
         S::info,
         "",
         "round-trip times; under Windows ping's 1-ms resolution, \"under 1 ms\"",
         {}},
        // ------------------------------------------------------------ the run and its nodes
        {"NODE_UNREACHABLE", S::error, "", "a node could not be reached or logged into", {}},
        {"NODE_IN_USE",
         S::error,
         "",
         "another np-explain run holds the node (its lock names the run, console user and "
         "since when): nothing was changed on either node",
         {}},
        {"IMAGE_NOT_BOOTED",
         S::error,
         "",
         "the node booted the PXE stage image, not the loaded one (no image marker)",
         {}},
        {"DATA_IFACE_MISSING", S::error, "", "the node has no interface of that name", {}},
        {"IPV6_DISABLED",
         S::error,
         "",
         "the data addresses are IPv6 and IPv6 is disabled on the node's data port (or in its "
         "kernel): it cannot take its address",
         {}},
        {"IPERF3_MISSING", S::error, "", "iperf3 is not installed on the node", {}},
        {"PING_MISSING", S::error, "", "ping is not installed on the client node", {}},
        {"CONGESTION_CONTROL_MISSING",
         S::error,
         "",
         "the TCP congestion control the run asks for (-C) is neither in a node's kernel nor a "
         "module it can load",
         {}},
        {"NO_CARRIER",
         S::error,
         "",
         "the data port has no carrier: no cable, or the wrong port for this row",
         {}},
        {"ADDRESS_CONFLICT",
         S::error,
         "",
         "the MAC that answers for the server's data address is not the server's data port's, "
         "or IPv6 duplicate address detection failed for a node's address: another host on the "
         "segment holds that address",
         {}},
        {"DIFFERENT_SEGMENT",
         S::error,
         "",
         "ARP (IPv6: neighbour discovery) on the data path went unanswered: the two ports are on "
         "different segments",
         {}},
        {"DATA_PATH_NO_ECHO",
         S::warn,
         "",
         "the server answers ARP (IPv6: neighbour discovery) but not ping on the data path (ICMP "
         "or ICMPv6 filtered)",
         {}},
        {"LINK_HALF_DUPLEX", S::warn, "", "a data link runs half duplex", {}},
        {"LINK_SPEED_MISMATCH", S::warn, "", "the two data links run at different speeds", {}},
        {"MTU_MISMATCH", S::warn, "", "the two data ports have different MTUs", {}},
        {"LINK_FACTS", S::info, "", "speed, duplex, MTU and driver as the NICs report them", {}},
        {"TRACE_MISSING", S::warn, "", "a node's probe handed over no trace", {}},
        {"PROBE_NOT_STARTED",
         S::warn,
         "",
         "a node's probe could not start: that node was measured with the tools alone",
         {}},
        {"PROBE_TIER",
         S::info,
         "",
         "a node's probe counted at a lower tier, and what that tier cannot tell",
         {}},
        {"TRACE_UNREADABLE", S::warn, "", "a node's trace could not be read", {}},
        {"TOOL_OUTPUT_UNREADABLE", S::warn, "", "a tool's output could not be read", {}},
        {"RUN_INCOMPLETE",
         S::error,
         "",
         "the run stopped early; what was measured before is saved and explained",
         {}},
        {"TEARDOWN_INCOMPLETE",
         S::error,
         "",
         "a node could not be reached to undo what the run started there",
         {}},
        {"UNDO_FAILED",
         S::warn,
         "",
         "a step the run took on a node (its data port's configuration, the server, the probe, "
         "the clients) whose undo ran and failed: what it printed, and np-explain teardown to "
         "finish the job",
         {}},
    };
    return codes;
}

const FindingCode& finding_code(std::string_view code) {
    const auto& codes = finding_codes();
    const auto it = std::find_if(codes.begin(), codes.end(),
                                 [&](const FindingCode& c) { return c.code == code; });
    if (it == codes.end())
        throw std::logic_error("finding code " + std::string(code) + " is not declared");
    return *it;
}

Finding make_finding(std::string_view code, std::string test) {
    Finding f;
    f.code = std::string(code);
    f.severity = finding_code(code).severity;
    f.test = std::move(test);
    return f;
}

namespace {

size_t rank(std::string_view code) {
    const auto& codes = finding_codes();
    const auto it = std::find_if(codes.begin(), codes.end(),
                                 [&](const FindingCode& c) { return c.code == code; });
    return it == codes.end() ? codes.size() : static_cast<size_t>(it - codes.begin());
}

// Codes read back from older documents may not be declared any more.
const FindingCode* declared(std::string_view code) {
    const size_t r = rank(code);
    return r < finding_codes().size() ? &finding_codes()[r] : nullptr;
}

}  // namespace

std::vector<Finding> without_superseded(std::vector<Finding> findings) {
    std::vector<size_t> order(findings.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return rank(findings[a].code) < rank(findings[b].code);
    });
    std::vector<bool> keep(findings.size(), true);
    for (size_t i : order) {
        for (size_t j : order) {
            if (j == i || !keep[j] || findings[j].test != findings[i].test) continue;
            if (rank(findings[j].code) >= rank(findings[i].code)) break;
            const FindingCode* by = declared(findings[j].code);
            if (by && std::find(by->supersedes.begin(), by->supersedes.end(), findings[i].code) !=
                          by->supersedes.end()) {
                keep[i] = false;
                break;
            }
        }
    }
    std::vector<Finding> out;
    for (size_t i = 0; i < findings.size(); ++i)
        if (keep[i]) out.push_back(std::move(findings[i]));
    return out;
}

std::string verdict_for(const std::vector<Finding>& findings, const std::string& fallback) {
    const FindingCode* best = nullptr;
    bool loss = false;
    for (const auto& f : findings) {
        const FindingCode* c = declared(f.code);
        if (!c) continue;
        if (!c->verdict.empty() && (!best || rank(c->code) < rank(best->code))) best = c;
        loss = loss || c->is_loss;
    }
    std::string v = best ? std::string(best->verdict) : fallback;
    if (loss) v += ", loss";
    return v;
}

}  // namespace np
