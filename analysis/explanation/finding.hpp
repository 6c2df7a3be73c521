#pragma once
// A finding is one thing the analyzer concluded, with the numbers that back it (docs/design.md,
// "Finding"). Codes are stable UPPER_SNAKE identifiers that users and scripts match on; each is
// declared once, with its severity, verdict and meaning, in analysis/explanation/codes.hpp.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace np {

enum class Severity { info, warn, error };

const char* to_string(Severity s);

// One piece of evidence: the value keeps its JSON type (a number is a number, with its unit in
// the key: ceiling_mbps 94.15, lost_datagrams 102), text stays text; a list holds plain values
// only (a search's steps: step_offered_mbps).
using Evidence = std::vector<std::pair<std::string, nlohmann::json>>;

struct Finding {
    std::string code;  // registered in analysis/explanation/codes.hpp, e.g. LINE_RATE_BOUND
    Severity severity = Severity::info;
    std::string test;    // the test it is about ("iperf3 UDP"); empty for the run or a node
    std::string title;   // one line
    std::string detail;  // the explanation, with the numbers
    Evidence evidence;
    std::string next_step;  // empty when there is nothing to do
};

// A number for evidence, rounded to `decimals` (94.148 -> 94.15 with 2).
nlohmann::json rounded(double value, int decimals = 2);
// An evidence value as text: a string as it is, a number or true/false as JSON writes it.
std::string evidence_text(const nlohmann::json& value);

// 0 when no finding is at error severity, 1 when one is (exit status of run and explain).
int exit_status_for(const std::vector<Finding>& findings);

nlohmann::json to_json(const Finding& f);
// The reverse of to_json, for findings read back from a contract or a findings document (also
// those written before findings had "test": then evidence "test" names it). Throws InputError
// whose field is `where` plus the key that is missing or of the wrong type.
Finding parse_finding(const nlohmann::json& doc, const std::string& where);
// The findings document: {"schema": "np-findings/1", "generator", "findings": [...]}.
nlohmann::json findings_document(const std::vector<Finding>& findings);

// Human rendering: severity, title and code, the detail indented, the test and the evidence as
// key = value lines, then "next step: ...".
std::string render_findings(const std::vector<Finding>& findings);

}  // namespace np
