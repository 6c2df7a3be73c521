#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "analysis/contract.hpp"
#include "analysis/error.hpp"
#include "analysis/parity.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"

namespace np::cli {
namespace {

// The tutorial lists its modes in this order; others follow by name.
int mode_rank(const std::string& mode) {
    static const char* order[] = {"ansible", "manual", "jupyter"};
    for (int i = 0; i < 3; ++i)
        if (mode == order[i]) return i;
    return 3;
}

int run_parity(const std::string& dir_arg) {
    const std::filesystem::path dir = dir_arg.empty() ? default_run_dir() : std::filesystem::path(dir_arg);
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        throw InputError(dir.string(),
                         "no such run directory (set NETWORK_PERFORMANCE_RUN_DIR or "
                         "name the directory)");
    }
    std::vector<Contract> contracts;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const auto name = entry.path().filename().string();
        if (name.rfind("np_contract_", 0) != 0 || entry.path().extension() != ".json") continue;
        contracts.push_back(parse_contract(read_text_file(entry.path()), entry.path().string()));
    }
    if (contracts.empty()) {
        throw InputError(dir.string(), "holds no np_contract_<mode>.json result contracts");
    }
    std::sort(contracts.begin(), contracts.end(), [](const Contract& a, const Contract& b) {
        return std::pair(mode_rank(a.mode), a.mode) < std::pair(mode_rank(b.mode), b.mode);
    });
    const auto result = check_parity(contracts);
    fmt::print("{}", render_parity(contracts, result));
    return result.pass ? 0 : 1;
}

}  // namespace

void add_parity_command(CLI::App& app, Runner& run) {
    auto dir = std::make_shared<std::string>();
    CLI::App* sub = app.add_subcommand("parity",
                                       "The tutorial's parity table from every "
                                       "np_contract_<mode>.json in a run dir; exit 1 on FAIL");
    sub->add_option(
        "RUN_DIR", *dir,
        "Run dir (default $NETWORK_PERFORMANCE_RUN_DIR, else /tmp/network-performance-$USER/)");
    sub->callback([&run, dir] { run = [dir] { return run_parity(*dir); }; });
}

}  // namespace np::cli
