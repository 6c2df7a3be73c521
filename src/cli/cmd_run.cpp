// `np-explain run NODE_A NODE_B`, `np-explain run --local` and `np-explain teardown`.
#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/explanation/format.hpp"
#include "analysis/readers/names.hpp"
#include "analysis/readers/params.hpp"
#include "analysis/readers/rate.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/trace.hpp"
#include "report/report.hpp"
#include "rundir/reader.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"
#include "src/cli/terminal.hpp"
#include "src/cli/terminal_progress.hpp"
#include "src/experiment/experiment.hpp"
#include "src/experiment/interrupt.hpp"
#include "src/experiment/local_testbed.hpp"
#include "src/experiment/node.hpp"

namespace np::cli {
namespace {

struct RunArgs {
    std::vector<std::string> nodes;
    bool local = false;
    std::string profile = "100M";
    std::string family = "4";
    std::string params_file;
    std::string ssh_config;
    bool accept_new_host_keys = false;
    std::string mode = "np-explain";
    std::string run_dir;
    bool keep_iface = false;
    std::string link;
    bool json = false;
    std::string probe_tier;
    std::string require_tier;
    bool no_probe = false;
    bool no_cpu_account = false;
    // Overrides of params keys (flags win over the file), and the flag that set each key.
    std::map<std::string, std::string> overrides;
    std::map<std::string, std::string> override_flags;
};

// The tutorial keeps its params next to its scripts; `run` finds them the same way.
std::string default_params_file() {
    for (const char* candidate :
         {"network-performance_params.yml", "network-performance/network-performance_params.yml"}) {
        if (std::filesystem::exists(candidate)) return candidate;
    }
    return {};
}

// Flags override the params file through the same reader, so they are validated the same way.
// The file is first read as written, so that its errors name the file, the key and the line
// there (not a line of the merged text); a bad flag value is named by its flag.
ParamsReading read_params(const std::string& file,
                          const std::map<std::string, std::string>& overrides,
                          const std::map<std::string, std::string>& override_flags) {
    const std::string text =
        file.empty() ? std::string("{}") : read_text_file(file, kMaxParamsBytes);
    const std::string source = file.empty() ? "built-in defaults" : file;
    ParamsReading reading;
    try {
        reading = parse_params(text, source);
    } catch (const InputError& e) {
        if (e.field() == source) throw;
        throw InputError(source + ": " + e.field(), e.what(), e.line());
    }
    if (overrides.empty()) return reading;
    YAML::Node doc = YAML::Load(text);  // parsed above: a mapping
    for (const auto& [key, value] : overrides) doc[key] = value;
    YAML::Emitter emitter;
    emitter << doc;
    try {
        ParamsReading merged = parse_params(emitter.c_str(), source);
        merged.warnings = reading.warnings;  // with the file's own line numbers
        return merged;
    } catch (const InputError& e) {
        const auto flag = override_flags.find(e.field());
        if (flag == override_flags.end()) throw;
        throw InputError(flag->second, e.what());
    }
}

void print_outcome(const experiment::RunOutcome& out, const experiment::RunOptions& o, bool json) {
    if (!out.contract_path) {  // the run dir refused the contract: `stopped` says why
        if (!json) print_text(render_explanation(out.explanation));
        return;
    }
    if (json) {
        fmt::print("{}\n", read_text_file(*out.contract_path, kMaxContractBytes));
        return;
    }
    print_text(fmt::format(
        "np-explain run: {} (iperf3 server) <- {} (client) over {}, link {}\n\n", o.node_a,
        o.node_b, o.params.data_iface,
        out.explanation.link_bps ? format_link_rate(*out.explanation.link_bps) : "unknown"));
    print_text(render_explanation(out.explanation));
    print_text(fmt::format("\nResults in {}: {}", o.run_dir.string(),
                           out.contract_path->filename().string()));
    fmt::print(" (+ {} more: raw outputs, traces, findings)\n",
               out.files.empty() ? 0 : out.files.size() - 1);
}

int run_guarded(RunArgs args);

int run_run(RunArgs args) {
    // From the first step, so a Ctrl-C while the local testbed comes up is not lost either.
    experiment::InterruptGuard guard;
    try {
        return run_guarded(std::move(args));
    } catch (const experiment::Interrupted& e) {
        fmt::print(stderr, "np-explain: {}; nothing was measured and nothing is left behind\n",
                   e.what());
        return 128 + e.signal();
    }
}

// Node names become file names in the run dir and arguments on the nodes; the mode a file name.
// Both are checked before anything starts, as is the run dir (prepare_private_dir), and so is
// each value of a flag that overrides a params key, on its own (the local testbed is not brought
// up for a bad one). What holds only together with the file's keys (the addresses; an MTU
// against IPv6, the ceiling search against --bidir) is checked once the params are read. The
// nodes named or --local, the tiers and --link are checked here too, for run and teardown alike.
void check_arguments(const RunArgs& args) {
    for (size_t i = 0; i < args.nodes.size(); ++i)
        check_node_name(args.nodes[i], i == 0 ? "NODE_A" : "NODE_B");
    check_mode_name(args.mode, "--mode");
    for (const auto& [key, value] : args.overrides)
        if (key != "np_server_ip" && key != "np_client_ip")
            read_params("", {{key, value}}, args.override_flags);
    if (!args.nodes.empty() && args.local)
        throw InputError("--local", "takes no node names: it runs node1-1 and node1-2");
    if (!args.local && args.nodes.size() != 2)
        throw InputError("NODE_A NODE_B",
                         "name the server node and the client node, or use --local");
    for (const auto& [flag, value] : {std::pair{"--probe-tier", &args.probe_tier},
                                      std::pair{"--require-tier", &args.require_tier}}) {
        if (!value->empty() && !parse_tier(*value))
            throw InputError(flag, "'" + *value + "' is not a tier: " + std::string(kTierNames));
    }
    if (args.no_probe && !args.require_tier.empty())
        throw InputError("--no-probe", "contradicts --require-tier");
    if (!args.link.empty()) parse_link_rate_bps(args.link, "--link");
}

// The run's options from its arguments, its params read (and their warnings printed).
experiment::RunOptions run_options(const RunArgs& args) {
    experiment::RunOptions o;
    const auto reading = read_params(args.params_file, args.overrides, args.override_flags);
    print_warnings(reading.warnings);
    o.node_a = args.nodes[0];
    o.node_b = args.nodes[1];
    o.params = reading.params;
    o.ssh_config = args.ssh_config;
    o.accept_new_host_keys = args.accept_new_host_keys;
    o.mode = args.mode;
    o.run_dir = args.run_dir.empty() ? default_run_dir() : std::filesystem::path(args.run_dir);
    o.keep_iface = args.keep_iface;
    if (!args.link.empty()) o.link_bps = parse_link_rate_bps(args.link, "--link");
    o.probe_tier = args.probe_tier;
    o.require_tier = args.require_tier;
    o.no_probe = args.no_probe;
    o.cpu_account = !args.no_probe && !args.no_cpu_account;
    return o;
}

// The page of plots of everything in the run dir. Not writing it changes nothing the run
// measured, so that is a warning.
void write_report(const std::filesystem::path& run_dir, bool json) {
    try {
        const ReportInput in = read_report_input(run_dir);
        print_warnings(in.left_out);
        const auto report = write_run_report(run_dir, in);
        if (!json) fmt::print("Report: {}\n", report.string());
    } catch (const InputError& e) {
        print_text(stderr,
                   fmt::format("np-explain: warning: no report: {}: {}\n", e.field(), e.what()));
    } catch (const std::exception& e) {
        print_text(stderr, fmt::format("np-explain: warning: no report: {}\n", e.what()));
    }
}

int run_guarded(RunArgs args) {
    check_arguments(args);
    // Before anything is brought up: a run without its probe goes nowhere.
    const std::string probe_binary = find_np_probe();
    std::unique_ptr<experiment::LocalTestbed> testbed;
    if (args.local) {
        testbed = std::make_unique<experiment::LocalTestbed>(
            args.profile, args.family,
            [](const std::string& what) { fmt::print(stderr, "np-explain: {}\n", what); });
        experiment::throw_if_interrupted("bringing up the local testbed");
        args.nodes = {"node1-1", "node1-2"};
        if (args.ssh_config.empty()) args.ssh_config = testbed->ssh_config();
        if (args.params_file.empty()) args.params_file = testbed->params_file();
    } else if (args.params_file.empty()) {
        args.params_file = default_params_file();
    }
    experiment::RunOptions o = run_options(args);
    o.probe_binary = probe_binary;
    prepare_private_dir(o.run_dir);
    std::optional<TerminalProgress> progress;
    if (!args.json && isatty(STDOUT_FILENO)) o.progress = &progress.emplace();
    const auto out = experiment::run_experiment(o);
    progress.reset();
    print_outcome(out, o, args.json);
    if (out.contract_path) write_report(o.run_dir, args.json);
    if (!out.stopped.empty()) {
        print_text(
            stderr,
            fmt::format("np-explain: the run stopped early: {}; partial results saved in {}\n",
                        out.stopped, o.run_dir.string()));
    }
    if (!out.note.empty()) {
        fmt::print(stderr, "np-explain: {}; all results saved in {}\n", out.note,
                   o.run_dir.string());
    }
    return out.exit_status;
}

// The run's own command with `teardown`: the same nodes (or --local) and options, so what a
// killed run left is undone by editing one word. Options that only shape a measurement are
// accepted and checked, not used: the undo scripts on the nodes say what to undo.
int run_teardown(RunArgs args) {
    check_arguments(args);
    std::unique_ptr<experiment::LocalTestbedLock> local_lock;
    if (args.local) {
        // Not while a `run --local` holds the testbed: its teardown is its own.
        local_lock = std::make_unique<experiment::LocalTestbedLock>(
            experiment::lock_holder("teardown", "--local"));
        if (!experiment::LocalTestbed::is_up()) {
            fmt::print("the local testbed is not up: nothing to undo\n");
            return 0;
        }
        args.nodes = {"node1-1", "node1-2"};
        if (args.ssh_config.empty()) args.ssh_config = experiment::LocalTestbed::up_ssh_config();
    }
    if (!args.params_file.empty() || !args.overrides.empty())
        read_params(args.params_file, args.overrides, args.override_flags);
    const auto done =
        experiment::teardown_nodes(args.nodes.at(0), args.nodes.at(1), args.ssh_config);
    print_text(done.report);
    if (args.local && !done.in_use) {
        experiment::LocalTestbed::take_down();
        fmt::print("the local testbed is down\n");
    }
    return done.all_reached ? 0 : 3;
}

// "--parallel" of "-P,--parallel".
std::string long_name(std::string_view names) {
    const size_t comma = names.find(',');
    return std::string(comma == std::string_view::npos ? names : names.substr(comma + 1));
}

// A key set by two flags that disagree (--reverse --bidir) is refused, naming both.
void set_override(RunArgs& a, const std::string& key, const std::string& value,
                  const std::string& flag) {
    const auto earlier = a.override_flags.find(key);
    if (earlier != a.override_flags.end() && earlier->second != flag && a.overrides[key] != value)
        throw CLI::ValidationError(
            flag, fmt::format("contradicts {}: both set {}", earlier->second, key));
    a.overrides[key] = value;
    a.override_flags[key] = flag;
}

// The options of `run`, which `teardown` takes too.
void add_run_options(CLI::App* sub, const std::shared_ptr<RunArgs>& a) {
    sub->add_option("NODE_A NODE_B", a->nodes,
                    "The iperf3 server node, then the client node (ssh_config names)")
        ->expected(0, 2);
    sub->add_flag("--local", a->local,
                  "The local two-node testbed (network namespaces) instead of named nodes");
    sub->add_option("--profile", a->profile,
                    "With --local: link profile 100M (default), 1G or unshaped");
    sub->add_option("--family", a->family,
                    "With --local: the data plane's IP version, 4 (198.18.0.0/15, default) or 6 "
                    "(2001:2::/48)");
    sub->add_option(
        "--params", a->params_file,
        "network-performance_params.yml (default: ./network-performance_params.yml or "
        "./network-performance/network-performance_params.yml, else built-in defaults)");
    sub->add_option("--ssh-config", a->ssh_config,
                    "ssh_config to read (default: the user's, as OpenSSH does)");
    sub->add_flag("--accept-new-host-keys", a->accept_new_host_keys,
                  "Add unknown host keys to known_hosts (a changed key is still refused)");
    sub->add_option("--mode", a->mode,
                    "Mode name of the contract np_contract_<mode>.json (default np-explain)");
    sub->add_option("--run-dir", a->run_dir,
                    "Where results go (default $NETWORK_PERFORMANCE_RUN_DIR, else "
                    "/tmp/network-performance-$USER/)");
    sub->add_flag("--keep-iface", a->keep_iface, "Leave the data iface configured after the run");
    sub->add_option("--probe-tier", a->probe_tier,
                    "Count on each node at no better tier than this (full, "
                    "drops-without-reasons, tc-counters, kernel-counters); default: the best "
                    "each node allows");
    sub->add_option("--require-tier", a->require_tier,
                    "Stop before any test (exit 3) when a node's probe cannot count at this tier "
                    "or better; default: a node that allows less is measured at its own tier");
    sub->add_flag("--no-probe", a->no_probe,
                  "Measure with the tools alone: no probe is uploaded, nothing is traced");
    sub->add_flag("--no-cpu-account", a->no_cpu_account,
                  "The probes do not account each CPU's time (by default sampled every ms: the "
                  "test's processes, the NET_RX and NET_TX softirqs, the NIC's IRQs), so a "
                  "saturated core is named by its busy time alone");
    sub->add_option("--link", a->link,
                    "Nominal link rate to model against (default: np_link_rate, else the NIC's "
                    "speed as the kernel reports it)");
    sub->add_flag("--json", a->json,
                  "Print the result contract as JSON instead of the explanation");
    const std::pair<const char*, const char*> overrides[] = {
        {"--iface", "np_data_iface"},
        {"--port", "np_port"},
        {"--ping-count", "np_ping_count"},
        {"--tcp-duration", "np_tcp_duration_s"},
        {"--udp-duration", "np_udp_duration_s"},
        {"--udp-bandwidth", "np_udp_bandwidth"},
        {"--server-ip", "np_server_ip"},
        {"--client-ip", "np_client_ip"},
        // How iperf3 runs the tests: its own option letters.
        {"-P,--parallel", "np_parallel"},
        {"--direction", "np_direction"},
        {"-l,--udp-length", "np_udp_length"},
        {"-w,--window", "np_window"},
        {"-C,--congestion", "np_tcp_congestion"},
        {"--fq-rate", "np_pacing_rate"},
        {"-A,--affinity", "np_affinity"},
        {"--mtu", "np_mtu"},
        {"--repeat", "np_repeat"},
        {"--ceiling-loss", "np_ceiling_loss_pct"}};
    for (const auto& [names, key] : overrides) {
        const std::string flag = long_name(names);
        sub->add_option_function<std::string>(
               names,
               [a, key = std::string(key), flag](const std::string& v) {
                   set_override(*a, key, v, flag);
               },
               fmt::format("Overrides {} from the params file", key))
            ->type_name("VALUE");
    }
    // iperf3's flags, each a value of a key.
    const std::array<std::array<const char*, 4>, 4> flags = {{
        {"-R,--reverse", "np_direction", "reverse", "The server sends, the client receives"},
        {"--bidir", "np_direction", "bidir", "Both directions at once"},
        {"-Z,--zerocopy", "np_zerocopy", "true", "iperf3's zero-copy send"},
        {"--find-udp-ceiling", "np_find_udp_ceiling", "true",
         "After the tests, search the highest UDP load with loss under --ceiling-loss % "
         "(default 0.1) in short traced tests"},
    }};
    for (const auto& [names, key, value, what] : flags) {
        const std::string flag = long_name(names);
        sub->add_flag_function(
            names,
            [a, key = std::string(key), value = std::string(value), flag](int64_t) {
                set_override(*a, key, value, flag);
            },
            fmt::format("{} (sets {}: {})", what, key, value));
    }
}

}  // namespace

void add_run_command(CLI::App& app, Runner& run) {
    auto a = std::make_shared<RunArgs>();
    CLI::App* sub = app.add_subcommand(
        "run",
        "The whole experiment between two nodes over SSH: preflight, probes on both data NICs, "
        "ping, TCP, UDP, teardown; writes the contract, traces and explanation");
    add_run_options(sub, a);
    sub->callback([&run, a] { run = [a] { return run_run(*a); }; });

    auto t = std::make_shared<RunArgs>();
    CLI::App* td = app.add_subcommand(
        "teardown",
        "Undo on both nodes what a run left (probe, iperf3 server, uploaded files, iface "
        "changes); takes the run's own arguments, so after a killed run it is the same command "
        "with 'teardown' for 'run'");
    add_run_options(td, t);
    td->callback([&run, t] { run = [t] { return run_teardown(*t); }; });
}

}  // namespace np::cli
