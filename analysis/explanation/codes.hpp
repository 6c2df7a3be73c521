#pragma once
// Every finding code, declared once: its usual severity, the verdict it gives a test, what it
// means, and which other findings about the same test it makes redundant. The engine builds
// findings from these, `np-explain codes` lists them, and a test holds the README's code table
// against them. Findings that supersede others are data here, not an accident of rule order.
#include <string_view>
#include <vector>

#include "analysis/explanation/finding.hpp"

namespace np {

struct FindingCode {
    std::string_view code;
    // The severity it is raised with. Where the evidence raises or lowers it, `meaning` says
    // so (e.g. UDP_LOSS is info under 1 % lost).
    Severity severity;
    // What the verdict table says of a test with this finding, when it decides the verdict (the
    // first such code in registry order wins); empty when it does not.
    std::string_view verdict;
    std::string_view meaning;  // one line
    // Findings about the same test that this one makes redundant: they are dropped when it is
    // raised (e.g. a test at its ceiling is not also "below the ceiling").
    std::vector<std::string_view> supersedes;
    // Whether it places loss of the measured flow: the verdict then adds ", loss".
    bool is_loss = false;
};

// All codes, in verdict priority order.
const std::vector<FindingCode>& finding_codes();

// The declaration of `code`; throws std::logic_error for a code nobody declared (a programming
// error, caught by the tests).
const FindingCode& finding_code(std::string_view code);

// A finding of `code` with its declared severity; the caller fills in the rest.
Finding make_finding(std::string_view code, std::string test = {});

// Drops the findings that another finding about the same test supersedes (in registry order,
// so a chain A > B > C resolves the same way whatever order the rules ran in).
std::vector<Finding> without_superseded(std::vector<Finding> findings);

// The verdict word for a test from its findings: the first code with a verdict in registry
// order, plus ", loss" when a finding places loss; `fallback` when none decides.
std::string verdict_for(const std::vector<Finding>& findings, const std::string& fallback);

}  // namespace np
