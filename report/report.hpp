#pragma once
// `np-explain report`: one self-contained HTML page (or a Markdown summary) of a run dir —
// every mode's result contract, the tools' outputs, the probes' traces and the explanation.
//
// The charts are Vega-Lite specs with their data inline, built here as plain JSON so they are
// unit-testable; the page embeds the Vega JavaScript it is given (the CLI passes the copy
// compiled into np-explain), so it opens offline and fetches nothing.
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/measurement.hpp"
#include "common/trace.hpp"
#include "rundir/reader.hpp"

namespace np {

struct ReportInput {
    std::string title;              // e.g. the run dir
    std::string generated_at;       // shown in the header (UTC)
    std::vector<RunDirMode> modes;  // in the order to show them; at least one
    // A fan-out's gathered dir: every pair, measured or not. Each measured pair is also one of
    // `modes`, named by the pair; the pairs table then stands where the parity table would.
    std::vector<PairOutcome> pairs;
    std::vector<std::string> left_out;  // files of the run dir that did not parse (RunDirContents)
};

// A run dir read for its report: titled by the directory, dated now.
ReportInput read_report_input(const std::filesystem::path& dir);

// The run dir's report.html, written atomically and readable by all (a page to open in a
// browser, often as another user than the root that ran the experiment).
void write_report_file(const std::filesystem::path& path, const std::string& text);
// The page of `in` (read from `dir`) as `dir`/report.html, with the charts' scripts compiled
// into np-explain; returns its path.
std::filesystem::path write_run_report(const std::filesystem::path& dir, const ReportInput& in);

// One chart: a Vega-Lite spec whose data is inline.
struct Chart {
    std::string id;  // ceiling, frame, throughput, events, drops, latency
    std::string title;
    std::string caption;  // what it shows and how to read it
    nlohmann::json spec;
    size_t data_rows = 0;  // rows in the spec's data, over all its layers
};

// The charts there is data for, in page order. A chart without data (no trace, no ping) is
// left out rather than drawn empty; report_gaps() says what is missing and why.
std::vector<Chart> report_charts(const ReportInput& in);
std::vector<std::string> report_gaps(const ReportInput& in);

// The link rate the report models against: the first mode's link_mbps that is known (a
// tutorial mode's own contract has none; the np-explain run beside it measured the same link).
std::optional<double> report_link_bps(const ReportInput& in);

// The JavaScript the page runs, verbatim (vega, vega-lite, vega-embed: the UMD builds).
struct ChartScripts {
    std::string_view vega;
    std::string_view vega_lite;
    std::string_view vega_embed;
};

// The page: header, verdicts, parity (several modes only), charts, latency and loss, findings
// with their evidence. When every chart has rendered, the page sets data-charts-rendered on
// <body> to the number of charts (data-chart-error on failure); each chart's <div> gets
// data-marks, the number of data marks drawn. Throws InputError when a script holds
// "</script", which would end its <script> element early.
std::string render_report_html(const ReportInput& in, const ChartScripts& js);

// The summary that pastes into a tutorial report or an issue: verdict table, findings with
// their evidence, and the parity table when there are several modes.
std::string render_report_markdown(const ReportInput& in);

}  // namespace np
