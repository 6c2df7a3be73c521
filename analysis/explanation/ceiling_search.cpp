#include "analysis/explanation/ceiling_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/explain.hpp"
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
    const auto sent = s.sent_bps();
    return fmt::format("{} offered: {} sent, {} received, {} lost", format_rate(s.offered_bps),
                       sent ? format_rate(*sent) : std::string("no count of what was"),
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

std::optional<double> CeilingStep::sent_bps() const {
    if (!test) return std::nullopt;
    return test->sent_bps;
}

StepOutcome CeilingSearch::outcome(const CeilingStep& s) const {
    const auto loss = s.loss_pct();
    if (!loss) return StepOutcome::no_result;
    if (*loss > max_loss_) return StepOutcome::lost;
    // Carried, or not sent: only the sender's own count tells them apart.
    const auto sent = s.sent_bps();
    if (!sent) return StepOutcome::no_result;
    if (*sent < s.offered_bps * rules::kSenderShortfall) return StepOutcome::sender_short;
    return StepOutcome::carried;
}

const CeilingStep* CeilingSearch::failed() const {
    const CeilingStep* lowest = nullptr;
    for (const auto& s : steps_) {
        const StepOutcome o = outcome(s);
        if ((o == StepOutcome::lost || o == StepOutcome::sender_short) &&
            (!lowest || s.offered_bps < lowest->offered_bps))
            lowest = &s;
    }
    return lowest;
}

const CeilingStep* CeilingSearch::passed() const {
    const CeilingStep* fail = failed();
    const CeilingStep* best = nullptr;
    for (const auto& s : steps_)
        if (outcome(s) == StepOutcome::carried && (!fail || s.offered_bps < fail->offered_bps) &&
            (!best || s.offered_bps > best->offered_bps))
            best = &s;
    return best;
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
    if (outcome(step) == StepOutcome::no_result) stopped_ = true;
    steps_.push_back(std::move(step));
}

namespace {

// Every step, said and as lists of plain values in the order run (the report's chart of loss
// against offered load).
void add_steps(Finding& f, const CeilingSearch& search) {
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
    f.evidence.emplace_back("step_offered_mbps", offered);
    f.evidence.emplace_back("step_received_mbps", received);
    f.evidence.emplace_back("step_loss_pct", loss);
    f.detail = fmt::format("{} short UDP test{} of {} s each, the model's ceiling first: {}.",
                           search.steps().size(), search.steps().size() == 1 ? "" : "s",
                           kCeilingStepSeconds, fmt::join(steps, "; "));
}

// What the engine finds on a step alone, held against its own phase of the traces: the findings
// about its test above info (what held the sender where its evidence shows it: the cgroup that
// throttled it, the CPU time the hypervisor took, …).
std::vector<Finding> step_findings(const CeilingStep& s, const ExplainInput& run) {
    if (!s.test || s.test->label.empty()) return {};
    ExplainInput in;
    in.link_bps = run.link_bps;
    in.traces = run.traces;
    in.measurements.throughput.push_back(*s.test);
    std::vector<Finding> out;
    for (auto& f : explain(in).findings)
        if (f.test == s.test->label && f.severity != Severity::info) out.push_back(std::move(f));
    return out;
}

// How strongly a step's finding names what held its sender, strongest first; none for one that
// does not (the step's loss, its traces). A cgroup that throttled the sending process
// (SENDER_LIMITED with starved_tool's counts) is measured on the process itself; a saturated core
// (HOST_LIMITED, or SENDER_LIMITED naming one) on its CPU; the hypervisor's steal (CPU_STOLEN) only
// beside the shortfall; a sender-limited finding without a cause says only that it sent less.
std::optional<int> cause_rank(const Finding& h) {
    const auto carries = [&](std::string_view key_end) {
        return std::any_of(h.evidence.begin(), h.evidence.end(),
                           [&](const auto& e) { return e.first.ends_with(key_end); });
    };
    if (h.code == "SENDER_LIMITED")
        return carries(rules::kThrottledMsKey) ? 0 : carries(rules::kCpuBusyPctKey) ? 1 : 3;
    if (h.code == "HOST_LIMITED") return 1;
    if (h.code == "CPU_STOLEN") return 2;
    return std::nullopt;
}

// A sender that did not send the step's load, by its own count, and what that step's own
// findings say held it. The sender's count alone stops the search there: a queue found holding
// packets is no proof it held the sender (a sender its cgroup throttles sends in bursts that
// queue too).
void say_sender_short(Finding& f, const CeilingStep& fail, const ExplainInput& run,
                      const std::string& at_most) {
    f.evidence.emplace_back("stopped_at", "sender");
    f.detail += fmt::format(
        " At {} offered the sender sent only {} by its own count: the sending host set that "
        "rate, and the load never reached the path, so the search says nothing of the path "
        "above it.",
        format_rate(fail.offered_bps), format_rate(fail.sent_bps().value_or(0)));
    const std::vector<Finding> held = step_findings(fail, run);
    std::vector<std::string> said, codes;
    // Whose next step and evidence are given: the finding that names what held the sender, by
    // rank (cause_rank); a finding about the step's loss or its traces never.
    const Finding* cause = nullptr;
    for (const auto& h : held) {
        std::string text = fmt::format("{} ({})", h.title, h.code);
        if (std::find(said.begin(), said.end(), text) != said.end()) continue;  // one per node
        said.push_back(std::move(text));
        if (std::find(codes.begin(), codes.end(), h.code) == codes.end()) codes.push_back(h.code);
        if (cause_rank(h) && (!cause || *cause_rank(h) < *cause_rank(*cause))) cause = &h;
    }
    f.evidence.emplace_back("step_codes", codes);
    // The evidence behind the next step given, under "step." (step.node2-2.throttled_ms).
    if (cause)
        for (const auto& [key, value] : cause->evidence)
            f.evidence.emplace_back("step." + key, value);
    if (said.empty())
        f.detail += " That step's own evidence names nothing that held the sender.";
    else
        f.detail +=
            fmt::format(" That step's own findings ({}): {}.", fail.phase, fmt::join(said, "; "));
    f.next_step =
        cause ? cause->next_step + " To test without loss, " + at_most + "."
              : "Check the sender's CPU and socket buffer during such a test; more streams (-P) "
                "or a faster host may reach more. To test without loss, " +
                    at_most + ".";
}

// What stopped the search at the lowest load that failed: the sender's own count, the stage the
// probes place the loss in, or nothing located.
void say_what_stopped_it(Finding& f, const CeilingSearch& search, const CeilingStep& fail,
                         const ExplainInput& run) {
    const CeilingStep* pass = search.passed();
    f.evidence.emplace_back("first_lossy_mbps", rounded(fail.offered_bps / 1e6, 2));
    const std::string at_most =
        pass ? "offer at most " + format_rate(pass->offered_bps) : "offer less than was tried";
    if (search.outcome(fail) == StepOutcome::sender_short) {
        say_sender_short(f, fail, run, at_most);
    } else if (const auto stage = stopping_stage(fail, run.traces, f.evidence)) {
        f.detail += fmt::format(" At {} the loss was placed by the probes: {}.",
                                format_rate(fail.offered_bps), stage->text);
        f.next_step = fmt::format("{} To test without loss, {}.",
                                  rules::next_step_for(stage->stage, Transport::udp), at_most);
    } else {
        f.detail += fmt::format(
            " Where the loss at {} happened was not located: both nodes' traces at a tier that "
            "counts drops are needed for its ledger.",
            format_rate(fail.offered_bps));
        f.next_step =
            "Run with both probes at the full tier to place the loss; to test without loss, " +
            at_most + ".";
    }
}

}  // namespace

Finding udp_ceiling_finding(const CeilingSearch& search, const ExplainInput& run) {
    const CeilingStep* pass = search.passed();
    const CeilingStep* fail = search.failed();
    Finding f = make_finding(pass ? "UDP_CEILING_FOUND" : "UDP_CEILING_NOT_FOUND");
    const std::string threshold = format_pct(search.max_loss_pct() / 100, 3);
    const double ceiling = search.ceiling_bps();
    if (pass) {
        f.title = fmt::format(
            "The UDP ceiling found: {} offered, sent and carried with at most {} lost ({} of the "
            "model's {})",
            format_rate(pass->offered_bps), threshold, format_pct(pass->offered_bps / ceiling),
            format_rate(ceiling));
        f.evidence = {{"found_mbps", rounded(pass->offered_bps / 1e6, 2)},
                      {"pct_of_ceiling", rounded(100 * pass->offered_bps / ceiling, 2)}};
    } else if (fail) {
        f.title = fmt::format("No UDP load tried was carried with at most {} lost", threshold);
    } else {
        f.title = "The UDP ceiling search got no result";
    }
    f.evidence.emplace_back("ceiling_mbps", rounded(ceiling / 1e6, 2));
    f.evidence.emplace_back("max_loss_pct", search.max_loss_pct());
    f.evidence.emplace_back("steps", search.steps().size());
    add_steps(f, search);
    if (fail) {
        say_what_stopped_it(f, search, *fail, run);
    } else if (!pass) {
        f.detail +=
            " The last step gave no result the search can judge (the tool failed, or its output "
            "holds no count of what the sender sent), so the search stopped there.";
        f.next_step = fmt::format("Read that step's output ({}) for what iperf3 printed.",
                                  search.steps().empty() ? "" : search.steps().back().file);
    } else {
        // The first step: the model's ceiling offered, sent, and carried under the threshold.
        f.detail +=
            " The model's ceiling was offered, sent and carried with loss under the threshold: "
            "for this datagram size the link's headers are the only limit.";
        f.next_step = "Nothing to change: UDP at this datagram size reaches the line rate.";
    }
    return f;
}

Finding udp_ceiling_not_searched(const std::string& why) {
    Finding f = make_finding("UDP_CEILING_NOT_FOUND");
    f.title = "The UDP ceiling was not searched";
    f.detail = fmt::format(
        "The search starts at the model's ceiling for the fixed UDP test's datagrams on the "
        "link: {}.",
        why);
    f.evidence = {{"why", why}};
    f.next_step =
        "Give the link rate (--link or np_link_rate) if it was unknown, or see the UDP test's "
        "own findings for why it gave no result; then run again.";
    return f;
}

}  // namespace np
