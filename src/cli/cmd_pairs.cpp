// `np-explain pairs FILE`: the tutorial's inventory of pairs for the fan-out, checked and
// scheduled (analysis/explanation/pairs.hpp), printed as a table or as the np-pairs/1 JSON the
// playbook runs by and keeps in the gathered dir.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "analysis/explanation/pairs.hpp"
#include "analysis/readers/params.hpp"
#include "common/errors.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {
namespace {

struct PairsOptions {
    std::string file;
    std::string params;
    bool json = false;
};

int run_pairs(const PairsOptions& o) {
    const Params params = o.params.empty() ? Params{} : read_params_file(o.params);
    const PairPlan plan = parse_pair_plan(read_text_file(o.file, kMaxParamsBytes), o.file, params);
    if (o.json) {
        fmt::print("{}\n", to_json(plan).dump(2));
    } else {
        print_text(render_pair_plan(plan));
    }
    return 0;
}

}  // namespace

void add_pairs_command(CLI::App& app, Runner& run) {
    auto o = std::make_shared<PairsOptions>();
    CLI::App* sub = app.add_subcommand(
        "pairs",
        "Check an inventory of node pairs for the tutorial's fan-out and print its schedule: "
        "pairs sharing a node, an address or a link in separate waves, disjoint pairs together");
    sub->add_option("FILE", o->file, "The pairs file (network-performance_pairs.yml)")->required();
    sub->add_option("--params", o->params,
                    "The params file whose np_server_ip/np_client_ip/np_prefix_len a pair "
                    "without addresses of its own uses (default: the tutorial's defaults)");
    sub->add_flag("--json", o->json, "Print the schedule as np-pairs/1 JSON");
    sub->callback([&run, o] { run = [o] { return run_pairs(*o); }; });
}

}  // namespace np::cli
