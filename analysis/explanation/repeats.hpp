#pragma once
// `run --repeat N`: the tests run N times, each repetition explained on its own (its own probe
// phases: tcp, udp, then tcp-2, udp-2, …). repeat_findings holds each test's repetitions side by
// side: the median and spread of what was measured, and whether the verdict held in every
// repetition (REPEAT_SPREAD) or flipped between them (VERDICT_FLIPS).
#include <optional>
#include <string>
#include <vector>

#include "analysis/explanation/explain.hpp"

namespace np {

// One repetition's explanation, and which repetition it was (1 …).
struct Repetition {
    int number = 1;
    Explanation explanation;
};

// One finding per throughput test of the first repetition that every repetition ran (by its
// label: "iperf3 TCP", "iperf3 UDP -R", …). A repetition without that test (its tool failed) is
// counted as such.
std::vector<Finding> repeat_findings(const std::vector<Repetition>& repetitions);

// The verdict table says so of a test whose verdict flipped: "line-rate bound, flips between
// repetitions" (its row is the first repetition's).
void mark_flipped_verdicts(const std::vector<Finding>& repeats, std::vector<Verdict>& verdicts);

}  // namespace np
