#pragma once
// The probe's lifecycle, top to bottom: check privileges and kernel -> load -> attach on the
// data iface -> sample and cut phases on commands -> write the trace -> detach.
//
// Commands (common/probe_protocol.hpp) come from stdin when stdin is a pipe, a socket or a
// terminal in the foreground, and from the control socket (--control). stdin EOF stops the
// probe only where stdin is its controlling channel: a pipe or socket (as in an SSH channel)
// with no other way to stop it (--duration, --control, --exit-with). A probe started from a
// script, nohup, cron, systemd, Ansible or a notebook (stdin /dev/null or a file) ignores
// stdin and runs until --duration, `stop` on --control, the --exit-with process ending, or
// SIGINT/SIGTERM (and SIGHUP, unless it was ignored when the probe started, as under nohup).
#include <cstdint>
#include <string>

namespace np::probe {

struct ProbeOptions {
    std::string iface;
    std::string role;       // free text copied into the trace (client | server)
    std::string node;       // defaults to the host name
    double duration_s = 0;  // 0: until stopped
    std::string out_path;   // also write the trace document here (required with background)
    uint16_t iperf_port = 5201;
    int sample_interval_ms = 100;
    std::string control_path;  // Unix socket taking phase/status/stop; empty: none
    // Return once counting (after printing the "ready" line) and keep counting detached, in
    // its own session, with stdin/stdout/stderr on /dev/null.
    bool background = false;
    std::string pidfile;     // the counting process's PID, removed on exit
    long exit_with_pid = 0;  // stop when this process exits (0: not watched)
    // Only remove what a probe killed with SIGKILL left on the iface (its tc filters, and the
    // clsact qdisc if that probe created it), then exit.
    bool cleanup = false;
    // The tier to count at (docs/commands.md, "Probe tiers"): the best the node allows, no better
    // than max_tier (a node as if its kernel had only that tier's features), and failing with
    // exit 3 when below require_tier. Empty: no bound.
    std::string max_tier;
    std::string require_tier;
    // The CPU account (bpf/cpu_account.h) beside the counts, at the tiers that trace: a stack walk
    // at every tick of the kernel's on every CPU (or of the probe's own 4 ms timer), for each
    // probe attached (docs/performance.md, "The CPU account, sampled"). Off: --no-cpu-account.
    bool cpu_account = true;
    // BPF run-time statistics on while counting, for the trace's probe_cost (run_time_stats).
    bool time_programs = false;
    // Not a probe at all: send this command to the probe listening on control_path and print
    // its answer (send_to_probe).
    std::string send_command;
};

// Runs until stopped; returns the exit status (0). Throws np::InputError for bad options
// (exit 2) and EnvironmentError for what the host lacks (exit 3: only when --require-tier asks
// for more than the node allows, or the iface is missing; otherwise a lower tier counts).
int run_probe(const ProbeOptions& options);

// `--control PATH --send COMMAND`: sends one command to a running probe and prints its answer
// (one JSON line) on stdout. Throws EnvironmentError when no probe listens there.
int send_to_probe(const std::string& control_path, const std::string& command);

}  // namespace np::probe
