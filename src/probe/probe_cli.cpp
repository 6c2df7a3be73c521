#include "src/probe/probe_cli.hpp"

#include "analysis/version.hpp"

namespace np::probe {

std::unique_ptr<CLI::App> make_probe_app(ProbeOptions& o) {
    auto app = std::make_unique<CLI::App>(
        "np-probe counts what crosses a data iface (tc clsact ingress/egress), TCP retransmits "
        "and kernel drops by reason (tp_btf), and writes an np-trace/1 document. stdin: "
        "'phase NAME' cuts the counters into a phase, 'stop' (or EOF) ends. stdout: NDJSON "
        "samples, phases, then the trace.",
        "np-probe");
    app->set_version_flag("--version", version_line("np-probe"));
    app->add_option("--iface", o.iface, "Data interface to count on")->required();
    app->add_option("--duration", o.duration_s, "Stop after S seconds (default: until stop/EOF)");
    app->add_option("--out", o.out_path, "Also write the trace document to this file");
    app->add_option("--port", o.iperf_port, "iperf port of the measured flow (default 5201)");
    app->add_option("--interval-ms", o.sample_interval_ms, "Sample interval (default 100)");
    app->add_option("--role", o.role, "Role recorded in the trace (client | server)");
    app->add_option("--node", o.node, "Node name recorded in the trace (default: host name)");
    return app;
}

}  // namespace np::probe
