// Offered load and the sender: UDP asked for more than the path can carry, and a sender that did
// not send what it was asked to.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {

namespace {

// What the sender counted, against the ceiling and what was lost: whether the excess was held
// back on its host rather than dropped on the way.
struct OfferedExcess {
    std::optional<double> loss;  // the receiver's loss, recomputed from its counts
    bool counted_more = false;   // the sender counted more than fits in the test's time
    bool held_back = false;
};

OfferedExcess offered_excess(const TestEvidence& v) {
    const auto& t = v.test;
    OfferedExcess e;
    e.loss = recomputed_loss_pct(t);
    // Held back: what the sender counted as sent fits the wire, so the excess never left the
    // host (any loss of what did is another matter, placed by UDP_LOSS). Else the sender pushed
    // more than the wire carries, and the excess was dropped on the way.
    // A complete ledger that lost nothing says so whatever the sender counted: a short test's
    // count holds what was still in its queue when the test was cut.
    const bool queue_dropped = v.ledger && v.ledger->lost_in(Stage::sender_queue) > ledger_slack(0);
    const bool ledger_clean =
        v.ledger && v.ledger->complete() && v.ledger->lost() == 0 && v.ledger->unattributed() == 0;
    e.counted_more = t.sent_bps && *t.sent_bps - t.rate_resolution_bps >
                                       v.ceiling->goodput_bps * (1 + kAboveCeilingSlack);
    // So does a receiver that counted (almost) nothing lost.
    const bool received_all = e.loss && *e.loss < 0.1;
    // Without the sender's count, only the receiver's (or the ledger) can say it was held back.
    e.held_back =
        !queue_dropped && (ledger_clean || received_all || (t.sent_bps && !e.counted_more));
    return e;
}

// Held back: by its own queue when the probe's samples found it holding packets most of the
// test and the sender sent about what the link drains it at (a queue found holding packets
// while the sender sent far less — a sender its cgroup throttles, sending in bursts — did not set
// that rate); else all that is measured is that the excess never left the host.
std::string held_back_text(const TestEvidence& v, const OfferedExcess& e, const std::string& got) {
    const auto& t = v.test;
    const auto queue =
        v.traces.sender ? queue_backlog(*v.traces.sender) : std::optional<QueueBacklog>{};
    const bool at_ceiling = t.sent_bps && *t.sent_bps >= v.ceiling->goodput_bps * kSenderShortfall;
    return fmt::format(
        "The sender was held back {}: it sent {}{}{}, so the excess never left the host.",
        at_ceiling && queue && queue->share() >= kStandingQueueShare
            ? fmt::format("by its own queue ({})", queue->text())
            : std::string("on its own host"),
        got,
        e.counted_more ? " (more than fits in the test's time: the last of it was still queued "
                         "when the test was cut)"
                       : "",
        e.loss && *e.loss > 0
            ? fmt::format(" (of which {:.2f} % was lost on the way: see UDP_LOSS)", *e.loss)
            : std::string(" and nothing was lost"));
}

// Held back below the ceiling on its own host: the core that set the pace, where the sender's
// trace shows one saturated (its own evidence; none shown, nothing is said of the host's parts).
void say_sending_core(Finding& f, const TestEvidence& v) {
    const auto& t = v.test;
    if (!v.traces.sender || !t.sent_bps || *t.sent_bps >= v.ceiling->goodput_bps * kSenderShortfall)
        return;
    const auto cpu = sending_core(*v.traces.sender, t.duration_s);
    if (!cpu) return;
    f.detail += " What held it there: " + cpu->text + ".";
    add_saturated_cpu(f, *cpu);
}

// Dropped on the way: where, as far as the evidence says, and the walk down to the true ceiling.
void say_dropped(Finding& f, const TestEvidence& v, const OfferedExcess& e,
                 const std::string& got) {
    const auto& t = v.test;
    f.next_step = fmt::format(
        "Walk -b down (the model's ceiling is {}) until the loss stops: that is the path's true "
        "ceiling.",
        format_rate(v.ceiling->goodput_bps));
    if (v.ledger && v.ledger->complete()) {
        f.detail += fmt::format(
            "The sender pushed {} into its socket, more than fits; the excess was dropped{}, and "
            "the ledger places it: {}.",
            got,
            e.loss ? fmt::format(" ({} % of the datagrams lost)", pct_number(*e.loss))
                   : std::string(),
            describe_loss(*v.ledger));
    } else if (e.loss) {
        f.detail += fmt::format(
            "The sender pushed {} into its socket, more than fits; the excess was dropped: {} % "
            "of the datagrams were lost. The sender's qdisc or NIC, the path, or the receiver "
            "dropped them: traces of both data NICs say which.",
            got, pct_number(*e.loss));
    } else if (!t.sent_bps) {
        // Neither end's count: held back or dropped on the way, nothing says which.
        f.detail +=
            "This output holds neither the sender's count of what it sent nor the receiver's "
            "lost/total, so whether the excess was held back on the sending host or dropped on "
            "the way is not located.";
        f.next_step =
            "Give the client's and the server's outputs (iperf3 -J --get-server-output), or run "
            "with both probes, to say where the excess went.";
    } else {
        // No receiver's counts: the loss is unknown, never 0.
        f.detail += fmt::format(
            "The sender pushed {} into its socket, more than fits, so the excess was dropped on "
            "the way; how much, this output does not say: {}. The sender's qdisc or NIC, the "
            "path, or the receiver dropped it: traces of both data NICs say which.",
            got,
            t.receiver_report_missing
                ? "the receiver's report never came back (\"did not receive ack of last "
                  "datagram\"), so its lost/total are missing"
                : "it holds no receiver's lost/total");
        if (t.receiver_report_missing)
            f.next_step +=
                " Give the server's own output with the client's, or check that nothing filters "
                "the server's UDP replies.";
    }
}

}  // namespace

