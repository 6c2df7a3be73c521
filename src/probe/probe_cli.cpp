#include "src/probe/probe_cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "common/version.hpp"

namespace np::probe {

std::unique_ptr<CLI::App> make_probe_app(ProbeOptions& o) {
    auto app = std::make_unique<CLI::App>(
        "np-probe counts what crosses a data iface (tc clsact ingress/egress, and what the "
        "driver is handed after the qdisc), TCP retransmits and kernel drops by reason (tp_btf), "
        "and writes an np-trace/1 document. Where the kernel or the probe's privileges allow "
        "less, it counts at a lower tier (drops without reasons, tc counters, kernel counters "
        "only) and says so in the trace. Commands 'phase NAME' (cut the counters into a "
        "phase), 'status' and 'stop' come from stdin (a pipe, socket or terminal) or the "
        "--control socket. stdout: NDJSON samples, phases, then the trace.",
        "np-probe");
    app->set_version_flag("--version", version_line("np-probe"));
    app->add_option("--iface", o.iface, "Data interface to count on (required unless --send)");
    app->add_option("--duration", o.duration_s, "Stop after S seconds (default: until stopped)");
    app->add_option("--out", o.out_path, "Also write the trace document to this file");
    app->add_option("--port", o.iperf_port, "iperf port of the measured flow (default 5201)");
    app->add_option("--interval-ms", o.sample_interval_ms, "Sample interval (default 100)");
    app->add_option("--role", o.role, "Role recorded in the trace (client | server)");
    app->add_option("--node", o.node, "Node name recorded in the trace (default: host name)");
    app->add_option("--control", o.control_path,
                    "Unix socket (mode 0600) taking 'phase NAME', 'status' and 'stop'");
    app->add_flag("--background", o.background,
                  "Return once counting (printing the ready line) and keep counting detached; "
                  "needs --out");
    app->add_option("--pidfile", o.pidfile, "Write the counting process's PID here");
    app->add_option("--exit-with", o.exit_with_pid, "Stop when the process with this PID exits");
    app->add_flag("--cleanup", o.cleanup,
                  "Remove what a probe killed with SIGKILL left on --iface (its tc filters, its "
                  "clsact qdisc), then exit");
    app->add_option("--max-tier", o.max_tier,
                    "Count at no better tier than this (full, drops-without-reasons, tc-counters, "
                    "kernel-counters): the node as if its kernel had only that tier's features");
    app->add_option("--require-tier", o.require_tier,
                    "Exit 3 unless the node allows at least this tier (default: count at the "
                    "best tier the node allows, down to kernel-counters)");
    app->add_flag_callback(
        "--no-cpu-account", [&o] { o.cpu_account = false; },
        "Do not account each CPU's time (by default sampled every 4 ms at the tiers that trace: "
        "the test's processes, the NET_RX and NET_TX softirqs, the NIC's IRQs; about 0.15 % of a "
        "core per probe)");
    app->add_flag("--time-programs", o.time_programs,
                  "Time the probe's programs for the trace's probe_cost (the kernel's BPF "
                  "run-time statistics: while on, every BPF program on the host pays two clock "
                  "reads a run)");
    app->add_option("--send", o.send_command,
                    "With --control: send this command to the running probe, print its answer");
    return app;
}

std::optional<int> parse_probe_command_line(int argc, char** argv, ProbeOptions& options) {
    const auto app = make_probe_app(options);
    try {
        app->parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app->exit(e);
        std::fprintf(stderr, "np-probe: %s\nRun 'np-probe --help' for usage.\n", e.what());
        return 2;
    }
    return std::nullopt;
}

}  // namespace np::probe
