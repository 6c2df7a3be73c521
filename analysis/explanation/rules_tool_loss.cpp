// Loss as the tool counted it: UDP's lost datagrams placed by the ledger where there is one, and a
// loss figure the tool printed that its own counts contradict.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

// The stage holding most of the ledger's loss.
std::optional<Stage> main_loss_stage(const Ledger& l) {
    std::optional<Stage> best;
    uint64_t most = 0;
    for (const auto& d : l.drops) {
        if (!is_data_loss(d.stage) || d.housekeeping) continue;
        const uint64_t n = l.lost_in(d.stage);
        if (n > most) {
            most = n;
            best = d.stage;
        }
    }
    return best;
}

// The loss as the receiver's counts give it, with the rates it cost.
Finding udp_loss_counted(const ThroughputTest& t, double loss) {
    Finding f = make_finding("UDP_LOSS", t.label);
    f.severity = loss >= kLossWarnPct ? Severity::warn : Severity::info;
    f.title = fmt::format("{} % of UDP datagrams were lost ({} of {})", pct_number(loss),
                          format_count(static_cast<double>(*t.datagrams_lost)),
                          format_count(static_cast<double>(*t.datagrams_total)));
    f.detail = fmt::format(
        "Recomputed from the receiver's counts {}/{} (a printed percentage is never trusted).",
        *t.datagrams_lost, *t.datagrams_total);
    f.evidence = {{"lost_datagrams", *t.datagrams_lost},
                  {"total_datagrams", *t.datagrams_total},
                  {"loss_pct", rounded(loss)}};
    if (t.sent_bps && t.received_bps) {
        const double kept = 1.0 - loss / 100.0;
        f.detail += fmt::format(" The receiver got {} = {} × {:.3f} of what was sent.",
                                rate_text(*t.received_bps, t.rate_resolution_bps),
                                rate_text(*t.sent_bps, t.rate_resolution_bps), kept);
        f.evidence.emplace_back("sent_mbps", rounded(*t.sent_bps / 1e6));
        f.evidence.emplace_back("received_mbps", rounded(*t.received_bps / 1e6));
    }
    if (t.datagrams_sent) f.evidence.emplace_back("datagrams_sent", *t.datagrams_sent);
    return f;
}

// With both NICs traced, the ledger says where they went.
void placed_by_ledger(const Ledger& l, Finding& f) {
    const auto stage = main_loss_stage(l);
    if (stage) {
        f.title += fmt::format(", most at {}", to_string(*stage));
        f.detail += fmt::format(" The ledger of both data NICs places them: {}.", describe_loss(l));
        f.next_step = next_step_for(*stage, Transport::udp);
    } else {
        f.detail +=
            " The ledger of both data NICs cannot place them: neither node dropped a datagram "
            "of the flow, and the counts at the NICs agree within their accuracy (0.1 %). "
            "Datagrams still in flight when the test ended are counted lost by iperf3.";
    }
}

