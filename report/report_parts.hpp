#pragma once
// What the report's HTML page (page.cpp), its Markdown summary (markdown.cpp) and its charts
// (charts.cpp) share: text made safe for HTML or a terminal, how a series and a ledger are named,
// a ledger as steps, and the tables both pages show.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/report.hpp"

namespace np::report_parts {

// Text as HTML, control characters but tab and newline as U+FFFD.
std::string html(std::string_view s);
// Control characters but the line's own (tab, newline) as U+FFFD: a report is read in a
// terminal or an editor as often as in a browser.
std::string without_controls(std::string s);
// Several modes: a series is named with its mode too.
std::string series_prefix(const ReportInput& in, const RunDirMode& m);

// One step of a test's ledger in path order: a point with its count, or what happened between
// two points (a drop by node and kernel reason, the unattributed rest, frames still queued).
struct LedgerStep {
    std::string step;  // unique within its ledger
    std::string node;
    std::optional<uint64_t> packets;
    std::string kind;  // kLedgerKinds
    std::string note;
};

// The kinds of step, each with its colour: counts in blues, loss red, what is not loss grey
// or green, what nobody could place orange.
inline const std::vector<std::pair<std::string, std::string>> kLedgerKinds = {
    {"counted", "#4c78a8"},      {"inferred", "#9ecae9"},        {"lost", "#d62728"},
    {"unattributed", "#f58518"}, {"duplicate", "#54a24b"},       {"queued", "#bab0ac"},
    {"housekeeping", "#bab0ac"}, {"other direction", "#d8d8d8"},
};

std::vector<LedgerStep> ledger_steps(const Ledger& l);
std::string ledger_heading(const ReportInput& in, const RunDirMode& m, const Ledger& l);

// ---- tables ------------------------------------------------------------------------------

struct Cells {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

Cells verdict_cells(const Explanation& e);
// Latency and loss per mode: from the tools' outputs when the run dir has them, else from the
// contract's figures.
Cells loss_cells(const ReportInput& in);
Cells ledger_cells(const Ledger& l);
std::string html_table(const Cells& c, const char* css_class = "");
std::string markdown_table(const Cells& c);
std::vector<Contract> contracts_of(const ReportInput& in);
std::string mode_heading(const RunDirMode& m);
// The line under the title: when, by which np-explain, over which link.
std::string header_line(const ReportInput& in);

}  // namespace np::report_parts
