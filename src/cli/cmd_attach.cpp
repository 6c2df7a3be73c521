// `np-explain attach CONTRACT.json`: np-explain's explanation, trace references and the model's
// ceilings added to a tutorial result contract, leaving the tutorial's own fields as they are.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/explain.hpp"
#include "analysis/readers/inputs.hpp"
#include "analysis/readers/names.hpp"
#include "analysis/readers/rate.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/trace.hpp"
#include "rundir/reader.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/files.hpp"
#include "src/cli/terminal.hpp"

namespace np::cli {
namespace {

struct AttachOptions {
    std::string contract;
    std::vector<std::string> traces;
    std::vector<std::string> iperf3;
    std::vector<std::string> ping;
    std::string link;
    // --mode: the contract is written anew from the tools' outputs (the tutorial's modes make
    // theirs this way), naming the nodes the experiment ran on.
    std::string mode;
    std::string node1;
    std::string node2;
};

namespace fs = std::filesystem;

// How a trace is referenced from the contract: relative to the contract's directory, so a run
// dir can be moved as a whole. A contract names only files inside its directory (report and
// attach read nothing else), so a trace elsewhere is refused.
std::string reference(const fs::path& file, const fs::path& contract_dir) {
    const fs::path abs = fs::absolute(file).lexically_normal();
    const fs::path rel = abs.lexically_relative(contract_dir);
    if (rel.empty() || *rel.begin() == ".." || rel == ".")
        throw InputError(file.string(),
                         fmt::format("is outside the contract's directory {}: a contract names "
                                     "only files inside it; copy the trace there first",
                                     contract_dir.string()));
    return rel.string();
}

// The contract to attach to: a new one of --mode (checked), or the file as it is.
Contract contract_to_attach_to(const AttachOptions& o) {
    if (o.mode.empty()) return read_contract_file(o.contract);
    if (o.iperf3.empty() && o.ping.empty())
        throw InputError("--mode", "a new contract needs the tools' outputs: --iperf3, --ping");
    check_mode_name(o.mode, "--mode");
    if (!o.node1.empty()) check_node_name(o.node1, "--node1");
    if (!o.node2.empty()) check_node_name(o.node2, "--node2");
    Contract c;
    c.mode = o.mode;
    c.document = nlohmann::json::object();
    return c;
}

// The traces the contract will reference, relative to its dir: those already attached stay
// attached; new ones join them once.
std::vector<std::string> trace_refs(const AttachOptions& o, const Contract& c,
                                    const fs::path& dir) {
    std::vector<std::string> refs =
        o.mode.empty() ? contract_trace_files(c) : std::vector<std::string>{};
    for (const auto& t : o.traces) {
        const std::string ref = reference(t, dir);
        if (std::find(refs.begin(), refs.end(), ref) == refs.end()) refs.push_back(ref);
    }
    for (const auto& ref : refs) check_contained_path(ref, o.contract + ": traces");
    return refs;
}

// What is explained: the tools' outputs given, else the contract's own figures; the traces;
// the link rate from --link, else the contract's, else the one the probes read (as `run`).
ExplainInput attach_input(const AttachOptions& o, const Contract& c, const fs::path& dir,
                          const std::vector<std::string>& refs) {
    ExplainInput in;
    std::optional<double> given;
    if (!o.link.empty()) given = parse_link_rate_bps(o.link, "--link");
    for (const auto& f : o.iperf3)
        in.measurements.append(read_measurements_file(f, InputFormat::iperf3));
    for (const auto& f : o.ping)
        in.measurements.append(read_measurements_file(f, InputFormat::ping));
    if (in.measurements.throughput.empty() && in.measurements.failures.empty())
        in.measurements.append(measurements_from_contract(c));
    for (const auto& ref : refs) in.traces.push_back(read_trace_file(dir / ref));
    in.link_bps = resolve_link_bps(given, c.link_bps, nic_speed_mbps(in.traces));
    return in;
}

void say_attached(const std::string& contract, const Explanation& e, size_t traces) {
    int errors = 0, warnings = 0;
    for (const auto& f : e.findings) {
        errors += f.severity == Severity::error;
        warnings += f.severity == Severity::warn;
    }
    print_text(
        fmt::format("attached to {}: {} findings ({} error, {} warn), {} trace{}, link {}\n\n",
                    contract, e.findings.size(), errors, warnings, traces, traces == 1 ? "" : "s",
                    e.link_bps ? fmt::format("{:g} Mbit/s", *e.link_bps / 1e6) : "unknown"));
    print_text(render_explanation(e));
}

int run_attach(const AttachOptions& o) {
    const fs::path dir = fs::absolute(fs::path(o.contract)).parent_path().lexically_normal();
    Contract c = contract_to_attach_to(o);
    const std::vector<std::string> refs = trace_refs(o, c, dir);
    const ExplainInput in = attach_input(o, c, dir, refs);
    const Explanation e = explain(in);
    if (!o.mode.empty()) {
        c.document =
            build_contract(o.mode, o.node1, o.node2, in.measurements, e, refs, in.link_bps);
    } else {
        attach_explanation(c.document, e, refs, in.link_bps, in.measurements);
    }
    write_file_atomically(o.contract, c.document.dump(2) + "\n");
    say_attached(o.contract, e, refs.size());
    return 0;
}

}  // namespace

void add_attach_command(CLI::App& app, Runner& run) {
    auto o = std::make_shared<AttachOptions>();
    CLI::App* sub =
        app.add_subcommand("attach",
                           "Add np-explain's explanation, traces and the model's ceilings to a "
                           "tutorial result contract "
                           "(np_contract_<mode>.json), leaving the tutorial's fields untouched");
    sub->add_option("CONTRACT", o->contract,
                    "The result contract to attach to (rewritten atomically)")
        ->required();
    sub->add_option("--trace", o->traces,
                    "np-probe trace (np-trace/1) of a node's data NIC (repeatable)");
    sub->add_option(
        "--iperf3", o->iperf3,
        "The iperf3 -J output behind the contract (repeatable); without it the contract's "
        "own figures are explained");
    sub->add_option("--ping", o->ping, "The ping output behind the contract");
    sub->add_option("--link", o->link,
                    "Nominal link rate (default: the contract's link_mbps, if any)");
    sub->add_option("--mode", o->mode,
                    "Write the contract anew from --iperf3/--ping (and the traces) for this mode "
                    "(manual, ansible, jupyter, …), replacing the file; the tutorial's fields "
                    "come from the tools' outputs (checked as run checks it: names.hpp)");
    sub->add_option("--node1", o->node1, "With --mode: node A, the iperf3 server")->needs("--mode");
    sub->add_option("--node2", o->node2, "With --mode: node B, the client")->needs("--mode");
    sub->callback([&run, o] { run = [o] { return run_attach(*o); }; });
}

}  // namespace np::cli