// Without traces nothing places the loss: that what was sent fitted the wire rules out only the
// test's own load overfilling it (a qdisc drop is not reported to a UDP sender, which counts the
// datagram sent, and a hop or the receiving host may drop too). The buffer the tool printed
// says how little it takes to overflow the receiving socket: a candidate, not a finding.
void judged_without_traces(const TestEvidence& v, Finding& f) {
    const auto& t = v.test;
    const bool sent_fits_wire =
        v.ceiling && t.sent_bps && v.ceiling->wire_bps_for_payload(*t.sent_bps) <= v.model_bps();
    if (sent_fits_wire) {
        f.title += ", not located";
        f.detail += fmt::format(
            " What was sent needs {} on the wire, within the {}: the test's own load did not "
            "overfill it. Where they were lost is not located without traces of both data NICs: "
            "the sender's queue (Linux does not tell a UDP sender of a qdisc drop, so the tool "
            "counted them sent), a hop between the nodes, or the receiving host.",
            format_rate(v.ceiling->wire_bps_for_payload(*t.sent_bps)), link_words(v));
    }
    if (t.socket_buffer_bytes && t.sent_bps) {
        // What the buffer holds at most (the kernel also charges each datagram's overhead),
        // and how long that lasts at the rate the datagrams arrived.
        const int payload = t.payload_bytes.value_or(1470);
        const double held = static_cast<double>(*t.socket_buffer_bytes) / payload;
        const double ms = held * payload * 8.0 / *t.sent_bps * 1e3;
        f.detail += fmt::format(
            " The UDP buffer is {} on the {}{}: at most ~{:.0f} datagrams, {:.2f} ms of traffic "
            "at this rate",
            t.socket_buffer_text, t.socket_buffer_side,
            t.socket_buffer_side == "client" ? " (the server's default is usually the same)" : "",
            held, ms);
        f.evidence.emplace_back("udp_buffer", t.socket_buffer_text);
        f.evidence.emplace_back("udp_buffer_bytes", *t.socket_buffer_bytes);
        if (ms < 5.0) {
            f.detail +=
                ", so any pause of the receiving process overflows it: a receive-buffer "
                "overflow is a candidate, which only a trace confirms or rules out (drop reason "
                "SOCKET_RCVBUFF, UdpRcvbufErrors).";
            f.next_step =
                "Raise the receive buffer (iperf -s -u -w 4M, with sysctl net.core.rmem_max "
                "raised to allow it) or lower -b; run with the probe to see where the datagrams "
                "are dropped.";
        } else {
            f.detail += ".";
            f.next_step = "Run with the probe on both data NICs to see where they are dropped.";
        }
    } else if (sent_fits_wire) {
        f.detail += " A full receive buffer is a candidate; only a trace places the loss.";
        f.next_step =
            "Raise the receiver's buffer (-w, net.core.rmem_max) or lower -b; run with the "
            "probe on both data NICs to see where the datagrams are dropped.";
    } else {
        f.next_step =
            "Run with the probe on both data NICs to see where they are dropped (sender qdisc, "
            "wire, receiver NIC or socket).";
    }
}

}  // namespace

void udp_loss(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    const auto loss = recomputed_loss_pct(t);
    if (!is_udp(t) || !loss || *t.datagrams_lost <= 0) return;
    Finding f = udp_loss_counted(t, *loss);
    if (v.ledger && v.ledger->complete())
        placed_by_ledger(*v.ledger, f);
    else
        judged_without_traces(v, f);
    out.push_back(std::move(f));
}

void printed_loss(const TestEvidence& v, std::vector<Finding>& out) {
    const auto& t = v.test;
    const auto loss = recomputed_loss_pct(t);
    if (!loss || !t.printed_loss_pct) return;
    // iperf2 prints %.2g: allow its rounding; iperf3 JSON is exact.
    const double slack = std::max(0.05, 0.06 * *loss);
    if (std::fabs(*t.printed_loss_pct - *loss) <= slack) return;
    Finding f = make_finding("PRINTED_LOSS_WRONG", t.label);
    f.title = fmt::format("The printed loss {:g} % disagrees with the counts ({} %)",
                          *t.printed_loss_pct, pct_number(*loss));
    f.detail = fmt::format(
        "{} printed \"{}\", but {}/{} is {} %: the printed figure is wrong, the counts are "
        "right.",
        to_string(t.tool), t.printed_loss_text, *t.datagrams_lost, *t.datagrams_total,
        pct_number(*loss));
    if (t.tool == Tool::iperf2)
        f.detail +=
            " A known cause: iperf 2.2.x clients print 0 % when the server's report lacks the "
            "extended header.";
    f.evidence = {{"printed", t.printed_loss_text}, {"recomputed_loss_pct", rounded(*loss)}};
    f.next_step = "Use the lost/total counts, not the percentage, when reporting loss.";
    out.push_back(std::move(f));
}

}  // namespace np::rules
