// The slower-path pre-pass and its finding: when the numbers show a path slower than the link
// (a shaper on the sender's data NIC, or every test at one slower standard rate's ceiling),
// every test is judged against that rate.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

// The nominal rates a path can behave like, slowest first.
constexpr double kStandardRates[] = {10e6, 100e6, 1e9,  2.5e9, 5e9,   10e9,
                                     25e9, 40e9,  50e9, 100e9, 200e9, 400e9};

std::optional<double> measured_of(const ThroughputTest& t) {
    return t.received_bps ? t.received_bps : t.sent_bps;
}

std::optional<double> ceiling_at(const ThroughputTest& t, double bps, std::optional<int> mtu) {
    const auto model = model_for(t, bps, mtu);
    if (!model) return std::nullopt;
    return (t.transport == Transport::tcp ? model->tcp : model->udp).goodput_bps;
}

// No test carried more than a path of this rate could.
bool none_above(const ExplainInput& in, double bps) {
    const auto mtu = nic_mtu(in.traces);
    for (const auto& t : in.measurements.throughput) {
        const auto m = measured_of(t);
        const auto c = ceiling_at(t, bps, mtu);
        if (m && c && *m - t.rate_resolution_bps > *c * (1 + kAboveCeilingSlack)) return false;
    }
    return true;
}

}  // namespace

bool at_path_ceiling(const ThroughputTest& t, double path_bps, std::optional<int> mtu) {
    const auto m = measured_of(t);
    const auto c = ceiling_at(t, path_bps, mtu);
    return m && c && *m + t.rate_resolution_bps >= *c * kLineRateFraction &&
           *m - t.rate_resolution_bps <= *c * (1 + kAboveCeilingSlack);
}

std::optional<double> slower_path_bps(const ExplainInput& in) {
    if (!in.link_bps || in.measurements.throughput.empty()) return std::nullopt;
    const auto mtu = nic_mtu(in.traces);
    // A shaper on the data direction slower than the link bounds the path: the egress qdisc of
    // a node that sent a test's data, measured rather than guessed. A shaper on the receiving
    // node's egress carries only the ACKs and replies: the reverse path, not the data's rate.
    std::optional<double> shaper;
    for (const auto& t : in.measurements.throughput) {
        const TestTraces sides = traces_for(t, in.traces);
        if (!sides.sender) continue;
        const LinkFacts& link = sides.sender->trace->link;
        if (link.qdisc_rate_bps && *link.qdisc_rate_bps > 0 &&
            double(*link.qdisc_rate_bps) < *in.link_bps * 0.99)
            shaper = std::min(shaper.value_or(1e300), double(*link.qdisc_rate_bps));
    }
    if (shaper && none_above(in, *shaper)) return shaper;
    // Else the numbers' signature: every test the link does not explain (below its ceiling, and
    // not held to an offered rate) sits at the ceiling of one standard rate below the link's.
    std::vector<const ThroughputTest*> short_of_link;
    for (const auto& t : in.measurements.throughput) {
        const auto m = measured_of(t);
        const auto c = ceiling_at(t, *in.link_bps, mtu);
        if (!m || !c || t.bidir) continue;
        if (*m + t.rate_resolution_bps >= *c * kLineRateFraction) continue;
        const auto model = model_for(t, *in.link_bps, mtu);
        if (is_udp(t) && t.offered_bps &&
            model->udp.wire_bps_for_payload(*t.offered_bps) <= *in.link_bps && reached_offered(t))
            continue;
        short_of_link.push_back(&t);
    }
    if (short_of_link.empty()) return std::nullopt;
    for (auto it = std::rbegin(kStandardRates); it != std::rend(kStandardRates); ++it) {
        if (*it >= *in.link_bps * 0.99) continue;
        if (std::all_of(short_of_link.begin(), short_of_link.end(),
                        [&](const ThroughputTest* t) { return at_path_ceiling(*t, *it, mtu); }) &&
            none_above(in, *it))
            return *it;
    }
    return std::nullopt;
}

