#include "analysis/explain.hpp"

#include "analysis/trace_findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/error.hpp"
#include "analysis/format.hpp"
#include "analysis/trace_findings.hpp"

namespace np {
namespace {

// Within this fraction below the ceiling a test is line-rate bound: a 1 GbE TCP run at 934
// (99.2 %) is, and so is a 100 Mbit/s tbf-shaped one at 93.99 (99.8 %).
constexpr double kLineRateFraction = 0.985;
// Above the ceiling by more than this (beyond the tool's print rounding) is not measurement
// jitter: the link is faster than --link says, or the figure is not what crossed the wire.
constexpr double kAboveCeilingSlack = 0.005;
// A UDP sender below this fraction of the offered rate did not send what it was asked to.
constexpr double kSenderShortfall = 0.97;
// UDP loss at or above this (percent) is a warning; below it, information.
constexpr double kLossWarnPct = 1.0;

std::string mbps(double bps) {
    return fmt::format("{:.2f}", bps / 1e6);
}
std::string pct_number(double pct) {
    return fmt::format("{:.2f}", pct);
}

// "8.39 Gbit/s" for figures read from a tool that printed 3 significant digits, so the text
// repeats the tool's own figure; format_rate otherwise.
std::string rate_text(double bps, double resolution) {
    if (resolution > 0) {
        const double unit = bps >= 1e9 ? 1e9 : 1e6;
        const int decimals =
            std::clamp(static_cast<int>(std::lround(-std::log10(2 * resolution / unit))), 0, 3);
        return fmt::format("{:.{}f} {}", bps / unit, decimals, unit == 1e9 ? "Gbit/s" : "Mbit/s");
    }
    return format_rate(bps);
}

// A range in the unit of its upper end, with 3 decimals: "9.415 to 9.425 Gbit/s".
std::string range_text(double lo, double hi) {
    const double unit = hi >= 1e9 ? 1e9 : 1e6;
    return fmt::format("{:.3f} to {:.3f} {}", lo / unit, hi / unit,
                       unit == 1e9 ? "Gbit/s" : "Mbit/s");
}

// Wire loads are compared with a nominal link rate, so above 1 Gbit/s they read in Gbit/s with
// enough digits to see 1.046 against 1.
std::string wire_text(double bps) {
    return bps >= 1e9 ? fmt::format("{:.3f} Gbit/s", bps / 1e9) : format_rate(bps);
}

Finding& add(Explanation& e, const TestView& v, Finding f) {
    f.evidence.insert(f.evidence.begin(), {"test", v.test.label});
    if (!v.test.source.empty()) f.evidence.insert(f.evidence.begin() + 1, {"file", v.test.source});
    v.verdict.codes.push_back(f.code);
    e.findings.push_back(std::move(f));
    return e.findings.back();
}

bool has(const Verdict& v, const std::string& code) {
    return std::find(v.codes.begin(), v.codes.end(), code) != v.codes.end();
}

std::optional<double> recomputed_loss_pct(const ThroughputTest& t) {
    if (!t.datagrams_lost || !t.datagrams_total || *t.datagrams_total <= 0) return std::nullopt;
    return 100.0 * static_cast<double>(*t.datagrams_lost) / static_cast<double>(*t.datagrams_total);
}

int l4_header_bytes(const Ceiling& c) {
    const Frame& f = c.frames.front();
    return f.bytes_of("tcp_header") + f.bytes_of("tcp_timestamps") + f.bytes_of("udp_header");
}

// ---------------------------------------------------------------- whole-input rules

void rule_tool_failures(const ExplainInput& in, Explanation& e) {
    for (const auto& f : in.measurements.failures) {
        Finding out{"TOOL_ERROR",
                    Severity::error,
                    fmt::format("{} reported an error instead of a result", to_string(f.tool)),
                    fmt::format("{} said: \"{}\".", to_string(f.tool), f.message),
                    {{"file", f.source}, {"message", f.message}},
                    ""};
        const std::string& m = f.message;
        auto says = [&](const char* s) { return m.find(s) != std::string::npos; };
        if (says("unable to connect") || says("Connection refused")) {
            out.title = "iperf3 could not connect: the server is not running (or not on that port)";
            out.detail +=
                " The client reached the server's address but nothing accepted the "
                "connection on the iperf3 port.";
            out.next_step =
                "On the server node check the iperf3 server: systemctl status np-iperf3 (the "
                "tutorial's unit) or start one with iperf3 -s; make sure -p matches and no "
                "firewall blocks port 5201.";
        } else if (says("No route to host") || says("Network is unreachable")) {
            out.title = "iperf3 found no path to the server";
            out.next_step =
                "Check that the data interface is up and addressed on both nodes (ip -br addr) "
                "and that both ports are on the same segment.";
        } else if (says("server is busy")) {
            out.title = "the iperf3 server was busy with another test";
            out.next_step = "Wait for the other test to finish, then run again.";
        } else if (says("control message") || says("Connection reset") || says("timed out")) {
            out.title = "the iperf3 control connection broke during the test";
            out.next_step =
                "Check that the server is still running and the path stayed up; run again.";
        }
        Verdict v;
        v.test = fmt::format("{} (error)", to_string(f.tool));
        v.source = f.source;
        v.measured = "-";
        v.verdict = "tool error";
        v.codes.push_back(out.code);
        e.verdicts.push_back(std::move(v));
        e.findings.push_back(std::move(out));
    }
}

void rule_link_unknown(const ExplainInput& in, Explanation& e) {
    if (in.link_bps || in.measurements.throughput.empty()) return;
    e.findings.push_back(
        {"LINK_RATE_UNKNOWN",
         Severity::info,
         "No link rate given, so no ceiling is claimed",
         "Whether a throughput is at the wire's limit depends on the link's nominal rate, which "
         "iperf output does not record. Loss, offered load and tool errors are still checked.",
         {},
         "Give the link rate: np-explain explain --link 1G … (10G, 100M, …)."});
}

// ---------------------------------------------------------------- per-test rules

void rule_offered_above_ceiling(const TestView& v, Explanation& e) {
    const auto& t = v.test;
    if (t.transport != Transport::udp || !t.offered_bps || !v.ceiling) return;
    const double link = v.model->params.link_bps;
    const double wire = v.ceiling->wire_bps_for_payload(*t.offered_bps);
    if (wire <= link) return;
    const auto loss = recomputed_loss_pct(t);
    const bool lossless = !loss || *loss < 0.1;
    const std::string got =
        t.sent_bps ? rate_text(*t.sent_bps, t.rate_resolution_bps) : std::string("less");
    Finding f{"OFFERED_ABOVE_CEILING",
              lossless ? Severity::info : Severity::warn,
              fmt::format("{} of UDP payload needs {} on the wire, more than the {} link",
                          format_rate(*t.offered_bps), wire_text(wire), format_link_rate(link)),
              fmt::format("Each {}-byte datagram costs {} bytes on the wire, so the offered {} of "
                          "payload needs {}; at most {} of payload fits. ",
                          v.ceiling->payload_bytes_per_unit, v.ceiling->wire_bytes_per_unit,
                          format_rate(*t.offered_bps), wire_text(wire),
                          format_rate(v.ceiling->goodput_bps)),
              {{"offered_mbps", mbps(*t.offered_bps)},
               {"wire_needed_mbps", mbps(wire)},
               {"link_mbps", mbps(link)},
               {"ceiling_mbps", mbps(v.ceiling->goodput_bps)}},
              ""};
    if (lossless) {
        f.detail += fmt::format(
            "The sender was held back by its own NIC queue: it sent {} and {}, so the excess "
            "never left the host.",
            got,
            loss && *loss > 0 ? fmt::format("only {:.2f} % was lost", *loss)
                              : std::string("nothing was lost"));
    } else {
        f.detail += fmt::format(
            "The excess was dropped: {} % of the datagrams were lost. The sender's qdisc or NIC, "
            "the path, or the receiver dropped them; a trace says which.",
            pct_number(*loss));
        f.next_step = fmt::format(
            "Walk -b down (the model's ceiling is {}) until the loss stops: that is the path's "
            "true ceiling.",
            format_rate(v.ceiling->goodput_bps));
    }
    add(e, v, std::move(f));
}

void rule_sender_limited(const TestView& v, Explanation& e) {
    const auto& t = v.test;
    if (t.transport != Transport::udp || !t.offered_bps || !t.sent_bps) return;
    if (*t.sent_bps + t.rate_resolution_bps >= *t.offered_bps * kSenderShortfall) return;
    std::optional<double> wire;
    if (v.ceiling) {
        wire = v.ceiling->wire_bps_for_payload(*t.offered_bps);
        // Held back by the link, not the sender: OFFERED_ABOVE_CEILING explains it.
        if (*wire > v.model->params.link_bps) return;
    }
    const int payload = t.payload_bytes.value_or(0);
    std::optional<double> dgram_rate;
    if (t.datagrams_sent && t.duration_s > 0)
        dgram_rate = static_cast<double>(*t.datagrams_sent) / t.duration_s;
    else if (payload > 0)
        dgram_rate = *t.sent_bps / (8.0 * payload);
    const std::string sent = rate_text(*t.sent_bps, t.rate_resolution_bps);
    const std::string offered = rate_text(*t.offered_bps, t.rate_resolution_bps);
    Finding f{
        "SENDER_LIMITED",
        Severity::warn,
        fmt::format("The UDP sender reached {} of the {} offered: sender-limited", sent, offered),
        fmt::format("It sent {} of the {} asked for ({} from {}).", sent, offered,
                    format_pct(*t.sent_bps / *t.offered_bps, 1), t.offered_from),
        {{"offered_mbps", mbps(*t.offered_bps)}, {"sent_mbps", mbps(*t.sent_bps)}},
        "Spread the sending over more threads/cores (-P 2 … 4) or check the sender's CPU; "
        "the offered load itself fits the link."};
    if (dgram_rate) {
        f.detail +=
            fmt::format(" That is ~{} k datagrams/s", fmt::format("{:.0f}", *dgram_rate / 1e3));
        if (t.datagrams_sent)
            f.detail += fmt::format(" ({} datagrams of {} B in {:.1f} s)",
                                    format_count(static_cast<double>(*t.datagrams_sent)), payload,
                                    t.duration_s);
        f.detail += ".";
        f.evidence.push_back({"datagrams_per_s", fmt::format("{:.0f}", *dgram_rate)});
    }
    if (wire) {
        f.detail += fmt::format(
            " The offered {} needs {} on the wire ({} B per {}-byte datagram), under the {} link, "
            "so the link was not the limit: the sending host could not produce datagrams faster "
            "(a system call and a copy per datagram).",
            offered, wire_text(*wire), v.ceiling->wire_bytes_per_unit,
            v.ceiling->payload_bytes_per_unit, format_link_rate(v.model->params.link_bps));
        f.evidence.push_back({"offered_wire_mbps", mbps(*wire)});
    }
    add(e, v, std::move(f));
}

void rule_udp_loss(const TestView& v, Explanation& e) {
    const auto& t = v.test;
    const auto loss = recomputed_loss_pct(t);
    if (t.transport != Transport::udp || !loss || *t.datagrams_lost <= 0) return;
    Finding f{"UDP_LOSS",
              *loss >= kLossWarnPct ? Severity::warn : Severity::info,
              fmt::format("{} % of UDP datagrams were lost ({} of {})", pct_number(*loss),
                          format_count(static_cast<double>(*t.datagrams_lost)),
                          format_count(static_cast<double>(*t.datagrams_total))),
              fmt::format("Recomputed from the receiver's counts {}/{} (a printed percentage is "
                          "never trusted).",
                          *t.datagrams_lost, *t.datagrams_total),
              {{"lost", std::to_string(*t.datagrams_lost)},
               {"total", std::to_string(*t.datagrams_total)},
               {"loss_pct", pct_number(*loss)}},
              ""};
    if (t.sent_bps && t.received_bps) {
        const double kept = 1.0 - *loss / 100.0;
        f.detail += fmt::format(" The receiver got {} = {} × {:.3f} of what was sent.",
                                rate_text(*t.received_bps, t.rate_resolution_bps),
                                rate_text(*t.sent_bps, t.rate_resolution_bps), kept);
        f.evidence.push_back({"sent_mbps", mbps(*t.sent_bps)});
        f.evidence.push_back({"received_mbps", mbps(*t.received_bps)});
    }
    if (t.datagrams_sent)
        f.evidence.push_back({"datagrams_sent", std::to_string(*t.datagrams_sent)});
    // Where: if what was sent fits the wire, the link did not drop it — the receiver did.
    const bool sent_fits_wire =
        v.ceiling && t.sent_bps &&
        v.ceiling->wire_bps_for_payload(*t.sent_bps) <= v.model->params.link_bps;
    if (sent_fits_wire) {
        f.title += " at the receiver";
        f.detail += fmt::format(
            " What was sent needs {} on the wire, within the {} link, so the datagrams left the "
            "sender and were lost at the receiving host.",
            format_rate(v.ceiling->wire_bps_for_payload(*t.sent_bps)),
            format_link_rate(v.model->params.link_bps));
    }
    if (t.socket_buffer_bytes && t.transport == Transport::udp && t.sent_bps) {
        // What the buffer holds at most (the kernel also charges each datagram's overhead),
        // and how long that lasts at the rate the datagrams arrived.
        const int payload = t.payload_bytes.value_or(1470);
        const double held = static_cast<double>(*t.socket_buffer_bytes) / payload;
        const double ms = held * payload * 8.0 / *t.sent_bps * 1e3;
        f.detail += fmt::format(
            " The UDP buffer is {} on the {}{}: at most ~{:.0f} datagrams, {:.2f} ms of "
            "traffic at this rate",
            t.socket_buffer_text, t.socket_buffer_side,
            t.socket_buffer_side == "client" ? " (the server's default is usually the same)" : "",
            held, ms);
        f.evidence.push_back({"udp_buffer", t.socket_buffer_text});
        if (ms < 5.0) {
            f.detail +=
                ", so any pause of the receiving process overflows it: a receive-buffer "
                "overflow is the likely cause. Only a trace confirms it (drop reason "
                "SOCKET_RCVBUFF, UdpRcvbufErrors).";
            f.next_step =
                "Raise the receive buffer (iperf -s -u -w 4M, with sysctl net.core.rmem_max "
                "raised to allow it) or lower -b; run with a trace to confirm where the "
                "datagrams are dropped.";
        } else {
            f.detail += ". A trace locates the drops.";
            f.next_step = "Run with a trace to locate the drops.";
        }
    } else if (sent_fits_wire) {
        f.detail += " A full receive buffer is the usual cause; a trace locates it.";
        f.next_step =
            "Raise the receiver's buffer (-w, net.core.rmem_max) or lower -b; run with a trace "
            "to locate the drops.";
    } else if (f.next_step.empty()) {
        f.next_step =
            "Run with a trace to locate the drops (sender qdisc, wire, receiver NIC or "
            "socket).";
    }
    add(e, v, std::move(f));
}

void rule_printed_loss(const TestView& v, Explanation& e) {
    const auto& t = v.test;
    const auto loss = recomputed_loss_pct(t);
    if (!loss || !t.printed_loss_pct) return;
    // iperf2 prints %.2g: allow its rounding; iperf3 JSON is exact.
    const double slack = std::max(0.05, 0.06 * *loss);
    if (std::fabs(*t.printed_loss_pct - *loss) <= slack) return;
    Finding f{"PRINTED_LOSS_WRONG",
              Severity::warn,
              fmt::format("The printed loss {:g} % disagrees with the counts ({} %)",
                          *t.printed_loss_pct, pct_number(*loss)),
              fmt::format("{} printed \"{}\", but {}/{} is {} %: the printed figure is wrong, the "
                          "counts are right.",
                          to_string(t.tool), t.printed_loss_text, *t.datagrams_lost,
                          *t.datagrams_total, pct_number(*loss)),
              {{"printed", t.printed_loss_text}, {"recomputed_loss_pct", pct_number(*loss)}},
              "Use the lost/total counts, not the percentage, when reporting loss."};
    if (t.tool == Tool::iperf2)
        f.detail +=
            " A known cause: iperf 2.2.x clients print 0 % when the server's report "
            "lacks the extended header.";
    add(e, v, std::move(f));
}

void rule_line_rate(const TestView& v, Explanation& e) {
    if (!v.ceiling || !v.measured_bps) return;
    const auto& t = v.test;
    const double ceiling = v.ceiling->goodput_bps;
    const double m = *v.measured_bps;
    const double res = t.rate_resolution_bps;
    if (m - res > ceiling * (1 + kAboveCeilingSlack)) {
        const bool sender_side = !t.received_bps;
        Finding f{"ABOVE_CEILING",
                  sender_side ? Severity::info : Severity::warn,
                  fmt::format("{} is above the {} ceiling of a {} link", rate_text(m, res),
                              format_rate(ceiling), format_link_rate(v.model->params.link_bps)),
                  "",
                  {{"measured_mbps", mbps(m)}, {"ceiling_mbps", mbps(ceiling)}},
                  ""};
        if (sender_side) {
            f.detail =
                "This is the sender's figure: it counts bytes written into its socket, "
                "some still queued in buffers when the test ended. The receiver's figure "
                "is the one to hold against the wire.";
            f.next_step = "Compare with the server's output (what arrived).";
        } else {
            f.detail =
                "No payload rate can exceed what the wire carries: the link is faster "
                "than --link says, or the traffic did not cross that link.";
            f.next_step = "Check the link speed (ethtool IFACE) and give it as --link.";
        }
        add(e, v, std::move(f));
        return;
    }
    if (m + res < ceiling * kLineRateFraction) return;
    const double link = v.model->params.link_bps;
    // UDP asked for a rate the wire can carry ran at that rate: the offered load, not the
    // wire, set it (OFFERED_RATE_REACHED says so), even when it happens to be near the ceiling.
    if (t.transport == Transport::udp && t.offered_bps &&
        v.ceiling->wire_bps_for_payload(*t.offered_bps) <= link)
        return;
    Finding f{"LINE_RATE_BOUND",
              Severity::info,
              fmt::format("{} is line-rate bound: {} of the {} {} ceiling", rate_text(m, res),
                          format_pct(m / ceiling), format_rate(ceiling),
                          t.transport == Transport::tcp ? "TCP" : "UDP"),
              fmt::format("On a {} link the most {} payload the wire can carry is {}: {}. The "
                          "{} below {} is headers and framing, not a slow network.",
                          format_link_rate(link), t.transport == Transport::tcp ? "TCP" : "UDP",
                          format_rate(ceiling), describe_overhead(*v.ceiling),
                          format_pct(1 - ceiling / link, 1), format_link_rate(link)),
              {{"measured_mbps", mbps(m)},
               {"ceiling_mbps", mbps(ceiling)},
               {"pct_of_ceiling", pct_number(100 * m / ceiling)},
               {"payload_bytes", std::to_string(v.ceiling->payload_bytes_per_unit)},
               {"wire_bytes", std::to_string(v.ceiling->wire_bytes_per_unit)}},
              ""};
    if (t.transport == Transport::udp) {
        const Ceiling& tcp = v.model->tcp;
        f.detail += fmt::format(
            " UDP's ceiling is above TCP's ({}) because its L4 header is {} bytes against "
            "TCP's {}.",
            format_rate(tcp.goodput_bps), l4_header_bytes(*v.ceiling), l4_header_bytes(tcp));
    }
    if (res > 0) {
        f.detail += fmt::format(" {} prints rates to 3 significant digits: {} means {}.",
                                to_string(t.tool), rate_text(m, res), range_text(m - res, m + res));
        const std::optional<double> bytes = t.received_bps ? t.received_bytes : t.sent_bytes;
        if (bytes && t.duration_s > 0 && t.bytes_resolution > 0) {
            const double lo = (*bytes - t.bytes_resolution) * 8 / t.duration_s;
            const double hi = (*bytes + t.bytes_resolution) * 8 / t.duration_s;
            f.detail += fmt::format(
                " The transfer column is rounded harder, in binary units: {:.2f} to {:.2f} GiB, "
                "i.e. {} over {:.1f} s, so the rate column is the figure to use.",
                (*bytes - t.bytes_resolution) / 1073741824.0,
                (*bytes + t.bytes_resolution) / 1073741824.0, range_text(lo, hi), t.duration_s);
        }
    }
    add(e, v, std::move(f));
}

void rule_offered_rate_reached(const TestView& v, Explanation& e) {
    const auto& t = v.test;
    if (t.transport != Transport::udp || !t.offered_bps || !t.sent_bps || !v.ceiling) return;
    if (has(v.verdict, "LINE_RATE_BOUND") || has(v.verdict, "SENDER_LIMITED") ||
        has(v.verdict, "OFFERED_ABOVE_CEILING"))
        return;
    if (*t.sent_bps + t.rate_resolution_bps < *t.offered_bps * kSenderShortfall) return;
    add(e, v,
        {"OFFERED_RATE_REACHED",
         Severity::info,
         fmt::format("UDP ran at the rate it was asked for, {} of the {} ceiling",
                     format_pct(*t.offered_bps / v.ceiling->goodput_bps),
                     format_rate(v.ceiling->goodput_bps)),
         fmt::format("It sent {} of the {} offered ({}): the offered load set the rate, not a "
                     "limit of the path.",
                     rate_text(*t.sent_bps, t.rate_resolution_bps), format_rate(*t.offered_bps),
                     t.offered_from),
         {{"offered_mbps", mbps(*t.offered_bps)}, {"sent_mbps", mbps(*t.sent_bps)}},
         ""});
}

// In --bidir each direction's wire also carries the ACKs of the opposite flow: with delayed ACKs
// one minimum-size ACK frame per two full segments.
void rule_bidir_acks(const TestView& v, Explanation& e) {
    const auto& t = v.test;
    if (!t.bidir || t.transport != Transport::tcp || !v.ceiling || !v.measured_bps) return;
    if (has(v.verdict, "LINE_RATE_BOUND") || has(v.verdict, "ABOVE_CEILING")) return;
    const Ceiling& c = *v.ceiling;
    const Frame& seg = c.frames.front();
    const int ack_l2 = kMacHeaderBytes + seg.bytes_of("ip_header") + seg.bytes_of("tcp_header") +
                       seg.bytes_of("tcp_timestamps") + kFcsBytes;
    const int ack_wire = std::max(ack_l2, kMinFrameBytes) + kL1OverheadBytes;
    const double link = v.model->params.link_bps;
    const double shared =
        link * c.payload_bytes_per_unit / (c.wire_bytes_per_unit + ack_wire / 2.0);
    const double m = *v.measured_bps;
    if (m + t.rate_resolution_bps < shared * kLineRateFraction) return;
    add(e, v,
        {"BIDIR_LINE_RATE_BOUND",
         Severity::info,
         fmt::format("{} is line-rate bound for --bidir: {} of the {} left by the other "
                     "direction's ACKs",
                     rate_text(m, t.rate_resolution_bps), format_pct(m / shared),
                     format_rate(shared)),
         fmt::format("With --bidir this direction's wire also carries the ACKs of the opposite "
                     "flow: a {}-byte ACK frame (on the wire) per two {}-byte segments, so of "
                     "the {} TCP ceiling {} remains for payload.",
                     ack_wire, c.wire_bytes_per_unit, format_rate(c.goodput_bps),
                     format_rate(shared)),
         {{"measured_mbps", mbps(m)},
          {"bidir_ceiling_mbps", mbps(shared)},
          {"ack_wire_bytes", std::to_string(ack_wire)}},
         ""});
}

void rule_below_ceiling(const TestView& v, Explanation& e) {
    if (!v.ceiling || !v.measured_bps) return;
    const auto& t = v.test;
    const double m = *v.measured_bps;
    const double ceiling = v.ceiling->goodput_bps;
    if (m + t.rate_resolution_bps >= ceiling * kLineRateFraction) return;
    // UDP below the ceiling is explained by the offered load or the sender when those apply.
    for (const char* c : {"SENDER_LIMITED", "OFFERED_RATE_REACHED", "OFFERED_ABOVE_CEILING",
                          "BIDIR_LINE_RATE_BOUND"})
        if (has(v.verdict, c)) return;
    std::vector<std::string> causes;
    std::vector<std::pair<std::string, std::string>> evidence{
        {"measured_mbps", mbps(m)},
        {"ceiling_mbps", mbps(ceiling)},
        {"pct_of_ceiling", pct_number(100 * m / ceiling)}};
    if (t.retransmits && *t.retransmits > 0) {
        causes.push_back(
            fmt::format("{} retransmits: segments were lost and congestion control cut the window",
                        format_count(static_cast<double>(*t.retransmits))));
        evidence.push_back({"retransmits", std::to_string(*t.retransmits)});
    }
    if (t.snd_cwnd_max_bytes && t.rtt_mean_us && *t.rtt_mean_us > 0) {
        const double window_bps = *t.snd_cwnd_max_bytes * 8.0 / (*t.rtt_mean_us * 1e-6);
        if (window_bps < ceiling) {
            causes.push_back(fmt::format(
                "window-limited: the largest congestion window, {} B, per mean RTT of {:.0f} us "
                "allows at most {}",
                format_count(static_cast<double>(*t.snd_cwnd_max_bytes)), *t.rtt_mean_us,
                format_rate(window_bps)));
            evidence.push_back({"window_limit_mbps", mbps(window_bps)});
        }
    }
    for (auto [cpu, side] :
         {std::pair{t.sender_cpu_pct, "sender"}, std::pair{t.receiver_cpu_pct, "receiver"}}) {
        if (cpu && *cpu >= 90.0) {
            causes.push_back(fmt::format("the {} was CPU-bound ({:.0f} % CPU)", side, *cpu));
            evidence.push_back({std::string(side) + "_cpu_pct", fmt::format("{:.1f}", *cpu)});
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
            causes.push_back(fmt::format(
                "{} of {} intervals ran below half the median interval rate ({}): the rate "
                "stalled rather than running slow throughout",
                stalls, t.interval_bps.size(), format_rate(median)));
            evidence.push_back({"stalled_intervals", std::to_string(stalls)});
        }
    }
    if (t.rcvbuf_bytes && t.rtt_mean_us && *t.rtt_mean_us > 0) {
        const double bdp = ceiling / 8.0 * (*t.rtt_mean_us * 1e-6);
        if (static_cast<double>(*t.rcvbuf_bytes) < bdp / 4)
            evidence.push_back({"rcvbuf_bytes", std::to_string(*t.rcvbuf_bytes)});
    }
    Finding f{causes.empty() ? "BELOW_CEILING_NEEDS_TRACE" : "BELOW_CEILING",
              Severity::warn,
              fmt::format("{} is {} of the {} ceiling", rate_text(m, t.rate_resolution_bps),
                          format_pct(m / ceiling), format_rate(ceiling)),
              "",
              evidence,
              ""};
    if (causes.empty()) {
        f.detail =
            "The tool output holds no evidence of the cause (no retransmits, no window, "
            "CPU or loss figure that explains it). Locating it needs a trace of the data "
            "NIC: drops by kernel reason, NIC counters, wire bytes.";
        f.next_step =
            "Run again with the probe (np-explain run, or np-explain probe on both "
            "nodes) and explain with the trace.";
    } else {
        f.detail = "Evidence in the output: ";
        for (size_t i = 0; i < causes.size(); ++i) f.detail += (i ? "; " : "") + causes[i];
        f.detail += ".";
        f.next_step = "A trace of the data NIC locates where segments were dropped.";
    }
    add(e, v, std::move(f));
}

void rule_retransmits(const TestView& v, Explanation& e) {
    const auto& t = v.test;
    if (t.transport != Transport::tcp || !t.retransmits || *t.retransmits <= 0) return;
    if (has(v.verdict, "BELOW_CEILING")) return;  // already the cause given there
    add(e, v,
        {"TCP_RETRANSMITS",
         Severity::info,
         fmt::format("{} TCP retransmits", format_count(static_cast<double>(*t.retransmits))),
         "Some segments were sent again. They did not keep this test below the ceiling; where "
         "they were lost needs a trace.",
         {{"retransmits", std::to_string(*t.retransmits)}},
         ""});
}

// ---------------------------------------------------------------- ping

void rule_ping(const ExplainInput& in, Explanation& e) {
    for (const auto& p : in.measurements.pings) {
        Verdict v;
        v.test = p.label;
        v.source = p.source;
        v.command = p.command;
        auto push = [&](Finding f) {
            f.evidence.insert(f.evidence.begin(), {"test", p.label});
            if (!p.source.empty()) f.evidence.insert(f.evidence.begin() + 1, {"file", p.source});
            v.codes.push_back(f.code);
            e.findings.push_back(std::move(f));
        };
        const double loss = p.transmitted > 0
                                ? 100.0 * static_cast<double>(p.transmitted - p.received) /
                                      static_cast<double>(p.transmitted)
                                : 0;
        if (p.received == 0) {
            Finding f{"PING_NO_REPLY",
                      Severity::error,
                      fmt::format("No reply from {} to {} requests", p.target, p.transmitted),
                      "Nothing came back, so nothing else on this path can be trusted.",
                      {{"transmitted", std::to_string(p.transmitted)}, {"received", "0"}},
                      "Check carrier and addresses on both nodes (ip -br link, ip -br addr). If "
                      "ping -I <data iface> fails but plain ping works, the two data ports are on "
                      "different segments: use the shared one."};
            if (p.errors > 0) {
                f.detail += fmt::format(
                    " ping counted +{} errors: ICMP errors such as 'Destination Host "
                    "Unreachable', which on a directly connected segment means ARP went "
                    "unanswered — no carrier, a different segment, or no host at that address.",
                    p.errors);
                f.evidence.push_back({"errors", std::to_string(p.errors)});
            }
            push(std::move(f));
            v.measured = "no reply";
            v.verdict = "unreachable";
        } else {
            v.measured = fmt::format("{:.3f} ms avg", p.rtt_avg_ms.value_or(0));
            v.verdict = loss > 0 ? fmt::format("{:.0f} % loss", loss) : "reachable";
            std::vector<std::pair<std::string, std::string>> ev{
                {"rtt_min_ms", fmt::format("{:.3f}", p.rtt_min_ms.value_or(0))},
                {"rtt_avg_ms", fmt::format("{:.3f}", p.rtt_avg_ms.value_or(0))},
                {"rtt_max_ms", fmt::format("{:.3f}", p.rtt_max_ms.value_or(0))}};
            if (p.rtt_mdev_ms) ev.push_back({"rtt_mdev_ms", fmt::format("{:.3f}", *p.rtt_mdev_ms)});
            push({"PING_RTT", Severity::info,
                  fmt::format("Round-trip time to {}: {:.3f} ms average", p.target,
                              p.rtt_avg_ms.value_or(0)),
                  fmt::format("{} of {} requests answered.", p.received, p.transmitted), ev, ""});
            if (loss > 0) {
                push({"PING_LOSS",
                      Severity::warn,
                      fmt::format("{} % of pings to {} were lost", pct_number(loss), p.target),
                      fmt::format("{} of {} requests got no reply (recomputed from the counts).",
                                  p.transmitted - p.received, p.transmitted),
                      {{"loss_pct", pct_number(loss)}},
                      "Check the link's error counters (ip -s link, ethtool -S) on both nodes."});
            }
        }
        if (p.duplicates > 0) {
            push({"PING_DUPLICATES",
                  Severity::warn,
                  fmt::format("{} duplicate replies from {}", p.duplicates, p.target),
                  "More than one reply came back for some requests: several hosts answer "
                  "(a broadcast address, or two hosts with the same address) or the path "
                  "duplicates packets.",
                  {{"duplicates", std::to_string(p.duplicates)}},
                  "Ping the peer's unicast address; check for an address conflict (arping -D)."});
        }
        if (p.printed_loss_pct && std::fabs(*p.printed_loss_pct - loss) > 0.5 + 0.01 * loss) {
            push({"PRINTED_LOSS_WRONG",
                  Severity::warn,
                  fmt::format("ping printed {:g} % loss but the counts give {} %",
                              *p.printed_loss_pct, pct_number(loss)),
                  fmt::format("{} transmitted, {} received.", p.transmitted, p.received),
                  {{"recomputed_loss_pct", pct_number(loss)}},
                  "Use the counts."});
        }
        e.verdicts.push_back(std::move(v));
    }
}

// The verdict word for a throughput test, from the findings raised about it.
void set_verdict(Verdict& v, bool link_known) {
    static const std::pair<const char*, const char*> order[] = {
        {"LINE_RATE_BOUND", "line-rate bound"},
        {"BIDIR_LINE_RATE_BOUND", "line-rate bound (--bidir)"},
        {"ABOVE_CEILING", "above the ceiling"},
        {"SENDER_LIMITED", "sender-limited"},
        {"OFFERED_ABOVE_CEILING", "offered load above the ceiling"},
        {"OFFERED_RATE_REACHED", "at the offered rate"},
        {"BELOW_CEILING", "below the ceiling"},
        {"BELOW_CEILING_NO_WIRE_CAUSE", "below the ceiling (no cause on the path)"},
        {"BELOW_CEILING_NEEDS_TRACE", "below the ceiling (needs a trace)"},
    };
    for (const auto& [code, word] : order) {
        if (has(v, code)) {
            v.verdict = word;
            break;
        }
    }
    if (v.verdict.empty()) v.verdict = link_known ? "-" : "needs --link";
    if (has(v, "UDP_LOSS")) v.verdict += ", loss";
}

// With traces: the probe's findings join the engine's, and a test the tool's output could not
// explain below its ceiling is explained with what the traces of the data NICs show.
void rule_traces(const ExplainInput& in, Explanation& e) {
    if (in.traces.empty()) return;
    std::vector<Finding> found = trace_findings(in.traces, in.measurements);
    const auto test_of = [](const Finding& f) -> std::string {
        for (const auto& [k, v] : f.evidence)
            if (k == "test") return v;
        return {};
    };
    for (auto& f : e.findings) {
        if (f.code != "BELOW_CEILING_NEEDS_TRACE") continue;
        const std::string test = test_of(f);
        std::vector<std::string> causes;
        for (const auto& t : found)
            if (t.severity != Severity::info && test_of(t) == test)
                causes.push_back(t.title + " (" + t.code + ")");
        if (!causes.empty()) {
            f.code = "BELOW_CEILING";
            f.detail = "The tool's output holds no cause, the traces of the data NICs do: ";
            for (size_t i = 0; i < causes.size(); ++i) f.detail += (i ? "; " : "") + causes[i];
            f.detail += ".";
            f.next_step = "See those findings for where and why.";
        } else {
            f.code = "BELOW_CEILING_NO_WIRE_CAUSE";
            f.detail =
                "Neither the tool's output nor the traces of the data NICs show a cause on the "
                "path: "
                "no drops of the measured flow, no loss between the nodes. The limit is in the "
                "hosts or "
                "the test itself: a short test spends a larger share of its time in TCP slow "
                "start, and "
                "a busy CPU or small socket buffers hold the application back.";
            f.next_step =
                "Run longer (-t) and compare; look at iperf3's CPU figures (--json) on both ends.";
        }
        for (auto& v : e.verdicts)
            if (v.test == test)
                for (auto& code : v.codes)
                    if (code == "BELOW_CEILING_NEEDS_TRACE") code = f.code;
    }
    for (auto& v : e.verdicts) {
        if (!v.ceiling_bps) continue;
        v.verdict.clear();
        set_verdict(v, true);
    }
    for (auto& f : found) e.findings.push_back(std::move(f));
}

}  // namespace

std::optional<Model> model_for(const ThroughputTest& t, double link_bps) {
    ModelParams p;
    p.link_bps = link_bps;
    if (t.pmtu_bytes && *t.pmtu_bytes >= 576 && *t.pmtu_bytes <= 65535) p.mtu_bytes = *t.pmtu_bytes;
    if (t.mss_bytes) {
        // Linux's MSS is MTU − 40 − 12 with timestamps; 1460 at MTU 1500 means without.
        p.tcp_timestamps = p.mtu_bytes - kIpv4HeaderBytes - kTcpHeaderBytes - *t.mss_bytes >=
                           kTcpTimestampOptionBytes;
    }
    if (t.transport == Transport::udp && t.payload_bytes) p.udp_payload_bytes = *t.payload_bytes;
    try {
        return compute_model(p);
    } catch (const std::exception&) {
        return std::nullopt;  // e.g. a datagram size the model does not accept
    }
}

const Rules& default_rules() {
    static const Rules rules{
        {rule_tool_failures, rule_link_unknown},
        {rule_offered_above_ceiling, rule_sender_limited, rule_udp_loss, rule_printed_loss,
         rule_line_rate, rule_offered_rate_reached, rule_bidir_acks, rule_below_ceiling,
         rule_retransmits},
        {rule_ping, rule_traces},
    };
    return rules;
}

Explanation explain(const ExplainInput& in, const Rules& rules) {
    Explanation e;
    for (auto r : rules.before) r(in, e);
    // Failures' rows were added by their rule; throughput rows come first in the table.
    std::vector<Verdict> failure_rows = std::move(e.verdicts);
    e.verdicts.clear();
    e.verdicts.reserve(in.measurements.throughput.size());
    for (const auto& t : in.measurements.throughput) {
        Verdict v;
        v.test = t.label;
        v.source = t.source;
        v.command = t.command;
        e.verdicts.push_back(std::move(v));
    }
    for (size_t i = 0; i < in.measurements.throughput.size(); ++i) {
        const auto& t = in.measurements.throughput[i];
        Verdict& v = e.verdicts[i];
        TestView view{t, v, std::nullopt, nullptr, std::nullopt};
        if (in.link_bps) view.model = model_for(t, *in.link_bps);
        if (view.model)
            view.ceiling = t.transport == Transport::tcp ? &view.model->tcp : &view.model->udp;
        view.measured_bps = t.received_bps ? t.received_bps : t.sent_bps;
        v.measured_bps = view.measured_bps;
        v.measured = view.measured_bps ? rate_text(*view.measured_bps, t.rate_resolution_bps) : "-";
        if (view.ceiling) {
            v.ceiling_bps = view.ceiling->goodput_bps;
            if (view.measured_bps) v.ratio = *view.measured_bps / view.ceiling->goodput_bps;
        }
        for (auto r : rules.per_test) r(view, e);
        set_verdict(v, view.ceiling != nullptr);
    }
    for (auto r : rules.after) r(in, e);
    for (auto& f : failure_rows) e.verdicts.push_back(std::move(f));
    return e;
}

nlohmann::json to_json(const Explanation& e) {
    nlohmann::json doc = findings_document(e.findings);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& v : e.verdicts) {
        nlohmann::json r{
            {"test", v.test},           {"source", v.source},      {"command", nullptr},
            {"measured", v.measured},   {"verdict", v.verdict},    {"codes", v.codes},
            {"measured_mbps", nullptr}, {"ceiling_mbps", nullptr}, {"pct_of_ceiling", nullptr}};
        if (!v.command.empty()) r["command"] = v.command;
        if (v.measured_bps) r["measured_mbps"] = *v.measured_bps / 1e6;
        if (v.ceiling_bps) r["ceiling_mbps"] = *v.ceiling_bps / 1e6;
        if (v.ratio) r["pct_of_ceiling"] = *v.ratio * 100;
        rows.push_back(std::move(r));
    }
    doc["verdicts"] = std::move(rows);
    return doc;
}

