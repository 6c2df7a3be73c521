// The np-explain command line as one CLI11 app: what main() parses and what --help, the man
// page and the bash completion (src/docgen/) are generated from, so they cannot drift.
#include "common/version.hpp"
#include "src/cli/commands.hpp"

namespace np::cli {

std::unique_ptr<CLI::App> make_app(Runner& run) {
    auto app = std::make_unique<CLI::App>(
        "np-explain measures latency, TCP and UDP throughput between two Linux nodes over a "
        "dedicated data interface and explains the numbers with a header-overhead model and "
        "BPF counters on the data NIC.",
        "np-explain");
    app->set_version_flag("--version", version_line("np-explain"));
    app->require_subcommand(1);
    app->fallthrough(false);

    add_model_command(*app, run);
    add_probe_command(*app, run);
    add_explain_command(*app, run);
    add_parity_command(*app, run);
    add_run_command(*app, run);
    add_attach_command(*app, run);
    add_params_command(*app, run);
    add_pairs_command(*app, run);
    add_report_command(*app, run);
    add_codes_command(*app, run);
    add_node_steps_command(*app, run);
    return app;
}

}  // namespace np::cli
