#include "analysis/explanation/ceiling_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/format.hpp"
#include "analysis/explanation/ledger.hpp"
#include "analysis/explanation/rules.hpp"

namespace np {
namespace {

// The search ends when the bracket is this narrow, as a share of the ceiling.
constexpr double kResolution = 0.01;

std::string step_text(const CeilingStep& s) {
    const auto loss = s.loss_pct();
    if (!loss) return fmt::format("{} offered: no result", format_rate(s.offered_bps));
    return fmt::format("{} offered: {} received, {} lost", format_rate(s.offered_bps),
                       format_rate(s.test->received_bps.value_or(0)), format_pct(*loss / 100, 3));
}

struct StoppingStage {
    Stage stage = Stage::unknown;
    std::string text;  // "the receiving socket (5 SOCKET_RCVBUFF on node1-1)"
};

// The stage that lost the most of the step's flow, by its ledger; none when the ledger cannot
// say (a trace missing, tiers that count no drops, nothing lost in any stage).
std::optional<StoppingStage> stopping_stage(const CeilingStep& s, const std::vector<Trace>& traces,
                                            Evidence& evidence) {
    if (!s.test) return {};
    const Ledger l = build_ledger(*s.test, traces_for(*s.test, traces));
    if (!l.complete()) return {};
    std::optional<Stage> worst;
    uint64_t most = 0;
    for (const auto& d : l.drops)
        if (is_data_loss(d.stage) && !d.housekeeping && l.lost_in(d.stage) > most) {
            most = l.lost_in(d.stage);
            worst = d.stage;
        }
    if (!worst) return {};
    std::string where;
    for (const auto& d : l.drops)
        if (d.stage == *worst && !d.housekeeping && !d.node.empty()) {
            where =
                fmt::format(" ({} {} on {})", format_count(double(d.packets)), d.reason, d.node);
            break;
        }
    evidence.emplace_back("stopped_at", std::string(key_of(*worst)));
    evidence.emplace_back("stopped_at_lost", most);
    return StoppingStage{*worst, fmt::format("{}{}", to_string(*worst), where)};
}

}  // namespace

std::optional<double> CeilingStep::loss_pct() const {
    if (!test || !test->datagrams_lost || !test->datagrams_total || *test->datagrams_total <= 0)
        return std::nullopt;
    return 100.0 * double(*test->datagrams_lost) / double(*test->datagrams_total);
}

CeilingSearch::CeilingSearch(double ceiling_bps, double max_loss_pct)
    : ceiling_(ceiling_bps), max_loss_(max_loss_pct) {}

bool CeilingSearch::passes(const CeilingStep& s) const {
    const auto loss = s.loss_pct();
    return loss && *loss <= max_loss_;
}

const CeilingStep* CeilingSearch::passed() const {
    const CeilingStep* best = nullptr;
    for (const auto& s : steps_)
        if (passes(s) && (!best || s.offered_bps > best->offered_bps)) best = &s;
    return best;
}

const CeilingStep* CeilingSearch::failed() const {
    const CeilingStep* lowest = nullptr;
    for (const auto& s : steps_)
        if (s.loss_pct() && !passes(s) && (!lowest || s.offered_bps < lowest->offered_bps))
            lowest = &s;
    return lowest;
}

std::optional<double> CeilingSearch::next() const {
    if (steps_.empty()) return ceiling_;
    if (stopped_ || int(steps_.size()) >= kMaxCeilingSteps) return std::nullopt;
    const CeilingStep* fail = failed();
    if (!fail) return std::nullopt;  // the ceiling itself passed
    const CeilingStep* pass = passed();
    const double lo = pass ? pass->offered_bps : 0;
    if (fail->offered_bps - lo <= ceiling_ * kResolution) return std::nullopt;
    return (lo + fail->offered_bps) / 2;
}

void CeilingSearch::record(CeilingStep step) {
    if (!step.loss_pct()) stopped_ = true;
    steps_.push_back(std::move(step));
}

Finding udp_ceiling_finding(const CeilingSearch& search, const std::vector<Trace>& traces) {
    const CeilingStep* pass = search.passed();
    const CeilingStep* fail = search.failed();
    Finding f = make_finding(pass ? "UDP_CEILING_FOUND" : "UDP_CEILING_NOT_FOUND");
    const std::string threshold = format_pct(search.max_loss_pct() / 100, 3);
    const double ceiling = search.ceiling_bps();
    if (pass) {
        f.title = fmt::format(
            "The UDP ceiling found: {} offered with at most {} lost ({} of the "
            "model's {})",
            format_rate(pass->offered_bps), threshold, format_pct(pass->offered_bps / ceiling),
            format_rate(ceiling));
        f.evidence = {{"found_mbps", rounded(pass->offered_bps / 1e6, 2)},
                      {"pct_of_ceiling", rounded(100 * pass->offered_bps / ceiling, 2)}};
    } else {
        f.title = fmt::format("No UDP load tried kept its loss under {}", threshold);
    }
    f.evidence.emplace_back("ceiling_mbps", rounded(ceiling / 1e6, 2));
    f.evidence.emplace_back("max_loss_pct", search.max_loss_pct());
    f.evidence.emplace_back("steps", search.steps().size());
    std::vector<std::string> steps;
    nlohmann::json offered = nlohmann::json::array(), received = nlohmann::json::array(),
                   loss = nlohmann::json::array();
    for (const auto& s : search.steps()) {
        steps.push_back(step_text(s));
        offered.push_back(rounded(s.offered_bps / 1e6, 3));
        received.push_back(s.test && s.test->received_bps ? rounded(*s.test->received_bps / 1e6, 3)
                                                          : nlohmann::json(nullptr));
        loss.push_back(s.loss_pct() ? rounded(*s.loss_pct(), 4) : nlohmann::json(nullptr));
    }
    // Each step in the order run, for the report's chart of loss against offered load.
    f.evidence.emplace_back("step_offered_mbps", offered);
    f.evidence.emplace_back("step_received_mbps", received);
    f.evidence.emplace_back("step_loss_pct", loss);
    f.detail = fmt::format("{} short UDP test{} of {} s each, the model's ceiling first: {}.",
                           search.steps().size(), search.steps().size() == 1 ? "" : "s",
                           kCeilingStepSeconds, fmt::join(steps, "; "));
    if (!fail) {
        f.detail +=
            " The path carried the model's ceiling with loss under the threshold: the "
            "link's headers are its only limit for this datagram size.";
        f.next_step = "Nothing to change: UDP at this datagram size reaches the line rate.";
        return f;
    }
    const auto stage = stopping_stage(*fail, traces, f.evidence);
    f.evidence.emplace_back("first_lossy_mbps", rounded(fail->offered_bps / 1e6, 2));
    const std::string at_most =
        pass ? "offer at most " + format_rate(pass->offered_bps) : "offer less than was tried";
    if (stage) {
        f.detail += fmt::format(" At {} the loss was placed by the probes: {}.",
                                format_rate(fail->offered_bps), stage->text);
        f.next_step = fmt::format("{} To test without loss, {}.",
                                  rules::next_step_for(stage->stage, Transport::udp), at_most);
    } else {
        f.detail += fmt::format(
            " Where the loss at {} happened was not located: both nodes' traces at a tier that "
            "counts drops are needed for its ledger.",
            format_rate(fail->offered_bps));
        f.next_step =
            "Run with both probes at the full tier to place the loss; to test without "
            "loss, " +
            at_most + ".";
    }
    return f;
}

}  // namespace np
