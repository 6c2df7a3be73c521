// `np-explain node-steps`: prints node_steps.sh, the node side np-explain's runs use (compiled
// in), for the tutorial's modes to run on a node over ssh — so a mode and a run change a node,
// lock it and undo what they did the same way.
#include <fmt/format.h>

#include "src/cli/commands.hpp"
#include "src/experiment/node_steps.hpp"

namespace np::cli {

void add_node_steps_command(CLI::App& app, Runner& run) {
    CLI::App* sub = app.add_subcommand(
        "node-steps",
        "Print the node side of a run as a POSIX sh script, for the tutorial's modes: "
        "np-explain node-steps | ssh root@NODE sh -s -- STEP NODE ARGS... (its steps: preflight, "
        "configure, carrier, datapath, probe-start, phase, probe-stop, server-start, "
        "server-stop, teardown; listed in the script)");
    sub->callback([&run] {
        run = [] {
            fmt::print("{}", experiment::node_steps_script());
            return 0;
        };
    });
}

}  // namespace np::cli
