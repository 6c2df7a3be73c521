// Rules that hold a throughput test's output against the model's ceiling: line rate, the offered
// rate reached, --bidir's ACKs, and a test below the ceiling — its cause from the ledger where
// traces of the data NICs exist, else from the tool's own output — and TCP's retransmits.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

// A link outage set a TCP test's rate when the intervals it did not stall ran at least this
// share of the ceiling (the first one includes slow start).
constexpr double kOutageOthersFraction = 0.9;

int l4_header_bytes(const Ceiling& c) {
    const Frame& f = c.frames.front();
    return f.bytes_of("tcp_header") + f.bytes_of("tcp_timestamps") + f.bytes_of("udp_header");
}

// A range in the unit of its upper end, with 3 decimals: "9.415 to 9.425 Gbit/s".
std::string range_text(double lo, double hi) {
    const double unit = hi >= 1e9 ? 1e9 : 1e6;
    return fmt::format("{:.3f} to {:.3f} {}", lo / unit, hi / unit,
                       unit == 1e9 ? "Gbit/s" : "Mbit/s");
}

// UDP that was asked for a rate the wire can carry.
bool offered_fits(const TestEvidence& v) {
    const auto& t = v.test;
    return is_udp(t) && t.offered_bps && v.ceiling &&
           v.ceiling->wire_bps_for_payload(*t.offered_bps) <= v.model_bps();
}

}  // namespace

namespace {

// A rate above what the wire can carry: the sender's figure (bytes still queued), or a link
// faster than the rate given.
Finding above_ceiling_finding(const TestEvidence& v, double m) {
    const auto& t = v.test;
    const double ceiling = v.ceiling->goodput_bps;
    const bool sender_side = !t.received_bps;
    Finding f = make_finding("ABOVE_CEILING", t.label);
    if (sender_side) f.severity = Severity::info;
    f.title = fmt::format("{} is above the {} ceiling of a {}", rate_text(m, t.rate_resolution_bps),
                          format_rate(ceiling), link_words(v));
    f.evidence = {{"measured_mbps", rounded(m / 1e6)}, {"ceiling_mbps", rounded(ceiling / 1e6)}};
    if (sender_side) {
        f.detail =
            "This is the sender's figure: it counts bytes written into its socket, some still "
            "queued in buffers when the test ended. The receiver's figure is the one to hold "
            "against the wire.";
        f.next_step = "Compare with the server's output (what arrived).";
    } else {
        f.detail =
            "No payload rate can exceed what the wire carries: the link is faster than the rate "
            "given, or the traffic did not cross that link.";
        f.next_step = "Check the link speed (ethtool IFACE) and give it as --link.";
    }
    return f;
}

// A rate printed to 3 significant digits (iperf2): the range it stands for, and the transfer
// column's coarser one.
std::string rounding_text(const ThroughputTest& t, double m) {
    const double res = t.rate_resolution_bps;
    std::string text =
        fmt::format(" {} prints rates to 3 significant digits: {} means {}.", to_string(t.tool),
                    rate_text(m, res), range_text(m - res, m + res));
    const std::optional<double> bytes = t.received_bps ? t.received_bytes : t.sent_bytes;
    if (bytes && t.duration_s > 0 && t.bytes_resolution > 0) {
        const double lo = (*bytes - t.bytes_resolution) * 8 / t.duration_s;
        const double hi = (*bytes + t.bytes_resolution) * 8 / t.duration_s;
        text += fmt::format(
            " The transfer column is rounded harder, in binary units: {:.2f} to {:.2f} GiB, i.e. "
            "{} over {:.1f} s, so the rate column is the figure to use.",
            (*bytes - t.bytes_resolution) / 1073741824.0,
            (*bytes + t.bytes_resolution) / 1073741824.0, range_text(lo, hi), t.duration_s);
    }
    return text;
}

}  // namespace

void line_rate(const TestEvidence& v, std::vector<Finding>& out) {
    if (!v.ceiling || !v.measured_bps) return;
    const auto& t = v.test;
    const double ceiling = v.ceiling->goodput_bps;
    const double m = *v.measured_bps;
    const double res = t.rate_resolution_bps;
    const double link = v.model_bps();
    if (m - res > ceiling * (1 + kAboveCeilingSlack)) {
        out.push_back(above_ceiling_finding(v, m));
        return;
    }
    const auto tail = tcp_tail_bytes(v);
    if (m + res < ceiling * kLineRateFraction && !tail) return;
    // UDP asked for a rate the wire can carry ran at that rate: the offered load, not the
    // wire, set it (OFFERED_RATE_REACHED says so), even when it happens to be near the ceiling.
    if (offered_fits(v)) return;
    const bool tcp = t.transport == Transport::tcp;
    Finding f = make_finding("LINE_RATE_BOUND", t.label);
    f.title = fmt::format("{} is line-rate bound: {} of the {} {} ceiling", rate_text(m, res),
                          format_pct(m / ceiling), format_rate(ceiling), tcp ? "TCP" : "UDP");
    f.detail = fmt::format(
        "On a {} the most {} payload the wire can carry is {}: {}. The {} below {} is headers "
        "and framing, not a slow network.",
        link_words(v), tcp ? "TCP" : "UDP", format_rate(ceiling), describe_overhead(*v.ceiling),
        format_pct(1 - ceiling / link, 1), format_link_rate(link));
    f.evidence = {{"measured_mbps", rounded(m / 1e6)},
                  {"ceiling_mbps", rounded(ceiling / 1e6)},
                  {"pct_of_ceiling", rounded(100 * m / ceiling)},
                  {"payload_bytes", v.ceiling->payload_bytes_per_unit},
                  {"wire_bytes", v.ceiling->wire_bytes_per_unit}};
    if (tail) {
        const double sent = *t.sent_bps;
        f.detail += fmt::format(
            " The receiver counted {}, {} of the ceiling, but the sender's own count, {}, reached "
            "it and nothing of the flow was lost: {} bytes ({:.0f} ms at the ceiling) were still "
            "queued or in flight when the {:.0f} s test was cut, and arrived after the receiver "
            "stopped counting. A longer test (-t) shrinks this share.",
            rate_text(m, res), format_pct(m / ceiling), rate_text(sent, res), format_count(*tail),
            *tail * 8 / ceiling * 1e3, t.duration_s);
        f.evidence.emplace_back("sent_mbps", rounded(sent / 1e6));
        f.evidence.emplace_back("uncounted_tail_bytes", rounded(*tail, 0));
    }
    if (!tcp) {
        const Ceiling& tcp_ceiling = v.model->tcp;
        f.detail += fmt::format(
            " UDP's ceiling is above TCP's ({}) because its L4 header is {} bytes against TCP's "
            "{}.",
            format_rate(tcp_ceiling.goodput_bps), l4_header_bytes(*v.ceiling),
            l4_header_bytes(tcp_ceiling));
    }
    if (res > 0) f.detail += rounding_text(t, m);
    out.push_back(std::move(f));
}

