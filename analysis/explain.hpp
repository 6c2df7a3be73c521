#pragma once
// The explanation engine: holds what the tools measured against the header-overhead model for
// the link and concludes why the numbers are what they are, as findings (finding.hpp) plus a
// one-line verdict per test.
//
// The engine is a list of rules. Each rule reads the input and adds findings; the last one
// reads the BPF probe's traces of the data NICs, when there are any (trace_findings.hpp).
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/measurement.hpp"
#include "analysis/model.hpp"
#include "analysis/trace.hpp"

namespace np {

struct ExplainInput {
    Measurements measurements;
    // Nominal link rate (--link). Empty: unknown, and then no ceiling is claimed.
    std::optional<double> link_bps;
    // np-trace/1 documents of the nodes' data NICs (np-probe), for the same run.
    std::vector<Trace> traces;
};

// One row of the verdict table.
struct Verdict {
    std::string test;      // ThroughputTest/PingTest label
    std::string source;    // file
    std::string command;   // the command line that produced it, when the input showed it
    std::string measured;  // as printed: "941.00 Mbit/s" or "0.045 ms avg"
    std::optional<double> measured_bps;
    std::optional<double> ceiling_bps;
    std::optional<double> ratio;     // measured / ceiling
    std::string verdict;             // short: "line-rate bound", "sender-limited", …
    std::vector<std::string> codes;  // the findings about this test, in the order raised
};

struct Explanation {
    std::vector<Verdict> verdicts;  // throughput tests first, then pings, then failures
    std::vector<Finding> findings;
};

// The model for one test on the given link: MTU from the path MTU iperf3 saw (else 1500), TCP
// timestamps inferred from the MSS, the test's UDP datagram size.
std::optional<Model> model_for(const ThroughputTest& t, double link_bps);

// Everything a rule may read about one throughput test.
struct TestView {
    const ThroughputTest& test;
    Verdict& verdict;
    std::optional<Model> model;  // empty when the link rate is unknown
    const Ceiling* ceiling = nullptr;
    std::optional<double> measured_bps;  // what arrived if known, else what was sent
};

using ThroughputRule = void (*)(const TestView&, Explanation&);
using WholeRule = void (*)(const ExplainInput&, Explanation&);

struct Rules {
    std::vector<WholeRule> before;         // e.g. tool failures, missing link rate
    std::vector<ThroughputRule> per_test;  // run for every throughput test in order
    std::vector<WholeRule> after;          // e.g. ping, cross-test comparisons
};

const Rules& default_rules();

Explanation explain(const ExplainInput& in, const Rules& rules = default_rules());

// {"schema": "np-findings/1", "findings": [...], "verdicts": [...]}; verdict keys:
// test, source, command (null when not shown), measured, measured_mbps, ceiling_mbps,
// pct_of_ceiling, verdict, codes.
nlohmann::json to_json(const Explanation& e);
// The reverse of to_json: an explanation read back from a contract's "explain" or a
// <mode>_findings.json. Throws InputError whose field is `where` plus the key that is wrong.
Explanation parse_explanation(const nlohmann::json& doc, const std::string& where);

// The verdict table (np::Table) followed by render_findings.
std::string render_explanation(const Explanation& e, std::optional<double> link_bps);

}  // namespace np
