// The round trip under load, located (RTT_UNDER_LOAD): ping's echoes beside a test, split by
// stage from both nodes' stamps (latency.hpp), against the same split of the idle ping phase.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/latency.hpp"
#include "analysis/explanation/rules.hpp"

namespace np::rules {
namespace {

// The run's idle ping phase (src/experiment), which both nodes' probes also traced.
constexpr const char* kIdlePhase = "ping";
// Echoes under load enough for a mean (five a second beside a test: 50 over 10 s).
constexpr int kMinLoadedEchoes = 3;
// A growth smaller than this is the hooks' and the hosts' jitter, not a queue (the stamps
// resolve a microsecond; a veth's idle round trip is ~50 µs, and a busy host's wakeups add
// tens of µs).
constexpr double kMinGrowthUs = 200;

std::string ms(double us) {
    return us >= 10000 ? fmt::format("{:.1f} ms", us / 1000) : fmt::format("{:.3f} ms", us / 1000);
}

// The nodes whose egress queue the path stage holds: those whose probe had no driver handoff
// (below the full tiers), so their queue is not split from the path.
std::vector<std::string> queues_in_path(const RttSplit& split, const Trace& pinger,
                                        const Trace& responder) {
    std::vector<std::string> nodes;
    if (!split.stage(RttStage::pinger_queue)) nodes.push_back(pinger.node);
    if (!split.stage(RttStage::responder_queue)) nodes.push_back(responder.node);
    return nodes;
}

// How a stage is named in the text, by the node it is on.
std::string stage_words(RttStage s, const Trace& pinger, const Trace& responder,
                        const RttSplit& split) {
    const auto queue = [](const Trace& t) {
        return fmt::format("{}'s egress queue ({}{} on {}, between its tc hook and the driver)",
                           t.node, t.link.qdisc.empty() ? "qdisc" : t.link.qdisc,
                           t.link.qdisc_rate_bps
                               ? " at " + format_rate(double(*t.link.qdisc_rate_bps))
                               : std::string(),
                           t.iface);
    };
    switch (s) {
        case RttStage::pinger_queue:
            return queue(pinger);
        case RttStage::responder_queue:
            return queue(responder);
        case RttStage::path: {
            const auto queues = queues_in_path(split, pinger, responder);
            if (queues.empty())
                return "the path beyond both NICs (the wire, any hop between them, and each "
                       "receiving NIC's ring before its ingress hook)";
            return fmt::format(
                "the path beyond the NICs together with {}'s egress queue{} (not told apart: no "
                "driver handoff at {} probe tier)",
                fmt::join(queues, "'s and "), queues.size() > 1 ? "s" : "",
                queues.size() > 1 ? "their" : "its");
        }
        case RttStage::responder_host:
            return fmt::format("{}'s host answering (its ingress hook to its egress hook)",
                               responder.node);
    }
    return "";
}

std::string next_step(RttStage s, const Trace& pinger, const Trace& responder,
                      const RttSplit& split) {
    switch (s) {
        case RttStage::pinger_queue:
        case RttStage::responder_queue: {
            const Trace& t = s == RttStage::pinger_queue ? pinger : responder;
            return fmt::format(
                "The echoes waited behind the test's own packets in {}'s queue on {}: "
                "bufferbloat. A shorter queue (tbf's latency or limit), an AQM such as fq_codel "
                "or cake, or a test that sends below the link's rate keeps the round trip near "
                "idle; the test's throughput needs no more queue than one round trip of data.",
                t.node, t.iface);
        }
        case RttStage::path:
            if (const auto queues = queues_in_path(split, pinger, responder); !queues.empty())
                return fmt::format(
                    "A queue held the echoes — {}'s own egress queue or one between the NICs: "
                    "this probe tier cannot tell which. Run with the probe at the full tier "
                    "(the driver handoff splits a node's queue from the path), or look at that "
                    "queue's backlog (tc -s qdisc show dev IFACE) while a test runs.",
                    fmt::join(queues, " or "));
            return "A queue between the NICs held the echoes — a switch or router port, a shaper "
                   "on a hop: look at that hop's queue and its rate (neither node's probe sees "
                   "it). The stamps also count the time frames wait in a receiving NIC's ring "
                   "before its ingress hook: with no such hop, look at the receivers' softirq "
                   "time (each CPU's account in their traces; mpstat -P ALL 1 where there is "
                   "none).";
        case RttStage::responder_host:
            return fmt::format(
                "{} was slow to answer while the test ran: a busy host. Look at what each of "
                "its cores ran (each CPU's account in its trace; mpstat -P ALL 1 where there is "
                "none) and at what else runs there.",
                responder.node);
    }
    return "";
}

}  // namespace

std::optional<RttGrowth> rtt_growth(const TestEvidence& v) {
    if (!v.traces.sender || !v.traces.receiver) return std::nullopt;
    const auto loaded = split_either_way(v.traces.sender->phase, v.traces.receiver->phase);
    if (!loaded || loaded->split.echoes < kMinLoadedEchoes) return std::nullopt;
    const Trace* pinger = (loaded->first_pinged ? v.traces.sender : v.traces.receiver)->trace;
    const Trace* responder = (loaded->first_pinged ? v.traces.receiver : v.traces.sender)->trace;
    const PhaseTrace* idle_p = pinger->find_phase(kIdlePhase);
    const PhaseTrace* idle_r = responder->find_phase(kIdlePhase);
    if (!idle_p || !idle_r) return std::nullopt;
    const auto idle = split_round_trip(*idle_p, *idle_r);
    if (!idle) return std::nullopt;
    return RttGrowth{pinger, responder, loaded->split, *idle};
}

void rtt_under_load(const TestEvidence& v, std::vector<Finding>& out) {
    const auto g = rtt_growth(v);
    if (!g) return;
    const Trace& pinger = *g->pinger;
    const Trace& responder = *g->responder;
    const RttSplit* loaded = &g->loaded;
    const RttSplit* idle = &g->idle;
    const double growth = g->growth_us();
    // The queue adds more than the path's idle round trip: a round trip at least doubled.
    if (growth < kMinGrowthUs || growth <= idle->round_trip_us) return;

    std::vector<std::string> stages;
    double located = 0;
    RttStage top = RttStage::path;
    double top_growth = -1;
    Finding f = make_finding("RTT_UNDER_LOAD", v.test.label);
    for (const auto s : kRttStages) {
        const auto now = loaded->stage(s), before = idle->stage(s);
        if (!now || !before) continue;
        const double d = *now - *before;
        if (d > 0) located += d;
        if (d > top_growth) top_growth = d, top = s;
        stages.push_back(fmt::format("{} {} (idle {})", stage_words(s, pinger, responder, *loaded),
                                     ms(*now), ms(*before)));
        f.evidence.emplace_back(fmt::format("{}_us", to_string(s)), rounded(*now, 1));
        f.evidence.emplace_back(fmt::format("idle_{}_us", to_string(s)), rounded(*before, 1));
    }
    const double share = std::min(1.0, top_growth / growth);
    f.title =
        fmt::format("The round trip grew under load: {} against {} idle, {} of the growth in {}",
                    ms(loaded->round_trip_us), ms(idle->round_trip_us), format_pct(share, 0),
                    stage_words(top, pinger, responder, *loaded));
    f.detail = fmt::format(
        "Ping ran beside the test from {} to {}; both nodes' probes stamped its echoes ({} under "
        "load, {} idle), which splits each round trip as {}'s NIC saw it: {}. Of the {} it "
        "grew by, the stages account for {}.",
        pinger.node, responder.node, loaded->echoes, idle->echoes, pinger.node,
        fmt::join(stages, "; "), ms(growth), format_pct(std::min(1.0, located / growth), 0));
    f.evidence.emplace_back("pinger", pinger.node);
    f.evidence.emplace_back("echoes_under_load", loaded->echoes);
    f.evidence.emplace_back("round_trip_us", rounded(loaded->round_trip_us, 1));
    f.evidence.emplace_back("idle_round_trip_us", rounded(idle->round_trip_us, 1));
    f.evidence.emplace_back("stage", to_string(top));
    f.evidence.emplace_back("stage_share", rounded(share, 3));
    f.next_step = next_step(top, pinger, responder, *loaded);
    out.push_back(std::move(f));
}

}  // namespace np::rules
