// `np-explain report [RUN_DIR]`: the run dir as one self-contained HTML page with plots, or a
// Markdown summary. The run dir is read by rundir/reader.hpp; the page is report/page.cpp.
#include <fmt/format.h>

#include <filesystem>

#include "common/errors.hpp"
#include "common/run_dir.hpp"
#include "report/embedded_scripts.hpp"
#include "report/report.hpp"
#include "rundir/reader.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArgs {
    std::string dir;
    std::string out;
    std::string format = "html";
};

int run_report(const ReportArgs& a) {
    const fs::path dir = a.dir.empty() ? default_run_dir() : fs::path(a.dir);
    // Markdown is for pasting: to stdout unless --out names a file.
    std::string out = a.out;
    if (out.empty()) out = a.format == "html" ? (dir / run_dir::kReport).string() : "-";
    const ReportInput in = read_report_input(dir);
    print_warnings(in.left_out);
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
