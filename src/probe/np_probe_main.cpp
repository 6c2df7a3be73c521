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
    CLI::App app{
        "np-probe counts what crosses a data iface (tc clsact ingress/egress), TCP retransmits "
        "and kernel drops by reason (tp_btf), and writes an np-trace/1 document. stdin: "
        "'phase NAME' cuts the counters into a phase, 'stop' (or EOF) ends. stdout: NDJSON "
        "samples, phases, then the trace.",
        "np-probe"};
    app.add_option("--iface", o.iface, "Data interface to count on")->required();
    app.add_option("--duration", o.duration_s, "Stop after S seconds (default: until stop/EOF)");
    app.add_option("--out", o.out_path, "Also write the trace document to this file");
    app.add_option("--port", o.iperf_port, "iperf port of the measured flow (default 5201)");
    app.add_option("--interval-ms", o.sample_interval_ms, "Sample interval (default 100)");
    app.add_option("--role", o.role, "Role recorded in the trace (client | server)");
    app.add_option("--node", o.node, "Node name recorded in the trace (default: host name)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
        std::fprintf(stderr, "np-probe: %s\nRun 'np-probe --help' for usage.\n", e.what());
        return 2;
    }
    try {
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
