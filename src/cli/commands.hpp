#pragma once
// Each subcommand registers its options on the app and leaves the function that runs it.
// Runners return the process exit status (DESIGN.md: 0 ok, 1 error finding, 2 bad input,
// 3 environment); they throw np::InputError for bad input, which main() prints and maps to 2.
#include <CLI/CLI.hpp>
#include <functional>

namespace np::cli {

using Runner = std::function<int()>;

void add_model_command(CLI::App& app, Runner& run);
void add_probe_command(CLI::App& app, Runner& run);
void add_explain_command(CLI::App& app, Runner& run);
void add_parity_command(CLI::App& app, Runner& run);
void add_run_command(CLI::App& app, Runner& run);  // run and teardown
void add_attach_command(CLI::App& app, Runner& run);

}  // namespace np::cli
