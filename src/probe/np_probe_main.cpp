// np-probe: the BPF probe on a node's data iface (what `np-explain run` uploads to each node
// and `np-explain probe` runs locally). Linked fully static so a node needs no libbpf.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "analysis/error.hpp"
#include "src/common/errors.hpp"
#include "src/probe/probe.hpp"

int main(int argc, char** argv) {
    np::probe::ProbeOptions o;
    std::string send;
    CLI::App app{
        "np-probe counts what crosses a data iface (tc clsact ingress/egress), TCP retransmits "
        "and kernel drops by reason (tp_btf), and writes an np-trace/1 document. Commands "
        "'phase NAME' (cut the counters into a phase), 'status' and 'stop' come from stdin (a "
        "pipe, socket or terminal) or the --control socket. stdout: NDJSON samples, phases, then "
        "the trace.",
        "np-probe"};
    app.add_option("--iface", o.iface, "Data interface to count on (required unless --send)");
    app.add_option("--duration", o.duration_s, "Stop after S seconds (default: until stopped)");
    app.add_option("--out", o.out_path, "Also write the trace document to this file");
    app.add_option("--port", o.iperf_port, "iperf port of the measured flow (default 5201)");
    app.add_option("--interval-ms", o.sample_interval_ms, "Sample interval (default 100)");
    app.add_option("--role", o.role, "Role recorded in the trace (client | server)");
    app.add_option("--node", o.node, "Node name recorded in the trace (default: host name)");
    app.add_option("--control", o.control_path,
                   "Unix socket (mode 0600) taking 'phase NAME', 'status' and 'stop'");
    app.add_flag("--background", o.background,
                 "Return once counting (printing the ready line) and keep counting detached; "
                 "needs --out");
    app.add_option("--pidfile", o.pidfile, "Write the counting process's PID here");
    app.add_option("--exit-with", o.exit_with_pid, "Stop when the process with this PID exits");
    app.add_flag("--cleanup", o.cleanup,
                 "Remove what a probe killed with SIGKILL left on --iface (its tc filters, its "
                 "clsact qdisc), then exit");
    app.add_option("--send", send,
                   "With --control: send this command to the running probe, print its answer");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
        std::fprintf(stderr, "np-probe: %s\nRun 'np-probe --help' for usage.\n", e.what());
        return 2;
    }
    try {
        if (!send.empty()) {
            if (o.control_path.empty()) throw np::InputError("--send", "needs --control PATH");
            return np::probe::send_to_probe(o.control_path, send);
        }
        return np::probe::run_probe(o);
    } catch (const np::InputError& e) {
        std::fprintf(stderr, "np-probe: %s: %s\n", e.field().c_str(), e.what());
        return 2;
    } catch (const np::EnvironmentError& e) {
        std::fprintf(stderr, "np-probe: %s\n", e.what());
        return 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "np-probe: error: %s\n", e.what());
        return 1;
    }
}