void offered_rate_reached(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    if (!offered_fits(v) || !t.sent_bps || !reached_offered(t)) return;
    Finding f = make_finding("OFFERED_RATE_REACHED", t.label);
    f.title = fmt::format("UDP ran at the rate it was asked for, {} of the {} ceiling",
                          format_pct(*t.offered_bps / v.ceiling->goodput_bps),
                          format_rate(v.ceiling->goodput_bps));
    f.detail = fmt::format("It sent {} of the {} offered ({})",
                           rate_text(*t.sent_bps, t.rate_resolution_bps),
                           format_rate(*t.offered_bps), t.offered_from);
    // What the receiver got is the path's to say: most of it lost is no "offered load set the
    // rate" (UDP_LOSS places the loss).
    const auto lost = recomputed_loss_pct(t);
    if (lost && *lost >= kLossWarnPct)
        f.detail += fmt::format(
            ": the sender kept to the offered load, but the path delivered only {} of it ({} of "
            "the datagrams lost).",
            t.received_bps ? rate_text(*t.received_bps, t.rate_resolution_bps) : "part",
            format_pct(*lost / 100));
    else
        f.detail += ": the offered load set the rate, not a limit of the path.";
    f.evidence = {{"offered_mbps", rounded(*t.offered_bps / 1e6)},
                  {"sent_mbps", rounded(*t.sent_bps / 1e6)}};
    out.push_back(std::move(f));
}

// In --bidir each direction's wire also carries the ACKs of the opposite flow: with delayed ACKs
// one minimum-size ACK frame per two full segments.
void bidir_acks(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    if (!t.bidir || t.transport != Transport::tcp || !v.ceiling || !v.measured_bps) return;
    const Ceiling& c = *v.ceiling;
    if (*v.measured_bps + t.rate_resolution_bps >= c.goodput_bps * kLineRateFraction) return;
    const Frame& seg = c.frames.front();
    const int ack_l2 = kMacHeaderBytes + seg.bytes_of("ip_header") + seg.bytes_of("tcp_header") +
                       seg.bytes_of("tcp_timestamps") + kFcsBytes;
    const int ack_wire = std::max(ack_l2, kMinFrameBytes) + kL1OverheadBytes;
    const double shared =
        v.model_bps() * c.payload_bytes_per_unit / (c.wire_bytes_per_unit + ack_wire / 2.0);
    const double m = *v.measured_bps;
    if (m + t.rate_resolution_bps < shared * kLineRateFraction) return;
    Finding f = make_finding("BIDIR_LINE_RATE_BOUND", t.label);
    f.title = fmt::format(
        "{} is line-rate bound for --bidir: {} of the {} left by the other direction's ACKs",
        rate_text(m, t.rate_resolution_bps), format_pct(m / shared), format_rate(shared));
    f.detail = fmt::format(
        "With --bidir this direction's wire also carries the ACKs of the opposite flow: a "
        "{}-byte ACK frame (on the wire) per two {}-byte segments, so of the {} TCP ceiling {} "
        "remains for payload.",
        ack_wire, c.wire_bytes_per_unit, format_rate(c.goodput_bps), format_rate(shared));
    f.evidence = {{"measured_mbps", rounded(m / 1e6)},
                  {"bidir_ceiling_mbps", rounded(shared / 1e6)},
                  {"ack_wire_bytes", ack_wire}};
    out.push_back(std::move(f));
}

// Below the ceiling: with a ledger of both NICs the cause is loss on the path (placed), a host
// whose CPU was saturated, or not located; without one, what the tool's output holds.
// Host-side evidence the tool's output holds — window, CPU, stalls, buffers — as sentences for
// a finding's detail, each also added to `evidence`; `cpu` marks the tool's CPU figures, which
// the nothing-lost verdict names per node instead.
struct HostSign {
    std::string text;
    bool cpu = false;
};