void offered_above_ceiling(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    if (!is_udp(t) || !t.offered_bps || !v.ceiling) return;
    const double link = v.model_bps();
    const double wire = v.ceiling->wire_bps_for_payload(*t.offered_bps);
    if (wire <= link) return;
    const OfferedExcess e = offered_excess(v);
    const std::string got =
        t.sent_bps ? rate_text(*t.sent_bps, t.rate_resolution_bps) : std::string("more");
    Finding f = make_finding("OFFERED_ABOVE_CEILING", t.label);
    f.severity = e.held_back ? Severity::info : Severity::warn;
    f.title = fmt::format("{} of UDP payload needs {} on the wire, more than the {}",
                          format_rate(*t.offered_bps), wire_text(wire), link_words(v));
    f.detail = fmt::format(
        "Each {}-byte datagram costs {} bytes on the wire, so the offered {} of payload needs "
        "{}; at most {} of payload fits. ",
        v.ceiling->payload_bytes_per_unit, v.ceiling->wire_bytes_per_unit,
        format_rate(*t.offered_bps), wire_text(wire), format_rate(v.ceiling->goodput_bps));
    f.evidence = {{"offered_mbps", rounded(*t.offered_bps / 1e6)},
                  {"wire_needed_mbps", rounded(wire / 1e6)},
                  {"link_mbps", rounded(link / 1e6)},
                  {"ceiling_mbps", rounded(v.ceiling->goodput_bps / 1e6)}};
    if (e.held_back) {
        f.detail += held_back_text(v, e, got);
        say_sending_core(f, v);
    } else
        say_dropped(f, v, e, got);
    if (e.loss) f.evidence.emplace_back("loss_pct", rounded(*e.loss));
    out.push_back(std::move(f));
}

