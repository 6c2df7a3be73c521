// `np-explain probe`: runs np-probe, the same static binary `run` uploads to the nodes, on a
// local iface. Exec'ing it (rather than linking the probe into np-explain) keeps one probe
// code path and keeps libbpf and its static archives out of np-explain.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"

namespace np::cli {
namespace {

struct ProbeOptions {
    std::string iface;
    std::string duration;
    std::string out;
    std::string port;
    std::string interval_ms;
};

int run_probe(const ProbeOptions& o) {
    const std::string probe = find_np_probe();
    if (probe.empty()) {
        fmt::print(stderr,
                   "np-explain: np-probe not found next to np-explain or in the build tree; set "
                   "NP_PROBE to its path\n");
        return 3;
    }
    std::vector<std::string> args = {probe, "--iface", o.iface};
    auto pass = [&](const char* flag, const std::string& value) {
        if (!value.empty()) args.insert(args.end(), {flag, value});
    };
    pass("--duration", o.duration);
    pass("--out", o.out);
    pass("--port", o.port);
    pass("--interval-ms", o.interval_ms);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    execv(probe.c_str(), argv.data());
    fmt::print(stderr, "np-explain: cannot run {}: {}\n", probe, std::strerror(errno));
    return 3;
}

}  // namespace

void add_probe_command(CLI::App& app, Runner& run) {
    auto opts = std::make_shared<ProbeOptions>();
    CLI::App* sub = app.add_subcommand(
        "probe",
        "Run the BPF probe on a local iface: NDJSON samples and phases on stdout, the "
        "np-trace/1 document at the end (stdin: 'phase NAME', 'stop'; EOF stops too)");
    sub->add_option("--iface", opts->iface, "Data interface to count on")->required();
    sub->add_option("--duration", opts->duration, "Stop after S seconds (default: until stop/EOF)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--out", opts->out, "Also write the trace document to this file");
    sub->add_option("--port", opts->port, "iperf port of the measured flow (default 5201)")
        ->check(CLI::Range(1, 65535));
    sub->add_option("--interval-ms", opts->interval_ms, "Sample interval in ms (default 100)")
        ->check(CLI::Range(10, 60000));
    sub->callback([&run, opts] { run = [opts] { return run_probe(*opts); }; });
}

}  // namespace np::cli