std::vector<HostSign> host_evidence(const ThroughputTest& t, double ceiling, Evidence& evidence) {
    std::vector<HostSign> host;
    if (t.snd_cwnd_max_bytes && t.rtt_mean_us && *t.rtt_mean_us > 0) {
        const double window_bps = *t.snd_cwnd_max_bytes * 8.0 / (*t.rtt_mean_us * 1e-6);
        if (window_bps < ceiling) {
            host.push_back({fmt::format(
                "window-limited: the largest congestion window, {} B, per mean RTT of {:.0f} us "
                "allows at most {}",
                format_count(static_cast<double>(*t.snd_cwnd_max_bytes)), *t.rtt_mean_us,
                format_rate(window_bps))});
            evidence.emplace_back("window_limit_mbps", rounded(window_bps / 1e6));
        }
    }
    for (auto [cpu, side] :
         {std::pair{t.sender_cpu_pct, "sender"}, std::pair{t.receiver_cpu_pct, "receiver"}}) {
        if (cpu && *cpu >= kBusyCpuPct) {
            host.push_back({fmt::format("the {} was CPU-bound ({:.0f} % CPU)", side, *cpu), true});
            evidence.emplace_back(std::string(side) + "_cpu_pct", rounded(*cpu, 1));
        }
    }
    if (t.interval_bps.size() >= 5) {
        // Stalls: intervals far below the typical one (a loss recovery, a scheduling pause).
        std::vector<double> sorted = t.interval_bps;
        std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
        const double median = sorted[sorted.size() / 2];
        const auto stalls = std::count_if(t.interval_bps.begin(), t.interval_bps.end(),
                                          [&](double bps) { return bps < median / 2; });
        if (median > 0 && stalls > 0) {
            host.push_back({fmt::format(
                "{} of {} intervals ran below half the median interval rate ({}): the rate "
                "stalled rather than running slow throughout",
                stalls, t.interval_bps.size(), format_rate(median))});
            evidence.emplace_back("stalled_intervals", static_cast<int64_t>(stalls));
        }
    }
    if (t.rcvbuf_bytes && t.rtt_mean_us && *t.rtt_mean_us > 0) {
        const double bdp = ceiling / 8.0 * (*t.rtt_mean_us * 1e-6);
        if (static_cast<double>(*t.rcvbuf_bytes) < bdp / 4)
            evidence.emplace_back("rcvbuf_bytes", *t.rcvbuf_bytes);
    }
    return host;
}

// What the sending host's own resources showed while it set a UDP test's pace, added to `f`: its
// CPUs saturated, its process held back by its cgroup's CPU limit.
struct SendingHost {
    bool cpu = false;                 // its CPUs were saturated
    bool other_core = false;          // a core was, but with other work than the test's
    std::string core_step;            // what would move the core the probe's account named
    std::optional<StarvedTool> tool;  // its process, held back
};

// `out` with the sending process held back by its cgroup, where it was, added to `f`.
SendingHost with_starved_tool(const TestEvidence& v, Finding& f, SendingHost out) {
    out.tool = starved_tool(*v.traces.sender);
    if (out.tool) {
        f.detail += " Its process: " + out.tool->text + ".";
        for (const auto& e : out.tool->evidence) f.evidence.push_back(e);
    }
    return out;
}

// The sending host's evidence, added to `f`'s detail and evidence.
SendingHost add_sending_host(const TestEvidence& v, Finding& f) {
    SendingHost out;
    if (!v.traces.sender) return out;
    if (const auto cpu = saturated_cpu(*v.traces.sender, v.test.duration_s)) {
        if (!cpu->by_test()) {
            f.detail += " Its CPUs: " + cpu->other_work + ".";
            out.other_core = true;
            return with_starved_tool(v, f, out);
        }
        f.detail += " Its CPUs: " + cpu->text + ".";
        f.evidence.emplace_back(cpu->node + std::string(kCpuBusyPctKey),
                                rounded(100 * cpu->busy_fraction, 1));
        for (const auto& e : cpu->evidence) f.evidence.push_back(e);
        out.cpu = true;
        out.core_step = cpu->next_step;
    }
    return with_starved_tool(v, f, out);
}

// UDP whose sending application itself wrote less than the ceiling: HOST_LIMITED.
Finding udp_host_limited(const TestEvidence& v, const std::string& title,
                         const std::vector<HostSign>& host, Evidence evidence) {
    const auto& t = v.test;
    const double ceiling = v.ceiling->goodput_bps;
    // The sender's own count places the rate before its NIC; which of the host's resources set
    // it is said only where measured (a saturated CPU, iperf3's CPU figure).
    const std::string node =
        v.traces.sender ? v.traces.sender->trace->node : std::string("the sending host");
    Finding f = make_finding("HOST_LIMITED", t.label);
    f.title = title + ": the sending host set the pace";
    f.detail = fmt::format(
        "The sending application itself wrote only {} ({} of the ceiling){}, by its own "
        "count: the rate was set on {}, before its NIC",
        rate_text(*t.sent_bps, t.rate_resolution_bps), format_pct(*t.sent_bps / ceiling),
        t.offered_bps ? "" : ", with no offered rate (-b 0) to hold it back", node);
    if (t.datagrams_sent && t.duration_s > 0) {
        const double dps = double(*t.datagrams_sent) / t.duration_s;
        f.detail += fmt::format(
            " (~{:.0f} k datagrams/s, where the ceiling needs ~{:.0f} k; each costs a system "
            "call and a copy)",
            dps / 1e3, v.ceiling->units_per_second / 1e3);
        f.evidence.emplace_back("datagrams_per_s", rounded(dps, 0));
    }
    f.detail += ".";
    const SendingHost held = add_sending_host(v, f);
    for (const auto& h : host) f.detail += " Evidence: " + h.text + ".";
    if (!held.cpu && !held.tool && host.empty())
        f.detail += held.other_core
                        ? " Which of its resources held it (the socket buffer, the tool's own "
                          "pacing, waiting for a CPU) was not located."
                        : " Which of its resources held it (a core, the socket buffer, the "
                          "tool's own pacing) is not measured here.";
    if (*t.sent_bps > *v.measured_bps * 1.01)
        f.detail += fmt::format(" Of what it sent, {} arrived: see UDP_LOSS for the rest.",
                                rate_text(*v.measured_bps, t.rate_resolution_bps));
    f.evidence.emplace_back("sent_mbps", rounded(*t.sent_bps / 1e6));
    for (auto& e : evidence) f.evidence.push_back(std::move(e));
    f.next_step = held.tool                 ? lift_limit_step(*held.tool)
                  : !held.core_step.empty() ? held.core_step
                                            : "Send from more threads or cores (-P 2 … 4) or "
                                              "check the sender's CPU.";
    return f;
}

