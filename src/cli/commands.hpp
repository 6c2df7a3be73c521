#pragma once
// Each subcommand registers its options on the app and leaves the function that runs it.
// Runners return the process exit status (docs/design.md: 0 ok, 1 error finding, 2 bad input,
// 3 environment); they throw np::InputError for bad input, which main() prints and maps to 2.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>

namespace np::cli {

using Runner = std::function<int()>;

// The whole command line: every subcommand, its options and --version. run_command_line()
// parses it; np-docgen walks it to write the man page and the bash completion.
std::unique_ptr<CLI::App> make_app(Runner& run);

void add_model_command(CLI::App& app, Runner& run);
void add_probe_command(CLI::App& app, Runner& run);
void add_explain_command(CLI::App& app, Runner& run);
void add_parity_command(CLI::App& app, Runner& run);
void add_run_command(CLI::App& app, Runner& run);  // run and teardown
void add_attach_command(CLI::App& app, Runner& run);
void add_params_command(CLI::App& app, Runner& run);
void add_pairs_command(CLI::App& app, Runner& run);
void add_report_command(CLI::App& app, Runner& run);
void add_codes_command(CLI::App& app, Runner& run);
void add_node_steps_command(CLI::App& app, Runner& run);

}  // namespace np::cli
