#pragma once
// What the explanation engine works on and produces, and the plumbing its rules plug into: the
// input (measurements, link rate, traces), the evidence of one throughput test that a rule reads,
// the rule types, and the explanation (verdict rows, findings, ledgers). Rules (rules.hpp)
// include this, not explain.hpp, so the engine and its rules do not include each other.
#include <optional>
#include <string>
#include <vector>

#include "analysis/explanation/finding.hpp"
#include "analysis/explanation/ledger.hpp"
#include "analysis/explanation/model.hpp"
#include "analysis/readers/measurement.hpp"
#include "common/trace.hpp"

namespace np {

struct ExplainInput {
    Measurements measurements;
    // Nominal link rate (--link, np_link_rate or the NIC's speed). Empty: unknown, and then no
    // ceiling is claimed.
    std::optional<double> link_bps;
    // np-trace/1 documents of the nodes' data NICs (np-probe), for the same run.
    std::vector<Trace> traces;
};

// One row of the verdict table.
struct Verdict {
    std::string test;     // ThroughputTest/PingTest label
    std::string source;   // file
    std::string command;  // the command line that produced it, when the input showed it
    // The tool's version and platform as its output shows them ("iperf 3.12 on Linux", "ping
    // (Windows)"); empty when it shows neither.
    std::string tool;
    std::string measured;  // as printed: "941.00 Mbit/s" or "0.045 ms avg"
    std::optional<double> measured_bps;
    std::optional<double> ceiling_bps;
    std::optional<double> ratio;  // measured / ceiling
    // The model the test was held against: its unit's frames and the ceiling they give (so
    // nothing downstream computes it again); empty when no link rate was known.
    std::optional<Ceiling> ceiling;
    std::string verdict;             // short: "line-rate bound", "sender-limited", …
    std::vector<std::string> codes;  // the findings about this test, in the order raised
};

struct Explanation {
    std::vector<Verdict> verdicts;  // throughput tests first, then pings, then failures
    std::vector<Finding> findings;
    std::vector<Ledger> ledgers;  // one per traced throughput test, for the report's picture
    // The nominal link rate the tests were held against (--link, np_link_rate or the NIC's
    // speed); empty: unknown, and no ceiling was claimed.
    std::optional<double> link_bps;
    // The rate the tests were held against instead of the link's, when the numbers showed a
    // slower path (PATH_SLOWER_THAN_LINK).
    std::optional<double> path_bps;
};

// The MTU the traced data NICs of both ends allow: the smaller of the two (either alone when
// only one was traced); empty without a trace that reports it.
std::optional<int> nic_mtu(const std::vector<Trace>& traces);

// The nominal link rate a run or an explanation is held against, in the one order every command
// takes: the one given (--link), else the one recorded (np_link_rate, a contract's link_mbps),
// else the data NIC's speed as the kernel reports it (empty or 0: unknown); empty when none.
std::optional<double> resolve_link_bps(std::optional<double> given, std::optional<double> recorded,
                                       std::optional<int64_t> nic_speed_mbps);
// The first traced data NIC's speed that the kernel reports.
std::optional<int64_t> nic_speed_mbps(const std::vector<Trace>& traces);

// Everything measured about one throughput test: what a rule reads.
struct TestEvidence {
    const ThroughputTest& test;
    const ExplainInput& input;
    std::optional<double> link_bps{};  // the nominal rate
    // Set when the numbers show a path slower than the link (PATH_SLOWER_THAN_LINK): the
    // model and ceiling below are then that rate's.
    std::optional<double> path_bps{};
    std::optional<Model> model{};  // empty when the link rate is unknown
    const Ceiling* ceiling = nullptr;
    std::optional<double> measured_bps{};  // what arrived if known, else what was sent
    TestTraces traces{};
    std::optional<Ledger> ledger{};  // when a trace covers the test
    // The rate the model uses: the slower path's when there is one, else the link's.
    double model_bps() const { return model ? model->params.link_bps : 0; }
};

using TestRule = void (*)(const TestEvidence&, std::vector<Finding>&);
using RunRule = void (*)(const ExplainInput&, Explanation&);

struct Rules {
    std::vector<RunRule> before;     // e.g. tool failures, missing link rate
    std::vector<TestRule> per_test;  // run for every throughput test, on its whole evidence
    std::vector<RunRule> after;      // e.g. ping, tool failures with traces
};

}  // namespace np