Explanation parse_explanation(const nlohmann::json& doc, const std::string& where) {
    if (!doc.is_object()) throw InputError(where, "expected an object with findings and verdicts");
    const auto list = [&](const char* key) {
        const auto it = doc.find(key);
        if (it == doc.end() || it->is_null()) return nlohmann::json::array();
        if (!it->is_array()) throw InputError(fmt::format("{}.{}", where, key), "expected a list");
        return *it;
    };
    Explanation e;
    const auto findings = list("findings");
    for (size_t i = 0; i < findings.size(); ++i)
        e.findings.push_back(parse_finding(findings[i], fmt::format("{}.findings[{}]", where, i)));
    const auto verdicts = list("verdicts");
    for (size_t i = 0; i < verdicts.size(); ++i) {
        const auto& r = verdicts[i];
        const std::string at = fmt::format("{}.verdicts[{}]", where, i);
        if (!r.is_object()) throw InputError(at, "expected a verdict object");
        const auto text = [&](const char* key) {
            const auto it = r.find(key);
            if (it == r.end() || it->is_null()) return std::string();
            if (!it->is_string()) throw InputError(at + "." + key, "expected a string");
            return it->get<std::string>();
        };
        const auto number = [&](const char* key) -> std::optional<double> {
            const auto it = r.find(key);
            if (it == r.end() || it->is_null()) return std::nullopt;
            if (!it->is_number()) throw InputError(at + "." + key, "expected a number");
            return it->get<double>();
        };
        Verdict v;
        v.test = text("test");
        v.source = text("source");
        v.command = text("command");
        v.measured = text("measured");
        v.verdict = text("verdict");
        if (const auto m = number("measured_mbps")) v.measured_bps = *m * 1e6;
        if (const auto c = number("ceiling_mbps")) v.ceiling_bps = *c * 1e6;
        if (const auto p = number("pct_of_ceiling")) v.ratio = *p / 100;
        const auto codes = r.find("codes");
        if (codes != r.end() && codes->is_array()) {
            for (const auto& c : *codes)
                if (c.is_string()) v.codes.push_back(c.get<std::string>());
        }
        e.verdicts.push_back(std::move(v));
    }
    return e;
}

std::string render_explanation(const Explanation& e, std::optional<double> link_bps) {
    std::string out =
        link_bps ? fmt::format("Explained against a {} link (MTU from the output, else 1500)\n\n",
                               format_link_rate(*link_bps))
                 : std::string("No --link given: no ceiling claimed\n\n");
    Table t({"test", "measured", "ceiling", "% of ceiling", "verdict"});
    for (const auto& v : e.verdicts) {
        t.add_row({v.test, v.measured, v.ceiling_bps ? format_rate(*v.ceiling_bps) : "-",
                   v.ratio ? format_pct(*v.ratio) : "-", v.verdict});
        if (!v.command.empty()) t.add_note("$ " + v.command);
    }
    out += t.render() + "\n";
    out += render_findings(e.findings);
    return out;
}

}  // namespace np
