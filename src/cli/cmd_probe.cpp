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

// Passed through to np-probe as given: it validates them (one place for the probe's options).
struct ProbeOptions {
    std::string iface;
    std::string duration;
    std::string out;
    std::string port;
    std::string interval_ms;
    std::string role;
    std::string node;
    std::string control;
    bool background = false;
    bool cleanup = false;
    std::string pidfile;
    std::string exit_with;
    std::string send;
};

int run_probe(const ProbeOptions& o) {
    const std::string probe = find_np_probe();
    std::vector<std::string> args = {probe};
    auto pass = [&](const char* flag, const std::string& value) {
        if (!value.empty()) args.insert(args.end(), {flag, value});
    };
    pass("--iface", o.iface);
    pass("--duration", o.duration);
    pass("--out", o.out);
    pass("--port", o.port);
    pass("--interval-ms", o.interval_ms);
    pass("--role", o.role);
    pass("--node", o.node);
    pass("--control", o.control);
    pass("--pidfile", o.pidfile);
    pass("--exit-with", o.exit_with);
    pass("--send", o.send);
    if (o.background) args.push_back("--background");
    if (o.cleanup) args.push_back("--cleanup");
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
        "np-trace/1 document at the end. Commands 'phase NAME', 'status', 'stop' on stdin (a "
        "pipe or terminal; EOF of a pipe stops it when nothing else can) or on --control");
    sub->add_option("--iface", opts->iface, "Data interface to count on (required unless --send)");
    sub->add_option("--duration", opts->duration, "Stop after S seconds (default: until stopped)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--out", opts->out, "Also write the trace document to this file");
    sub->add_option("--port", opts->port, "iperf port of the measured flow (default 5201)")
        ->check(CLI::Range(1, 65535));
    sub->add_option("--interval-ms", opts->interval_ms, "Sample interval in ms (default 100)")
        ->check(CLI::Range(10, 60000));
    sub->add_option("--role", opts->role, "Role recorded in the trace (client | server)");
    sub->add_option("--node", opts->node, "Node name recorded in the trace (default: host name)");
    sub->add_option("--control", opts->control,
                    "Unix socket (0600) taking 'phase NAME', 'status' and 'stop' from scripts");
    sub->add_flag("--background", opts->background,
                  "Return once counting and keep counting detached (needs --out)");
    sub->add_flag("--cleanup", opts->cleanup,
                  "Remove what a probe killed with SIGKILL left on --iface, then exit");
    sub->add_option("--pidfile", opts->pidfile, "Write the counting process's PID here");
    sub->add_option("--exit-with", opts->exit_with, "Stop when the process with this PID exits");
    sub->add_option("--send", opts->send,
                    "With --control: send one command to a running probe and print its answer");
    sub->callback([&run, opts] { run = [opts] { return run_probe(*opts); }; });
}

}  // namespace np::cli
