// The report of a run dir as a file in it: the run dir read (rundir/reader.hpp), the page
// written beside the contracts.
#include <chrono>
#include <ctime>

#include "common/output_file.hpp"
#include "common/run_dir.hpp"
#include "report/embedded_scripts.hpp"
#include "report/report.hpp"

namespace np {

namespace {

std::string utc_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &tm);
    return text;
}

}  // namespace

ReportInput read_report_input(const std::filesystem::path& dir) {
    RunDirContents contents = read_run_dir(dir);
    ReportInput in;
    in.title = dir.lexically_normal().string();
    in.generated_at = utc_now();
    in.modes = std::move(contents.modes);
    in.pairs = std::move(contents.pairs);
    in.left_out = std::move(contents.left_out);
    return in;
}

void write_report_file(const std::filesystem::path& path, const std::string& text) {
    // A new file is readable by all: the temporary file starts private.
    write_file_atomically(path, text, 0644);
}

std::filesystem::path write_run_report(const std::filesystem::path& dir, const ReportInput& in) {
    const std::filesystem::path out = dir / run_dir::kReport;
    write_report_file(out, render_report_html(in, embedded_chart_scripts()));
    return out;
}

}  // namespace np
