#pragma once
// `run --find-udp-ceiling`: after the fixed tests, the highest UDP offered load the path carries
// with loss under a threshold, found by short traced UDP tests. CeilingSearch decides the loads
// (the model's ceiling first; when that loses, a bisection between nothing and it, to 1 % of the
// ceiling, at most kMaxCeilingSteps tests); udp_ceiling_finding says what it found and, from the
// ledger of the lowest load that lost, the stage that stopped it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/explanation/evidence.hpp"

namespace np {

inline constexpr int kMaxCeilingSteps = 8;
inline constexpr int kCeilingStepSeconds = 2;

// One step: the load offered (all streams together) and what the tool counted, read from its
// output; `test` empty when the output was no result (the search stops there).
struct CeilingStep {
    double offered_bps = 0;
    std::string phase;  // the probes' phase it ran in: udp-ceiling-1, …
    std::string file;   // its output in the run dir
    std::optional<ThroughputTest> test;
    std::optional<double> loss_pct() const;
    // What the sender counted as sent, when the output says (never what arrived in its place).
    std::optional<double> sent_bps() const;
};

// What a step showed: the path carried the load (loss at most the threshold, the load sent by the
// sender's own count); it lost more; the sender did not send the load (its own count); or no
// result to judge (the tool failed, or, loss under the threshold, no sender's count to tell
// carried from not sent).
enum class StepOutcome { carried, lost, sender_short, no_result };

class CeilingSearch {
  public:
    // `ceiling_bps`: the model's UDP goodput ceiling; `max_loss_pct`: the threshold.
    CeilingSearch(double ceiling_bps, double max_loss_pct);
    // The next load to offer; none when the search is over.
    std::optional<double> next() const;
    void record(CeilingStep step);
    const std::vector<CeilingStep>& steps() const { return steps_; }
    double ceiling_bps() const { return ceiling_; }
    double max_loss_pct() const { return max_loss_; }
    StepOutcome outcome(const CeilingStep& s) const;
    // The lowest load that was not carried (lost, or not sent), and the highest carried below
    // it: loss need not rise with the load, and a load carried above one that was not says
    // nothing about the ceiling.
    const CeilingStep* failed() const;
    const CeilingStep* passed() const;

  private:
    double ceiling_, max_loss_;
    std::vector<CeilingStep> steps_;
    bool stopped_ = false;  // a step without a result
};

// UDP_CEILING_FOUND (or, when no load was carried, UDP_CEILING_NOT_FOUND): the load found, its
// share of the model's ceiling, each step, and what stopped it at the lowest load not carried,
// from that step's own counts: the sender's count when it did not send the load (with what the
// engine finds on that step alone, its phase of the traces with it: what held the sender where
// its evidence shows), else the stage its ledger places the loss in, else "not located". `run`:
// the run's link rate and traces (its measurements are not read).
Finding udp_ceiling_finding(const CeilingSearch& search, const ExplainInput& run);

// UDP_CEILING_NOT_FOUND for a search that could not start, and why (no link rate; the fixed
// UDP test gave no result).
Finding udp_ceiling_not_searched(const std::string& why);

}  // namespace np
