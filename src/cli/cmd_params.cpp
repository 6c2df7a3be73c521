// `np-explain params FILE`: the tutorial's network-performance_params.yml, validated by the same
// reader as `run`, printed as JSON or as shell assignments, so the tutorial's script, playbook
// and notebook use checked values and never read the YAML themselves.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "analysis/readers/params.hpp"
#include "common/errors.hpp"
#include "common/shell_quote.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"

namespace np::cli {
namespace {

struct ParamsOptions {
    std::string file;
    bool shell = false;
};

// The words joined as a shell reads them unquoted (iperf3_client_options makes each safe so).
std::string joined(const std::vector<std::string>& words) {
    std::string line;
    for (const auto& w : words) line += (line.empty() ? "" : " ") + w;
    return line;
}

// The keys as the params file names them, with what is unset empty; np_link_rate as a number of
// bit/s (null: the NIC's speed). Then iperf3's options for each test, made from them: what every
// mode runs after `iperf3 -c SERVER`.
nlohmann::json params_json(const Params& p) {
    nlohmann::json j = nlohmann::json::object();
    j["np_data_iface"] = p.data_iface;
    j["np_server_ip"] = p.server_ip;
    j["np_client_ip"] = p.client_ip;
    j["np_prefix_len"] = p.prefix_len;
    j["np_port"] = p.port;
    j["np_ping_count"] = p.ping_count;
    j["np_tcp_duration_s"] = p.tcp_duration_s;
    j["np_udp_duration_s"] = p.udp_duration_s;
    j["np_udp_bandwidth"] = p.udp_bandwidth;
    j["np_image_marker"] = p.image_marker;
    j["np_link_rate_bps"] =
        p.link_rate_bps ? nlohmann::json(*p.link_rate_bps) : nlohmann::json(nullptr);
    j["np_parallel"] = p.parallel;
    j["np_direction"] = to_string(p.direction);
    j["np_udp_length"] = p.udp_length ? nlohmann::json(*p.udp_length) : nlohmann::json(nullptr);
    j["np_window"] = p.window;
    j["np_tcp_congestion"] = p.congestion;
    j["np_pacing_rate"] = p.pacing_rate;
    j["np_zerocopy"] = p.zerocopy;
    j["np_affinity"] = p.affinity;
    j["np_mtu"] = p.mtu ? nlohmann::json(*p.mtu) : nlohmann::json(nullptr);
    j["np_repeat"] = p.repeat;
    j["np_find_udp_ceiling"] = p.find_udp_ceiling;
    j["np_ceiling_loss_pct"] = p.ceiling_loss_pct;
    j["np_iperf3_tcp_options"] = joined(iperf3_client_options(p, Transport::tcp));
    j["np_iperf3_udp_options"] = joined(iperf3_client_options(p, Transport::udp));
    return j;
}

// The keys only `run` acts on, as set in the file: the tutorial's modes, which read the params
// through this command, run each test once and search nothing, and say so rather than ignore them.
std::vector<std::string> run_only_keys(const Params& p) {
    std::vector<std::string> keys;
    if (p.repeat > 1) keys.push_back(fmt::format("np_repeat: {}", p.repeat));
    if (p.find_udp_ceiling) keys.emplace_back("np_find_udp_ceiling: true");
    return keys;
}

int run_params(const ParamsOptions& o) {
    const Params p = read_params_file(o.file);
    if (const auto keys = run_only_keys(p); !keys.empty()) {
        std::string list;
        for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
        fmt::print(stderr,
                   "np-explain params: {} {} read by `np-explain run --params {}` only: the "
                   "tutorial's modes run each test once and do not search the UDP ceiling\n",
                   list, keys.size() > 1 ? "are" : "is", o.file);
    }
    const nlohmann::json j = params_json(p);
    if (!o.shell) {
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    for (const auto& [key, value] : j.items()) {
        std::string v;
        if (value.is_string())
            v = value.get<std::string>();
        else if (!value.is_null())
            v = value.dump();
        fmt::print("{}={}\n", key, shell_quote(v));
    }
    return 0;
}

}  // namespace

void add_params_command(CLI::App& app, Runner& run) {
    auto o = std::make_shared<ParamsOptions>();
    CLI::App* sub = app.add_subcommand(
        "params",
        "Check a network-performance_params.yml as run reads it and print its values as JSON "
        "(or shell assignments), defaults filled in");
    sub->add_option("FILE", o->file, "The params file")->required();
    sub->add_flag("--shell", o->shell,
                  "Print KEY='value' lines for a shell's eval instead of JSON (np_link_rate_bps, "
                  "np_udp_length and np_mtu empty when unset)");
    sub->callback([&run, o] { run = [o] { return run_params(*o); }; });
}

}  // namespace np::cli