// UDP below the ceiling. UDP is not slowed by loss: either the sender sent less (the host set
// the pace) or it sent at the ceiling and the difference was lost (placed by UDP_LOSS and the
// ledger).
void udp_below_ceiling(const TestEvidence& v, const std::string& title,
                       const std::vector<HostSign>& host, Evidence evidence,
                       std::vector<Finding>& out) {
    const auto& t = v.test;
    if (*t.sent_bps + t.rate_resolution_bps < v.ceiling->goodput_bps * kLineRateFraction) {
        out.push_back(udp_host_limited(v, title, host, std::move(evidence)));
        return;
    }
    Finding f = make_finding("BELOW_CEILING", t.label);
    f.title = title;
    f.detail = fmt::format(
        "The sender sent {}, at the ceiling; what is missing at the receiver was lost{}.",
        rate_text(*t.sent_bps, t.rate_resolution_bps),
        v.ledger && v.ledger->complete() ? ": " + describe_loss(*v.ledger)
                                         : " (UDP_LOSS says how much)");
    f.evidence = std::move(evidence);
    f.next_step = "See the loss findings for where and why.";
    out.push_back(std::move(f));
}

// A test's intervals split at half the fastest one's rate: how many ran below it (none: not
// split), and the mean rate of the others. Empty with fewer than two intervals.
struct IntervalSplit {
    size_t slow = 0;
    double others_bps = 0;
};
std::optional<IntervalSplit> split_intervals(const std::vector<double>& bps) {
    if (bps.size() < 2) return std::nullopt;
    const double fastest = *std::max_element(bps.begin(), bps.end());
    IntervalSplit split;
    double others = 0;
    for (const double b : bps) {
        if (b < fastest / 2)
            ++split.slow;
        else
            others += b;
    }
    split.others_bps = others / double(bps.size() - split.slow);
    return split;
}

// The link down in the test's phase, and the tool's own intervals showing the time it cost: some
// far below the others, the others at the ceiling. Then the outage set the rate (nothing crosses
// a link while it is down, and TCP resumes only when its retransmission timer, doubled at each
// expiry, fires after the link is back), whatever little was lost.
std::optional<Finding> outage_finding(const TestEvidence& v, const Ledger& l,
                                      const std::string& title, const Evidence& evidence) {
    const auto& t = v.test;
    const auto outage = carrier_lost(v);
    const IntervalSplit split = split_intervals(t.interval_bps).value_or(IntervalSplit{});
    if (!outage || split.slow == 0 ||
        split.others_bps < v.ceiling->goodput_bps * kOutageOthersFraction)
        return std::nullopt;
    Finding f = make_finding("BELOW_CEILING", t.label);
    f.title = title;
    f.detail = fmt::format(
        "Held below the ceiling by the data link going down: the kernel counted the carrier "
        "lost on {} in this test's phase, and {} of the tool's {} intervals ran below half "
        "the rate of the others, which ran at {} ({} of the ceiling). Nothing crosses a link "
        "while it is down, and TCP resumes only when its retransmission timer (doubled at "
        "each expiry) fires after the link is back.",
        outage->where, split.slow, t.interval_bps.size(), format_rate(split.others_bps),
        format_pct(split.others_bps / v.ceiling->goodput_bps));
    if (l.lost() + l.unattributed() > 0)
        f.detail += fmt::format(" What was lost then is the outage's: {}.", describe_loss(l));
    f.evidence = evidence;
    for (const auto& e : outage->evidence) f.evidence.push_back(e);
    f.evidence.emplace_back("stalled_intervals", static_cast<int64_t>(split.slow));
    f.evidence.emplace_back("lost_packets", l.lost() + l.unattributed());
    f.next_step = "See LINK_WENT_DOWN for why the link went down, then run again.";
    return f;
}

// Loss on the path held the test: the ledger places it.
Finding path_loss_finding(const TestEvidence& v, const Ledger& l, const std::string& title,
                          const std::vector<HostSign>& host, Evidence evidence) {
    Finding f = make_finding("BELOW_CEILING", v.test.label);
    f.title = title;
    f.detail = fmt::format("Held below the ceiling by loss on the path: {}.", describe_loss(l));
    if (l.retransmitted && *l.retransmitted > 0)
        f.detail += fmt::format(" TCP resent {} segments and cut its window each time.",
                                format_count(double(*l.retransmitted)));
    if (const auto outage = carrier_lost(v))
        f.detail += fmt::format(" The data link also lost its carrier on {} (LINK_WENT_DOWN).",
                                outage->where);
    for (const auto& h : host) f.detail += " Also: " + h.text + ".";
    f.evidence = std::move(evidence);
    for (const auto* side : {&v.traces.sender, &v.traces.receiver})
        if (*side)
            if (const auto tool = starved_tool(**side)) {
                f.detail += " Also: " + tool->text + ".";
                for (const auto& e : tool->evidence) f.evidence.push_back(e);
            }
    f.evidence.emplace_back("lost_packets", l.lost() + l.unattributed());
    f.next_step = "See the loss findings for where and why.";
    return f;
}