namespace {

// Whether iperf3 sent with UDP GSO (test_start.gso), and what turning it on would change.
void say_gso(Finding& f, const ThroughputTest& t) {
    if (!t.udp_gso) return;
    f.detail += *t.udp_gso ? " UDP GSO was on (iperf3's test_start.gso)."
                           : " UDP GSO was off (iperf3's test_start.gso): one system call "
                             "per datagram.";
    f.evidence.emplace_back("udp_gso", *t.udp_gso);
    if (!*t.udp_gso)
        f.next_step += " With iperf3 3.21 or newer, --gsro sends many datagrams per call.";
}

// The datagram rate the sender reached and, from one sending thread, what each datagram cost it.
void say_datagram_cost(Finding& f, const ThroughputTest& t, double dgram_rate) {
    f.detail += fmt::format(" That is ~{:.0f} k datagrams/s", dgram_rate / 1e3);
    if (t.datagrams_sent)
        f.detail += fmt::format(" ({} datagrams of {} B in {:.1f} s)",
                                format_count(static_cast<double>(*t.datagrams_sent)),
                                t.payload_bytes.value_or(0), t.duration_s);
    // One sending thread (iperf2 -P 1, iperf3 -P 1): the time it had for each datagram is what
    // a datagram cost it, system call and copy included.
    if (t.streams == 1 && dgram_rate > 0) {
        const double ns = 1e9 / dgram_rate;
        f.detail += fmt::format(
            ": from one sending thread, one datagram every {:.2f} µs, which is what each cost it "
            "(a system call and a copy) if that thread was never idle",
            ns / 1e3);
        f.evidence.emplace_back("ns_per_datagram", rounded(ns, 0));
    }
    f.detail += ".";
    f.evidence.emplace_back("datagrams_per_s", rounded(dgram_rate, 0));
}

// What held back a UDP sender that sent less than it was asked to, by its own evidence: its
// process throttled by its cgroup, or its core saturated (sending_core), in the sending host's
// trace; else iperf3's own figure of the sending process's CPU, for one stream. Where none shows,
// the limit was not located: what the traces ruled out, what they did not, and what to measure
// next.
void say_what_held_the_sender(Finding& f, const TestEvidence& v) {
    const auto& t = v.test;
    if (v.traces.sender) {
        if (const auto tool = starved_tool(*v.traces.sender)) {
            f.detail += " What held it back: " + tool->text + ".";
            for (const auto& e : tool->evidence) f.evidence.push_back(e);
            f.next_step = lift_limit_step(*tool);
            return;
        }
        if (const auto cpu = sending_core(*v.traces.sender, t.duration_s)) {
            f.detail += " What held it back: " + cpu->text + ".";
            add_saturated_cpu(f, *cpu);
            return;
        }
    }
    // The figure sums the process's threads: only one sending thread (one stream) is shown
    // flat out by it.
    if (t.streams == 1 && t.sender_cpu_pct && *t.sender_cpu_pct >= kBusyCpuPct) {
        f.detail += fmt::format(
            " What held it back: the sending process itself, at {:.0f} % of a core by iperf3's "
            "own CPU figure.",
            *t.sender_cpu_pct);
        f.evidence.emplace_back("sender_cpu_pct", rounded(*t.sender_cpu_pct, 1));
        return;
    }
    if (!v.traces.sender) {
        f.detail += " Without a trace of the sending host, what held it back is not measured.";
        return;
    }
    std::vector<std::string> out, not_out;
    for (auto& r : ruled_out(v, path_loads(v))) {
        if (r.starts_with(kNotRuledOut))
            not_out.push_back(r.substr(kNotRuledOut.size()));
        else
            out.push_back(std::move(r));
    }
    if (t.sender_cpu_pct)
        out.push_back(fmt::format("the sending process at its own CPU figure: {:.0f} % of a core",
                                  *t.sender_cpu_pct));
    f.detail +=
        " What held it back was not located: nothing the traces measured shows its own "
        "signature.";
    if (!out.empty()) f.detail += fmt::format(" Ruled out: {}.", fmt::join(out, "; "));
    if (!not_out.empty())
        f.detail += fmt::format(" Not ruled out, but not shown to hold the sender either: {}.",
                                fmt::join(not_out, "; "));
    // How long the sender's threads waited to run, measured: said once (the clause of CPUs
    // saturated with other work may have said it), and no longer a step to take.
    const auto wait = processes_wait(*v.traces.sender);
    if (wait) {
        if (std::none_of(not_out.begin(), not_out.end(),
                         [&](const std::string& r) { return r.find(wait->text) != r.npos; }))
            f.detail += fmt::format(" On {}, {}.", v.traces.sender->trace->node, wait->text);
        for (const auto& e : wait->evidence) f.evidence.push_back(e);
    }
    const auto& cpus = v.traces.sender->phase.cpus;
    const std::string cores = cores_to_measure(
        !cpus.empty(),
        std::any_of(cpus.begin(), cpus.end(), [](const CpuTime& c) { return c.account; }),
        "on the sender");
    f.next_step = fmt::format(
        "Measure what was not: {}{}iperf3's pacing timer (--pacing-timer), its socket's send "
        "buffer (-w).",
        cores,
        wait ? ""
             : "how long the sending thread waited to run (perf sched latency; or give it a "
               "core of its own with iperf3 -A), ");
}

}  // namespace

void sender_limited(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    if (!is_udp(t) || !t.offered_bps || !t.sent_bps || reached_offered(t)) return;
    std::optional<double> wire;
    if (v.ceiling) {
        wire = v.ceiling->wire_bps_for_payload(*t.offered_bps);
        if (*wire > v.model_bps()) return;  // held back by the link: OFFERED_ABOVE_CEILING
    }
    const int payload = t.payload_bytes.value_or(0);
    std::optional<double> dgram_rate;
    if (t.datagrams_sent && t.duration_s > 0)
        dgram_rate = static_cast<double>(*t.datagrams_sent) / t.duration_s;
    else if (payload > 0)
        dgram_rate = *t.sent_bps / (8.0 * payload);
    const std::string sent = rate_text(*t.sent_bps, t.rate_resolution_bps);
    const std::string offered = rate_text(*t.offered_bps, t.rate_resolution_bps);
    Finding f = make_finding("SENDER_LIMITED", t.label);
    f.title =
        fmt::format("The UDP sender reached {} of the {} offered: sender-limited", sent, offered);
    f.detail = fmt::format("It sent {} of the {} asked for ({} from {}).", sent, offered,
                           format_pct(*t.sent_bps / *t.offered_bps, 1), t.offered_from);
    f.evidence = {{"offered_mbps", rounded(*t.offered_bps / 1e6)},
                  {"sent_mbps", rounded(*t.sent_bps / 1e6)}};
    f.next_step =
        "Spread the sending over more threads/cores (-P 2 … 4) or check the sender's CPU; the "
        "offered load itself fits the link.";
    say_gso(f, t);
    if (dgram_rate) say_datagram_cost(f, t, *dgram_rate);
    if (wire) {
        f.detail += fmt::format(
            " The offered {} needs {} on the wire ({} B per {}-byte datagram), under the {}: the "
            "offered load fits it. The sending application itself sent less (a system call and a "
            "copy per datagram).",
            offered, wire_text(*wire), v.ceiling->wire_bytes_per_unit,
            v.ceiling->payload_bytes_per_unit, link_words(v));
        f.evidence.emplace_back("offered_wire_mbps", rounded(*wire / 1e6));
    }
    say_what_held_the_sender(f, v);
    out.push_back(std::move(f));
}

}  // namespace np::rules
