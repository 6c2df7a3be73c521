// `np-explain report [RUN_DIR]`: the run dir as one self-contained HTML page with plots, or a
// Markdown summary. Reading the run dir is here; the page itself is report/page.cpp.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "common/errors.hpp"
#include "common/run_dir.hpp"
#include "common/trace.hpp"
#include "report/embedded_scripts.hpp"
#include "report/report.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArgs {
    std::string dir;
    std::string out;
    std::string format = "html";
};

void warn(const InputError& e, const std::string& what) {
    print_text(stderr,
               fmt::format("np-explain: warning: {}: {} ({})\n", e.field(), e.what(), what));
}

// What the run dir holds for one mode. The contract must parse (that is the report's subject);
// a tool output or trace that does not is left out with a warning, as a run that stopped early
// leaves such files behind and its contract already says so.
ReportMode read_mode(const fs::path& dir, Contract c) {
    ReportMode m;
    const std::string source = run_dir::contract(c.mode);
    m.link_bps = c.link_bps;
    if (const auto it = c.document.find("explain"); it != c.document.end() && !it->is_null())
        m.explanation = parse_explanation(*it, source + ": explain");

    for (const std::string_view which : {run_dir::kPing, run_dir::kTcp, run_dir::kUdp}) {
        const fs::path path = dir / run_dir::output(c.mode, which);
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) continue;
        try {
            InputFile in(path, which == run_dir::kPing ? kMaxPingBytes : kMaxToolOutputBytes);
            m.measurements.append(parse_measurements(in, path.filename().string()));
        } catch (const InputError& e) {
            warn(e, "left out of the report");
        }
    }

    std::vector<fs::path> traces;
    for (const auto& ref : contract_trace_files(c)) traces.push_back(dir / ref);
    if (traces.empty()) {
        // A contract written before traces were referenced: the run dir's naming.
        const std::string prefix = run_dir::trace_prefix(c.mode);
        for (const auto& entry : fs::directory_iterator(dir)) {
            const auto name = entry.path().filename().string();
            if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".json")
                traces.push_back(entry.path());
        }
        std::sort(traces.begin(), traces.end());
    }
    for (const auto& path : traces) {
        try {
            m.traces.push_back(read_trace_file(path));
        } catch (const InputError& e) {
            warn(e, fmt::format("trace {} left out of the report", path.string()));
        }
    }
    m.contract = std::move(c);
    return m;
}

// Written atomically like every file np-explain writes; a new one is readable by all (the
// temporary file starts private), as a page to open in a browser, often as another user than
// the root that ran the experiment.
void write_report_file(const fs::path& path, const std::string& text) {
    write_file_atomically(path, text, 0644);
}

std::string utc_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &tm);
    return text;
}

ReportInput read_report_input(const fs::path& dir) {
    ReportInput in;
    in.title = dir.lexically_normal().string();
    in.generated_at = utc_now();
    if (auto pairs = read_pairs_dir(dir)) {
        // A fan-out's gathered dir: each measured pair's run dir is a mode named by the pair.
        for (const auto& o : *pairs) {
            if (!o.contract) continue;
            ReportMode m = read_mode(dir / o.pair.name, *o.contract);
            m.contract.mode = o.pair.name;
            in.modes.push_back(std::move(m));
        }
        if (in.modes.empty()) {
            throw InputError(dir.string(),
                             fmt::format("no pair of {} was measured", run_dir::kPairs));
        }
        in.pairs = std::move(*pairs);
        return in;
    }
    for (auto& c : read_run_dir_contracts(dir)) in.modes.push_back(read_mode(dir, std::move(c)));
    return in;
}

int run_report(const ReportArgs& a) {
    const fs::path dir = a.dir.empty() ? default_run_dir() : fs::path(a.dir);
    // Markdown is for pasting: to stdout unless --out names a file.
    std::string out = a.out;
    if (out.empty()) out = a.format == "html" ? (dir / run_dir::kReport).string() : "-";
    const ReportInput in = read_report_input(dir);
    const std::string text = a.format == "html" ? render_report_html(in, embedded_chart_scripts())
                                                : render_report_markdown(in);
    if (out == "-") {
        print_text(text);
        return 0;
    }
    write_report_file(out, text);
    print_text(fmt::format("{}: {} ({} mode{}, {:.0f} KB)\n",
                           a.format == "html" ? "report" : "summary", out, in.modes.size(),
                           in.modes.size() == 1 ? "" : "s",
                           static_cast<double>(text.size()) / 1024.0));
    return 0;
}

}  // namespace

fs::path write_run_report(const fs::path& dir) {
    const fs::path out = dir / run_dir::kReport;
    write_report_file(out, render_report_html(read_report_input(dir), embedded_chart_scripts()));
    return out;
}

void add_report_command(CLI::App& app, Runner& run) {
    auto a = std::make_shared<ReportArgs>();
    CLI::App* sub = app.add_subcommand(
        "report",
        "One self-contained HTML page of a run dir (plots of throughput against the ceiling, "
        "over time, drops, latency; verdicts, findings, parity), or a Markdown summary");
    sub->add_option(
        "RUN_DIR", a->dir,
        "Run dir (default $NETWORK_PERFORMANCE_RUN_DIR, else /tmp/network-performance-$USER/)");
    sub->add_option("--out", a->out,
                    "File to write; '-' for stdout (default: RUN_DIR/report.html for html, "
                    "stdout for md)");
    sub->add_option("--format", a->format, "html (default) or md")
        ->check(CLI::IsMember({"html", "md"}));
    sub->callback([&run, a] { run = [a] { return run_report(*a); }; });
}

}  // namespace np::cli