// The hosts whose tool or CPUs ran flat out, by their own evidence: iperf3's CPU figures, a
// CPU saturated for the test, or the test's own process held back by its cgroup's limit.
struct BusyHosts {
    std::vector<std::string> said;
    Evidence evidence;
    std::string limit_step;  // a cgroup's CPU limit that held the tool back: the step to take
    std::string core_step;   // a core the probe's account named: what would move it
    // The hosts whose CPUs were saturated, but with other work than the test's (named by none):
    // their SaturatedCpu by node.
    std::map<std::string, SaturatedCpu> other_work;
    bool probed = false;     // a probe's trace of either node has CPU times
    bool accounted = false;  // … and its account of them (not with run --no-cpu-account)
    bool found() const { return !said.empty(); }
    std::string list() const {
        std::string out;
        for (size_t i = 0; i < said.size(); ++i) out += (i ? "; " : "") + said[i];
        return out;
    }
};

BusyHosts busy_hosts(const TestEvidence& v, const Ledger& l) {
    const auto& t = v.test;
    BusyHosts b;
    for (auto [cpu, node, side] : {std::tuple{t.sender_cpu_pct, l.sender_node, "sending"},
                                   std::tuple{t.receiver_cpu_pct, l.receiver_node, "receiving"}})
        if (cpu && *cpu >= kBusyCpuPct)
            b.said.push_back(
                fmt::format("{} ({} side: iperf3 at {:.0f} % of a core)", node, side, *cpu));
    for (const auto* side : {&v.traces.sender, &v.traces.receiver}) {
        if (!*side) continue;
        for (const auto& c : (*side)->phase.cpus) {
            b.probed = true;
            b.accounted = b.accounted || c.account.has_value();
        }
        if (const auto cpu = saturated_cpu(**side, t.duration_s); cpu && !cpu->by_test()) {
            for (const auto& e : cpu->wait) b.evidence.push_back(e);
            b.other_work[cpu->node] = *cpu;
        } else if (cpu) {
            b.said.push_back(cpu->text);
            b.evidence.emplace_back(cpu->node + std::string(kCpuBusyPctKey),
                                    rounded(100 * cpu->busy_fraction, 1));
            for (const auto& e : cpu->evidence) b.evidence.push_back(e);
            if (b.core_step.empty()) b.core_step = cpu->next_step;
        }
        // The test's own process held back on an otherwise idle host: its cgroup's limit.
        if (const auto tool = starved_tool(**side)) {
            b.said.push_back(tool->text);
            for (const auto& e : tool->evidence) b.evidence.push_back(e);
            if (b.limit_step.empty()) b.limit_step = lift_limit_step(*tool);
        }
    }
    return b;
}

// What was ruled out when no stage shows its own signature, one clause each.
std::string ruled_out_text(const TestEvidence& v, const std::optional<TcpLimit>& own,
                           Evidence& evidence) {
    const auto& t = v.test;
    std::string text =
        " No stage shows its own signature, so none is named. Ruled out: loss (the ledger above)";
    const PathLoads loads = path_loads(v);
    for (const auto& r : ruled_out(v, loads)) text += "; " + r;
    if (own) text += "; TCP's own windows: " + own->text;
    if (const auto q = unseen_queue(v, loads)) {
        text += "; " + q->text;
        for (const auto& e : q->evidence) evidence.push_back(e);
    }
    if (t.sender_cpu_pct || t.receiver_cpu_pct)
        text += fmt::format(
            "; a core held by the tool: iperf3's own CPU figures are sender {:.0f} %, "
            "receiver {:.0f} % (they miss the softirq work of receiving)",
            t.sender_cpu_pct.value_or(0), t.receiver_cpu_pct.value_or(0));
    else
        text += "; the tool's output has no CPU figures, so the hosts are not ruled out";
    return text;
}

// What to do when nothing was lost, by what was named.
std::string nothing_lost_next_step(const BusyHosts& busy, bool rwnd, bool sndbuf, const Ledger& l) {
    if (!busy.limit_step.empty()) return busy.limit_step;
    if (!busy.core_step.empty()) return busy.core_step;
    if (busy.found())
        return "Give the busy host's test more CPU: more streams (-P) on more cores, a faster "
               "core, IRQ affinity away from the tool's core; check cgroup CPU limits.";
    if (rwnd)
        return fmt::format(
            "Look at the receiver, {}: whether its application keeps up (its CPU, what else it "
            "does between reads) and its receive buffer (ss -tim: rb; net.ipv4.tcp_rmem, "
            "iperf3 -w).",
            l.receiver_node);
    if (sndbuf)
        return "Raise the sender's send buffer (net.ipv4.tcp_wmem, iperf3 -w) to at least the "
               "path's bandwidth-delay product.";
    // The cores: measured and none saturated (said among what was ruled out), measured without
    // the probe's account of them, or not measured.
    const std::string cores = cores_to_measure(busy.probed, busy.accounted, "on both nodes");
    return fmt::format(
        "Measure what was not: {}the socket's limits (ss -ti: rwnd_limited, sndbuf_limited), a "
        "longer test (-t) to leave slow start behind.",
        cores);
}

