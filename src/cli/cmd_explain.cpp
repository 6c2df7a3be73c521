#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "analysis/readers/rate.hpp"
#include "common/errors.hpp"
#include "common/trace.hpp"
#include "rundir/reader.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {
namespace {

struct ExplainOptions {
    std::vector<std::string> iperf3;
    std::vector<std::string> iperf2;
    std::vector<std::string> ping;
    std::vector<std::string> files;   // positional: format detected
    std::vector<std::string> traces;  // np-trace/1 documents from np-probe
    std::string link;                 // empty: unknown
    bool json = false;
};

int run_explain(const ExplainOptions& o) {
    ExplainInput in;
    if (!o.link.empty()) in.link_bps = parse_link_rate_bps(o.link, "--link");
    if (o.iperf3.empty() && o.iperf2.empty() && o.ping.empty() && o.files.empty() &&
        o.traces.empty())
        throw InputError("explain", "no input: give iperf3 JSON, iperf2 or ping output files");
    const auto load = [&](const std::vector<std::string>& files, InputFormat format) {
        for (const auto& f : files) in.measurements.append(read_measurements_file(f, format));
    };
    load(o.iperf3, InputFormat::iperf3);
    load(o.iperf2, InputFormat::iperf2);
    load(o.ping, InputFormat::ping);
    load(o.files, InputFormat::auto_detect);
    use_server_banners(in.measurements);
    for (const auto& f : o.traces) {
        in.traces.push_back(read_trace_file(f));
    }
    for (const auto& note : in.measurements.notes)
        print_text(stderr, fmt::format("np-explain: note: {}\n", note));
    const Explanation e = explain(in);
    if (o.json) {
        fmt::print("{}\n", to_json(e).dump(2));
    } else {
        print_text(render_explanation(e));
    }
    return exit_status_for(e.findings);
}

}  // namespace

void add_explain_command(CLI::App& app, Runner& run) {
    auto opts = std::make_shared<ExplainOptions>();
    CLI::App* sub = app.add_subcommand(
        "explain",
        "Explain existing iperf3 JSON, iperf2 text and ping output against the header-overhead "
        "model");
    sub->add_option("--iperf3", opts->iperf3,
                    "iperf3 -J or --json-stream output, or its text output (repeatable)");
    sub->add_option("--iperf2", opts->iperf2, "iperf2 client or server text output (repeatable)");
    sub->add_option("--ping", opts->ping,
                    "ping output: Linux (iputils, busybox, inetutils), macOS, FreeBSD, OpenBSD "
                    "or Windows (English), IPv4 or IPv6 (repeatable)");
    sub->add_option("--link", opts->link,
                    "Nominal link rate, 10M..400G (e.g. 1G, 10G); without it no ceiling is "
                    "claimed");
    sub->add_flag("--json", opts->json, "Print the findings document with the per-test verdicts");
    sub->add_option("--trace", opts->traces,
                    "np-probe trace (np-trace/1) of a node's data iface, role client or server; "
                    "locates loss and confirms retransmits (repeatable)");
    sub->add_option("files", opts->files,
                    "Output files, or terminal transcripts holding several runs (- reads standard "
                    "input); the tool of each run is detected");
    sub->callback([&run, opts] { run = [opts] { return run_explain(*opts); }; });
}

}  // namespace np::cli