namespace {

// The sender's own qdisc shapes at the path's rate: said in `f`'s detail, with its evidence and
// the step to take.
void say_sender_shaper(const TestEvidence& v, const TracedSide& sender, Finding& f) {
    const Trace& tr = *sender.trace;
    const auto over = sender.phase.qdisc_stats.find("overlimits");
    const auto queue = queue_backlog(sender);
    f.detail += fmt::format(" Where: the sender's own qdisc shapes it — {} at {} on {} of {}{}{}.",
                            tr.link.qdisc, format_link_rate(double(*tr.link.qdisc_rate_bps)),
                            tr.iface, tr.node,
                            over != sender.phase.qdisc_stats.end() && over->second > 0
                                ? fmt::format(", over its limit {} times during the test",
                                              format_count(double(over->second)))
                                : "",
                            queue ? "; " + queue->text() : "");
    f.evidence.emplace_back("sender_qdisc", tr.link.qdisc);
    f.evidence.emplace_back("sender_qdisc_rate_mbps",
                            rounded(double(*tr.link.qdisc_rate_bps) / 1e6));
    f.next_step = fmt::format(
        "If the path should carry {}, remove or raise the shaper (tc qdisc show dev {} on "
        "{}); otherwise model it as {} (--link, np_link_rate).",
        format_link_rate(*v.link_bps), tr.iface, tr.node, format_link_rate(*v.path_bps));
}

// The hop beyond the sender's NIC, which has no shaper at the path's rate: said in `f`'s
// detail, with its evidence and the step to take.
void say_hop_beyond(const TestEvidence& v, const Trace& tr, Finding& f) {
    f.detail += fmt::format(
        " Where: beyond {}'s NIC — its data iface {} has no shaper at that rate (root "
        "qdisc {}), so a hop between the NICs (a switch port, a link negotiated lower) "
        "carries only {}.",
        tr.node, tr.iface, tr.link.qdisc.empty() ? "unknown" : tr.link.qdisc,
        format_link_rate(*v.path_bps));
    f.evidence.emplace_back("sender_qdisc", tr.link.qdisc);
    f.next_step =
        "Find the slow hop: the switch ports' negotiated speeds and counters, and "
        "ethtool on both NICs.";
}

// Where the hop is, added to `f`: the sender's own shaper, or beyond its NIC; without a trace
// of the sender, what would tell.
void say_where(const TestEvidence& v, Finding& f) {
    const auto& sender = v.traces.sender;
    if (!sender) {
        f.detail +=
            " A trace of the sender's data NIC would say whether its own qdisc shapes the "
            "traffic or the hop is beyond the NIC.";
        f.next_step = "Run with the probe (np-explain run), or check tc qdisc on the sender.";
        return;
    }
    const Trace& tr = *sender->trace;
    const bool shaper = tr.link.qdisc_rate_bps && std::fabs(double(*tr.link.qdisc_rate_bps) -
                                                            *v.path_bps) <= 0.1 * *v.path_bps;
    if (shaper)
        say_sender_shaper(v, *sender, f);
    else
        say_hop_beyond(v, tr, f);
}

}  // namespace

void path_slower_than_link(const TestEvidence& v, std::vector<Finding>& out) {
    if (!v.path_bps || !v.link_bps || !v.ceiling || !v.measured_bps) return;
    // At the path's ceiling, or TCP whose receiver is short of it only by a short test's tail.
    if (!at_path_ceiling(v.test, *v.path_bps, nic_mtu(v.input.traces)) && !tcp_tail_bytes(v))
        return;
    const auto& t = v.test;
    const double m = *v.measured_bps;
    Finding f = make_finding("PATH_SLOWER_THAN_LINK", t.label);
    f.title = fmt::format("{} sits at the {} ceiling of a {} path, not of the {} link",
                          rate_text(m, t.rate_resolution_bps), format_rate(v.ceiling->goodput_bps),
                          format_link_rate(*v.path_bps), format_link_rate(*v.link_bps));
    f.detail = fmt::format(
        "The link's rate is {}, but this test reached {} = {} of the {} {} ceiling of a {} "
        "link: the path behaves like {}, and the test is judged against that.",
        format_link_rate(*v.link_bps), rate_text(m, t.rate_resolution_bps),
        format_pct(m / v.ceiling->goodput_bps), format_rate(v.ceiling->goodput_bps),
        t.transport == Transport::tcp ? "TCP" : "UDP", format_link_rate(*v.path_bps),
        format_link_rate(*v.path_bps));
    f.evidence = {{"link_mbps", rounded(*v.link_bps / 1e6)},
                  {"path_mbps", rounded(*v.path_bps / 1e6)},
                  {"measured_mbps", rounded(m / 1e6)},
                  {"path_ceiling_mbps", rounded(v.ceiling->goodput_bps / 1e6)}};
    say_where(v, f);
    out.push_back(std::move(f));
}

}  // namespace np::rules