// The stage TCP's own account or the hosts name, said after what arrived: a host by its own
// evidence (and TCP agreeing), the receiver's window, the sender's buffer, or what was ruled out.
std::string named_stage_detail(const TestEvidence& v, const Ledger& l, const BusyHosts& busy,
                               const std::optional<TcpLimit>& own, bool rwnd, bool sndbuf,
                               Evidence& evidence) {
    if (busy.found()) {
        std::string text = " The host that set the pace: " + busy.list();
        if (rwnd || (own && own->sndbuf_share >= kTcpLimitedShare))
            text += ". TCP's own account agrees: " + own->text;
        return text;
    }
    if (rwnd) {
        const auto other = busy.other_work.find(l.receiver_node);
        return fmt::format(
            " TCP's own account names the stage: {}. The receiver ({}) did not take the data as "
            "fast as it came: its application read slower ({}), or its receive buffer is smaller "
            "than the path's bandwidth-delay product",
            own->text, l.receiver_node,
            other == busy.other_work.end()
                ? "its CPUs and its tool's show no saturation or CPU limit"
                : "its tool shows no CPU limit; " + other->second.other_work +
                      (!other->second.wait_said()
                           ? ": whether that work kept it from reading was not measured"
                           : ""));
    }
    if (sndbuf)
        return fmt::format(
            " TCP's own account names the stage: {}. The sender's socket buffer holds too "
            "little for the path's bandwidth-delay product (its application's writes, or "
            "net.ipv4.tcp_wmem)",
            own->text);
    return ruled_out_text(v, own, evidence);
}

// Nothing of the flow lost, and TCP paced to the cap its application set on the socket: the
// test measured what it asked for. Hosts that were busy as well are said, not named the cause.
Finding paced_finding(const TestEvidence& v, const std::string& title, const PacingCap& cap,
                      const std::string& delivered, const BusyHosts& busy) {
    Finding f = make_finding("PACING_LIMITED", v.test.label);
    f.title = title + ": held at the pacing rate its application set";
    f.detail = fmt::format(
        "{} {}. The rate was asked for, not met by the path: the sender held each socket to its "
        "cap.",
        delivered, cap.text);
    f.evidence = cap.evidence;
    f.next_step =
        "To measure the path, run without the cap (iperf3 without --fq-rate; np_pacing_rate "
        "unset); to measure at a rate of your choice, this is that measurement.";
    if (busy.found()) {
        f.detail += " The hosts were busy as well (" + busy.list() +
                    "), but that did not set the rate: it is the cap's.";
        for (const auto& e : busy.evidence) f.evidence.push_back(e);
    }
    return f;
}

// What the ledger says arrived: every frame that left the sender's NIC reached the receiver's.
std::string delivered_text(const Ledger& l) {
    return fmt::format(
        "Nothing of the flow was lost on the path: {} {} left {}'s NIC and {} arrived at {}'s, "
        "none dropped on the way.",
        format_count(double(l.points[2].count.value_or(0))), l.unit, l.sender_node,
        format_count(double(l.points[3].count.value_or(0))), l.receiver_node);
}

// The per-packet rate the hosts managed against the one the ceiling needs, its evidence added
// to `evidence`; empty without the sender's NIC count or a duration.
std::string frame_rate_text(const TestEvidence& v, const Ledger& l, Evidence& evidence) {
    const auto& sent = l.points[2].count;
    if (!(v.test.duration_s > 0 && sent)) return "";
    const double fps = double(*sent) / v.test.duration_s;
    const double needed = v.ceiling->frames_per_second;
    evidence.emplace_back("frames_per_s", rounded(fps, 0));
    evidence.emplace_back("ceiling_frames_per_s", rounded(needed, 0));
    return fmt::format(". The path moved ~{} k frames/s where the ceiling needs ~{} k frames/s",
                       fmt::format("{:.1f}", fps / 1e3), fmt::format("{:.1f}", needed / 1e3));
}

// Nothing of the flow lost: the cap the application set, a host by its own evidence (a saturated
// CPU, a cgroup's limit), TCP's own window or buffer, or — none showing — not located.
Finding nothing_lost_finding(const TestEvidence& v, const Ledger& l, const std::string& title,
                             const std::vector<HostSign>& host, Evidence evidence) {
    const auto& t = v.test;
    const std::string delivered = delivered_text(l);
    BusyHosts busy = busy_hosts(v, l);
    // A rate within 5 % of the cap the application set is the cap's, busy CPUs or not: a host
    // that held the sender back would have held it below the cap.
    if (const auto paced = pacing_cap(v)) return paced_finding(v, title, *paced, delivered, busy);
    // TCP's own account: its receive window or send buffer held it for most of its busy time.
    // With a host named that is how the host's pace reached the sender; without one, the
    // window or the buffer is the stage that set the rate.
    const auto own = tcp_limit(v);
    const bool rwnd = own && own->rwnd_share >= kTcpLimitedShare;
    const bool sndbuf = own && !rwnd && own->sndbuf_share >= kTcpLimitedShare;
    const char* code = busy.found() ? "HOST_LIMITED"
                       : rwnd       ? "RECEIVE_WINDOW_LIMITED"
                       : sndbuf     ? "SEND_BUFFER_LIMITED"
                                    : "LIMIT_NOT_LOCATED";
    Finding f = make_finding(code, t.label);
    f.title = title + (busy.found() ? ": host-limited"
                       : rwnd       ? ": held by the receiver's window"
                       : sndbuf     ? ": held by the sender's send buffer"
                                    : ": the limit was not located");
    f.detail = delivered;
    if (own)
        for (const auto& e : own->evidence) f.evidence.push_back(e);
    f.detail += named_stage_detail(v, l, busy, own, rwnd, sndbuf, f.evidence);
    f.detail += frame_rate_text(v, l, f.evidence);
    f.detail += ".";
    if (l.retransmitted && *l.retransmitted > 0)
        f.detail += fmt::format(
            " TCP still resent {} segments that had arrived ({} discarded as duplicates): "
            "their ACKs came back late, and each spurious retransmit cut the window.",
            format_count(double(*l.retransmitted)), format_count(double(l.duplicates())));
    for (const auto& h : host)
        if (!h.cpu) f.detail += " Also: " + h.text + ".";
    for (auto& e : evidence) f.evidence.push_back(std::move(e));
    for (auto& e : busy.evidence) f.evidence.push_back(std::move(e));
    f.next_step = nothing_lost_next_step(busy, rwnd, sndbuf, l);
    return f;
}

