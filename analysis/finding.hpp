#pragma once
// A finding is one thing the analyzer concluded, with the numbers that back it (DESIGN.md,
// "Finding"). Codes are stable UPPER_SNAKE identifiers that users and scripts may match on.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace np {

enum class Severity { info, warn, error };

const char* to_string(Severity s);

struct Finding {
    std::string code;  // stable, UPPER_SNAKE, e.g. LINE_RATE_BOUND
    Severity severity = Severity::info;
    std::string title;   // one line
    std::string detail;  // the explanation, with the numbers
    // key -> value, both as printed (values carry their unit in the key, e.g. tcp_mbps).
    std::vector<std::pair<std::string, std::string>> evidence;
    std::string next_step;  // empty when there is nothing to do
};

// 0 when no finding is at error severity, 1 when one is (DESIGN.md exit status).
int exit_status_for(const std::vector<Finding>& findings);

nlohmann::json to_json(const Finding& f);
// The reverse of to_json, for findings read back from a contract or a findings document.
// Throws InputError whose field is `where` plus the key that is missing or of the wrong type.
Finding parse_finding(const nlohmann::json& doc, const std::string& where);
// The findings document: {"schema": "np-findings/1", "findings": [...]}.
nlohmann::json findings_document(const std::vector<Finding>& findings);

// Human rendering: severity and title, the detail indented, evidence as key = value lines,
// then "next step: ...".
std::string render_findings(const std::vector<Finding>& findings);

}  // namespace np
