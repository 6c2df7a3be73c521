// Rules about the whole input that are not a throughput test: ping, and a missing link rate.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/model.hpp"
#include "analysis/explanation/preflight.hpp"
#include "analysis/explanation/rules.hpp"
#include "analysis/readers/text.hpp"

namespace np::rules {

void link_unknown(const ExplainInput& in, Explanation& e) {
    if (in.link_bps || in.measurements.throughput.empty()) return;
    Finding f = make_finding("LINK_RATE_UNKNOWN");
    f.title = "No link rate given, so no ceiling is claimed";
    f.detail =
        "Whether a throughput is at the wire's limit depends on the link's nominal rate, which "
        "iperf output does not record. Loss, offered load and tool errors are still checked.";
    f.next_step = "Give the link rate: np-explain explain --link 1G … (10G, 100M, …).";
    e.findings.push_back(std::move(f));
}

namespace {

// The throughput tests of the run that carried data, as "iperf3 TCP 93.99 Mbit/s, iperf3 UDP
// 49.99 Mbit/s": when the ping rule runs, the verdict rows are the throughput tests' only.
std::string carried_data(const Explanation& e) {
    std::string out;
    for (const auto& v : e.verdicts) {
        // Data that rode another interface says nothing about this path.
        if (!v.measured_bps || *v.measured_bps <= 0 ||
            std::find(v.codes.begin(), v.codes.end(), "WRONG_INTERFACE") != v.codes.end())
            continue;
        out += (out.empty() ? "" : ", ") + v.test + " " + v.measured;
    }
    return out;
}

// What the traced nodes' NICs saw of the echo flow during the ping phase: "node1-1's enp0s25
// received 2 echo requests and sent 0 replies".
std::string echo_seen(const ExplainInput& in, const std::string& icmp) {
    std::string out;
    for (const auto& t : in.traces) {
        const PhaseTrace* p = t.find_phase("ping");
        if (!p || !measures(t.tier).flows) continue;
        const auto count = [](const DirectionTraffic& d) {
            const auto it = d.by_flow.find("icmp_echo");
            return it == d.by_flow.end() ? uint64_t{0} : it->second.packets;
        };
        out += fmt::format("{}{}'s {} received {} and sent {} {} echo packets",
                           out.empty() ? "" : "; ", t.node, t.iface, count(p->rx),
                           count(p->left_nic()), icmp);
    }
    return out;
}

// No reply at all: the path is down, or (when the same path carried the tests' data) only the
// echo went unanswered.
Finding no_reply(const ExplainInput& in, const PingTest& p, const std::string& data) {
    Finding f = make_finding("PING_NO_REPLY", p.label);
    f.title = fmt::format("No reply from {} to {} requests", p.target, p.transmitted);
    f.detail = "Nothing came back, so nothing else on this path can be trusted.";
    f.evidence = {{"transmitted_requests", p.transmitted}, {"received_replies", 0}};
    f.next_step =
        "Check carrier and addresses on both nodes (ip -br link, ip -br addr). If ping "
        "-I <data iface> fails but plain ping works, the two data ports are on "
        "different segments: use the shared one.";
    if (p.errors > 0) {
        // What the error says is what is known: an unreachable host on the segment
        // is ARP (or neighbour discovery) unanswered; anything else is the error itself.
        const bool host_unreachable =
            p.error_text.empty() ||
            text::lower(p.error_text).find("host unreachable") != std::string::npos ||
            p.error_text.find("Address unreachable") != std::string::npos;
        f.detail += fmt::format(" {} ping counted {} {} errors instead{}",
                                p.flavour.empty() ? std::string("The") : p.flavour, p.errors,
                                icmp_of(p.target),
                                p.error_text.empty() ? std::string() : " ('" + p.error_text + "')");
        f.detail += host_unreachable
                        ? fmt::format(
                              "{}, which on a directly connected segment means {} "
                              "went unanswered — no carrier, a different segment, or no "
                              "host at that address.",
                              p.error_text.empty() ? ", such as 'Destination Host "
                                                     "Unreachable'"
                                                   : "",
                              resolution_of(p.target))
                        : ": a host or router on the way answered instead of the peer.";
        f.evidence.emplace_back("errors", p.errors);
        if (!p.error_text.empty()) f.evidence.emplace_back("error", p.error_text);
    }
    // Data crossed the same path: only the echo went unanswered. That does not condemn
    // the tests that succeeded (severity is scoped to what failed).
    if (!data.empty()) {
        f.severity = Severity::warn;
        f.detail = fmt::format(
            "Nothing came back to ping, yet the same path carried {}: the path works and "
            "only {} echo went unanswered — filtered or rate-limited on the way or by "
            "the peer, so there is no idle RTT to compare with.",
            data, icmp_of(p.target));
        if (const std::string seen = echo_seen(in, icmp_of(p.target)); !seen.empty())
            f.detail += " The probes: " + seen + ".";
        f.next_step = fmt::format(
            "If an RTT is needed, allow {} echo on the peer (nft list ruleset, "
            "{}) or measure the RTT from TCP (iperf3's rtt, ss -ti).",
            icmp_of(p.target), icmp_of(p.target) == "ICMPv6" ? "ip6tables -S" : "iptables -S");
    }
    return f;
}

// The round-trip time, said as finely as the ping that measured it can tell.
Finding round_trip(const PingTest& p, double avg, bool below) {
    Finding rtt = make_finding("PING_RTT", p.label);
    rtt.title =
        below ? fmt::format("Round-trip time to {}: under {:g} ms", p.target, p.rtt_resolution_ms)
              : fmt::format("Round-trip time to {}: {:.3f} ms average", p.target, avg);
    rtt.detail = fmt::format("{} of {} requests answered.", p.received, p.transmitted);
    if (p.rtt_resolution_ms > 0)
        rtt.detail += fmt::format(
            " {} ping prints whole milliseconds (\"time<1ms\"), so a time under {:g} ms "
            "is all it can tell{}.",
            p.flavour, p.rtt_resolution_ms,
            below ? ": on a directly connected segment a round trip takes tens of "
                    "microseconds, so a figure for comparison needs ping from Linux, "
                    "macOS or BSD"
                  : "");
    rtt.evidence = {{"rtt_min_ms", rounded(p.rtt_min_ms.value_or(0), 3)},
                    {"rtt_avg_ms", rounded(avg, 3)},
                    {"rtt_max_ms", rounded(p.rtt_max_ms.value_or(0), 3)}};
    if (p.rtt_mdev_ms) rtt.evidence.emplace_back("rtt_mdev_ms", rounded(*p.rtt_mdev_ms, 3));
    if (p.rtt_resolution_ms > 0)
        rtt.evidence.emplace_back("rtt_resolution_ms", p.rtt_resolution_ms);
    return rtt;
}

Finding ping_loss(const PingTest& p, double loss) {
    Finding f = make_finding("PING_LOSS", p.label);
    f.title = fmt::format("{:.2f} % of pings to {} were lost", loss, p.target);
    f.detail = fmt::format("{} of {} requests got no reply (recomputed from the counts).",
                           p.transmitted - p.received, p.transmitted);
    f.evidence = {{"loss_pct", rounded(loss)}};
    f.next_step = "Check the link's error counters (ip -s link, ethtool -S) on both nodes.";
    return f;
}

Finding duplicates(const PingTest& p) {
    Finding f = make_finding("PING_DUPLICATES", p.label);
    f.title = fmt::format("{} duplicate replies from {}", p.duplicates, p.target);
    f.detail =
        "More than one reply came back for some requests: several hosts answer (a "
        "broadcast address, or two hosts with the same address) or the path duplicates "
        "packets.";
    f.evidence = {{"duplicate_replies", p.duplicates}};
    f.next_step = ip_version_of_address(p.target) == IpVersion::v6
                      ? "Ping the peer's unicast address; check for an address conflict (a "
                        "dadfailed address in ip -6 addr on the hosts of the segment)."
                      : "Ping the peer's unicast address; check for an address conflict (arping "
                        "-D).";
    return f;
}

// ping's printed loss against its own counts (and the error answers some pings count as
// replies).
Finding printed_loss_wrong(const PingTest& p, double loss) {
    Finding f = make_finding("PRINTED_LOSS_WRONG", p.label);
    f.title = fmt::format("ping printed {:g} % loss but the counts give {:.2f} %",
                          *p.printed_loss_pct, loss);
    f.detail = fmt::format("{} transmitted, {} received.", p.transmitted, p.received);
    f.evidence = {{"recomputed_loss_pct", rounded(loss)}};
    f.next_step = "Use the counts.";
    if (p.errors_counted_as_received > 0) {
        f.detail = fmt::format(
            "{} transmitted, {} echo replies. {} counted {} {} error answers ('{}') as "
            "received: a host or router on the way answered instead of the peer, so they "
            "are no replies from it.",
            p.transmitted, p.received, p.flavour, p.errors_counted_as_received, icmp_of(p.target),
            p.error_text);
        f.evidence.emplace_back("errors_counted_as_received", p.errors_counted_as_received);
        f.next_step = fmt::format(
            "Use the counts without those answers; check the peer's address and "
            "that it is on the segment ({} on Windows).",
            icmp_of(p.target) == "ICMPv6" ? "netsh interface ipv6 show neighbors" : "arp -a");
    }
    return f;
}

// "Linux ping" — with the platforms that print the same layout, for BSD-style output.
std::string tool_of(const PingTest& p) {
    if (p.flavour.empty()) return {};
    return p.flavour + " ping" +
           (p.flavour.starts_with("BSD-style") ? " (macOS, FreeBSD and GNU inetutils print this "
                                                 "layout)"
                                               : "");
}

}  // namespace

void ping(const ExplainInput& in, Explanation& e) {
    const std::string data = carried_data(e);
    for (const auto& p : in.measurements.pings) {
        Verdict v;
        v.test = p.label;
        v.source = p.source;
        v.command = p.command;
        v.tool = tool_of(p);
        auto push = [&](Finding f) {
            if (!p.source.empty()) f.evidence.insert(f.evidence.begin(), {"file", p.source});
            v.codes.push_back(f.code);
            e.findings.push_back(std::move(f));
        };
        const double loss = p.transmitted > 0
                                ? 100.0 * static_cast<double>(p.transmitted - p.received) /
                                      static_cast<double>(p.transmitted)
                                : 0;
        if (p.received == 0) {
            push(no_reply(in, p, data));
            v.measured = "no reply";
            v.verdict = data.empty() ? "unreachable" : "no echo reply";
        } else {
            const double avg = p.rtt_avg_ms.value_or(0);
            // Windows prints whole milliseconds: its "Average = 0ms" is a time under 1 ms.
            const bool below = p.rtt_resolution_ms > 0 && avg < p.rtt_resolution_ms;
            v.measured = below ? fmt::format("< {:g} ms avg", p.rtt_resolution_ms)
                               : fmt::format("{:.3f} ms avg", avg);
            v.verdict = loss > 0 ? fmt::format("{:.0f} % loss", loss) : "reachable";
            push(round_trip(p, avg, below));
            if (loss > 0) push(ping_loss(p, loss));
        }
        if (p.duplicates > 0) push(duplicates(p));
        if (p.printed_loss_pct && std::fabs(*p.printed_loss_pct - loss) > 0.5 + 0.01 * loss)
            push(printed_loss_wrong(p, loss));
        e.verdicts.push_back(std::move(v));
    }
}

}  // namespace np::rules