// Below the ceiling with both traces: the ledger says whether the path lost any of the flow;
// if nothing was lost, a host is named only when its CPU shows it, else the limit was not
// located (a full link or reverse path is LINK_SHARED / REVERSE_PATH_LIMITED, which supersede).
void below_ceiling_on_ledger(const TestEvidence& v, const Ledger& l, const std::string& title,
                             const std::vector<HostSign>& host, Evidence evidence,
                             std::vector<Finding>& out) {
    if (auto outage = outage_finding(v, l, title, evidence))
        out.push_back(std::move(*outage));
    else if (ledger_shows_loss(l))
        out.push_back(path_loss_finding(v, l, title, host, std::move(evidence)));
    else
        out.push_back(nothing_lost_finding(v, l, title, host, std::move(evidence)));
}

// The traced sides whose probes count no drops, as one clause ("the probes' tiers (node1-1 at
// kernel-counters) count no drops"); empty when there are none.
std::string low_tiers_text(const TestEvidence& v) {
    std::vector<std::string> low;
    for (const auto* side : {&v.traces.sender, &v.traces.receiver})
        if (*side && !measures((*side)->trace->tier).drops)
            low.push_back(
                fmt::format("{} at {}", (*side)->trace->node, to_string((*side)->trace->tier)));
    return low.empty() ? ""
                       : fmt::format("the probes' tiers ({}) count no drops", fmt::join(low, ", "));
}

// What the output says of retransmits when it holds no cause: none counted, or why it has no
// count.
std::string retransmits_text(const ThroughputTest& t) {
    // An absent count is not a zero: iperf3 on macOS or Windows and iperf2 without -e print none.
    if (t.transport != Transport::tcp || t.retransmits) return "no retransmits";
    // The receiving end's output: the sender's count is not in it.
    if (t.from_server != t.reverse)
        return "no retransmit count: this is the receiving end's output";
    return fmt::format("no retransmit count: {}{} does not report one",
                       t.tool_version.empty() ? to_string(t.tool) : t.tool_version,
                       t.platform.empty() ? "" : " on " + t.platform);
}

// Below the ceiling without both traces: what the tool's output holds, or ask for the traces.
void below_ceiling_from_output(const TestEvidence& v, const std::string& title,
                               const std::vector<HostSign>& host, Evidence evidence,
                               std::vector<Finding>& out) {
    const auto& t = v.test;
    // Traced, but at tiers that count no drops: say so, not "needs traces".
    const std::string tiers = low_tiers_text(v);
    std::vector<std::string> causes;
    if (t.retransmits && *t.retransmits > 0) {
        causes.push_back(fmt::format(
            "{} retransmits: TCP resent segments it took for lost and cut its window ({})",
            format_count(static_cast<double>(*t.retransmits)),
            tiers.empty() ? "traces of both data NICs tell real loss from spurious retransmits"
                          : tiers + ", so real loss is not told from spurious retransmits"));
        evidence.emplace_back("retransmits", *t.retransmits);
    }
    for (const auto& h : host) causes.push_back(h.text);
    Finding f =
        make_finding(causes.empty() ? "BELOW_CEILING_NEEDS_TRACE" : "BELOW_CEILING", t.label);
    f.title = title;
    f.evidence = std::move(evidence);
    const std::string full_tier =
        "Run the probes at the full tier (root with CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN, a "
        "kernel with BTF and drop reasons) to see whether anything was lost, and where.";
    if (causes.empty()) {
        f.detail = fmt::format(
            "The tool output holds no evidence of the cause ({}, no window, CPU or loss figure "
            "that explains it). ",
            retransmits_text(t));
        f.detail += tiers.empty() ? "Locating it needs traces of both data NICs: drops by kernel "
                                    "reason, NIC counters, wire bytes."
                                  : "The limit was not located: " + tiers + ".";
        f.next_step = tiers.empty() ? "Run again with the probe (np-explain run, or np-explain "
                                      "probe on both nodes) and explain with both traces."
                                    : full_tier;
    } else {
        f.detail = "Evidence in the output: ";
        for (size_t i = 0; i < causes.size(); ++i) f.detail += (i ? "; " : "") + causes[i];
        f.detail += ".";
        f.next_step = tiers.empty()
                          ? "Run with the probe on both data NICs to see whether anything was lost."
                          : full_tier;
    }
    out.push_back(std::move(f));
}

bool short_of_ceiling(const TestEvidence& v) {
    if (!v.ceiling || !v.measured_bps) return false;
    const auto& t = v.test;
    if (*v.measured_bps + t.rate_resolution_bps >= v.ceiling->goodput_bps * kLineRateFraction)
        return false;
    if (offered_fits(v) && reached_offered(t)) return false;  // the offered rate set it
    return !tcp_tail_bytes(v);  // a full link's tail is LINE_RATE_BOUND
}

