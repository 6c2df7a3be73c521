#include <fmt/format.h>

#include <filesystem>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/parity.hpp"
#include "common/errors.hpp"
#include "rundir/reader.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {
namespace {

int run_parity(const std::string& dir_arg) {
    const std::filesystem::path dir =
        dir_arg.empty() ? default_run_dir() : std::filesystem::path(dir_arg);
    if (const auto pairs = read_pairs_dir(dir)) {
        const PairsResult result = check_pairs(*pairs);
        print_text(render_pairs(*pairs, result));
        return result.pass ? 0 : 1;
    }
    const std::vector<Contract> contracts = read_run_dir_contracts(dir);
    const auto result = check_parity(contracts);
    print_text(render_parity(contracts, result));
    return result.pass ? 0 : 1;
}

}  // namespace

void add_parity_command(CLI::App& app, Runner& run) {
    auto dir = std::make_shared<std::string>();
    CLI::App* sub = app.add_subcommand("parity",
                                       "The tutorial's parity table from every "
                                       "np_contract_<mode>.json in a run dir (or the pairs "
                                       "table of a fan-out's gathered dir); exit 1 on FAIL");
    sub->add_option(
        "RUN_DIR", *dir,
        "Run dir (default $NETWORK_PERFORMANCE_RUN_DIR, else /tmp/network-performance-$USER/)");
    sub->callback([&run, dir] { run = [dir] { return run_parity(*dir); }; });
}

}  // namespace np::cli