void below_ceiling(const TestEvidence& v, std::vector<Finding>& out) {
    if (!short_of_ceiling(v)) return;
    const auto& t = v.test;
    const double m = *v.measured_bps;
    const double ceiling = v.ceiling->goodput_bps;

    Evidence evidence{{"measured_mbps", rounded(m / 1e6)},
                      {"ceiling_mbps", rounded(ceiling / 1e6)},
                      {"pct_of_ceiling", rounded(100 * m / ceiling)}};
    const std::vector<HostSign> host = host_evidence(t, ceiling, evidence);
    const std::string title =
        fmt::format("{} is {} of the {} ceiling", rate_text(m, t.rate_resolution_bps),
                    format_pct(m / ceiling), format_rate(ceiling));
    if (is_udp(t) && t.sent_bps) return udp_below_ceiling(v, title, host, std::move(evidence), out);
    if (v.ledger && v.ledger->complete())
        return below_ceiling_on_ledger(v, *v.ledger, title, host, std::move(evidence), out);
    below_ceiling_from_output(v, title, host, std::move(evidence), out);
}

// Retransmits: with a ledger, set against the loss and the duplicates it holds; without one,
// as the tool counted them.
namespace {

// Retransmits the probe counted where nothing was lost and most arrived twice: resent because
// their ACKs came back late or not at all.
Finding spurious_finding(const TestEvidence& v, const Ledger& l, int64_t tool, uint64_t dups,
                         Evidence evidence) {
    const auto& t = v.test;
    const uint64_t resent = *l.retransmitted;
    Finding f = make_finding("SPURIOUS_RETRANSMITS", t.label);
    f.title = fmt::format("{} TCP retransmits were spurious: nothing was lost",
                          format_count(double(resent)));
    std::vector<LedgerDrop> duplicates;
    for (const auto& x : l.drops)
        if (x.stage == Stage::duplicate) duplicates.push_back(x);
    const PathLoads loads = path_loads(v);
    f.detail = fmt::format(
        "The probe on {} counted {} segments resent{}, yet every frame that left its NIC "
        "reached {}'s and none was dropped there; {} arrived as duplicates and were "
        "discarded ({}). The originals had arrived: the sender resent them because "
        "their ACKs came back late or not at all, not because the path lost them{}.",
        l.sender_node, format_count(double(resent)),
        t.retransmits ? fmt::format(" (iperf3: {})", format_count(double(tool))) : "",
        l.receiver_node, format_count(double(dups)), describe_drops(duplicates),
        loads.reverse_drops > 0
            ? fmt::format(" — {} dropped {} of them on the way back ({})", l.receiver_node,
                          format_count(double(loads.reverse_drops)), loads.reverse_drop_reasons)
            : std::string());
    f.evidence = std::move(evidence);
    return f;
}

// Retransmits the probe counted: what they repaired, as far as the ledger places it.
Finding confirmed_finding(const TestEvidence& v, const Ledger& l, int64_t tool, uint64_t lost,
                          uint64_t dups, Evidence evidence) {
    const auto& t = v.test;
    const uint64_t resent = *l.retransmitted;
    Finding f = make_finding("RETRANSMITS_CONFIRMED", t.label);
    f.title = fmt::format("{} TCP retransmits on the data NIC", format_count(double(resent)));
    f.detail =
        fmt::format("The probe on {} counted {} retransmitted segments of the flow{}.",
                    l.sender_node, format_count(double(resent)),
                    t.retransmits ? fmt::format(" (iperf3: {})", format_count(double(tool))) : "");
    if (!l.complete()) {
        f.detail += " The receiver's trace is missing, so where they were lost is not known.";
    } else {
        if (lost > 0)
            f.detail += fmt::format(" They repaired loss the ledger places: {}.", describe_loss(l));
        if (dups > 0)
            f.detail += fmt::format(" {} resent segments arrived as duplicates (not needed).",
                                    format_count(double(dups)));
        if (lost == 0 && dups == 0)
            f.detail +=
                " Neither NIC saw a segment of the flow dropped or discarded as a duplicate: "
                "the retransmits left the sender and were taken as new data (a tail loss probe, "
                "or the original still queued when it fired).";
    }
    f.evidence = std::move(evidence);
    return f;
}

}  // namespace

void retransmits(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    if (t.transport != Transport::tcp) return;
    const int64_t tool = t.retransmits.value_or(0);
    if (v.ledger && v.ledger->retransmitted) {
        const Ledger& l = *v.ledger;
        const uint64_t resent = *l.retransmitted;
        if (resent == 0 && tool <= 0) return;
        const uint64_t lost = l.lost() + l.unattributed();
        const uint64_t dups = l.duplicates();
        Evidence evidence{{"retransmitted_segments", resent},
                          {"lost_segments", lost},
                          {"duplicate_segments", dups}};
        if (t.retransmits) evidence.emplace_back("tool_retransmits", tool);
        if (l.complete() && lost <= ledger_slack(resent) && dups * 2 >= resent && resent > 0)
            out.push_back(spurious_finding(v, l, tool, dups, std::move(evidence)));
        else if (resent > 0)
            out.push_back(confirmed_finding(v, l, tool, lost, dups, std::move(evidence)));
        return;
    }
    if (tool <= 0) return;
    Finding f = make_finding("TCP_RETRANSMITS", t.label);
    f.title = fmt::format("{} TCP retransmits", format_count(static_cast<double>(tool)));
    f.detail =
        "Some segments were sent again. They did not keep this test below the ceiling; whether "
        "they repaired loss (and where) or were spurious, traces of both data NICs would say.";
    f.evidence = {{"retransmits", tool}};
    out.push_back(std::move(f));
}

}  // namespace np::rules
