#pragma once
// `np-explain run`: the tutorial's experiment between node A (iperf3 server) and node B
// (client), with the BPF probe on the data iface of both, ending in an explanation.
//
// Order: connect -> preflight (image, iface, tools) -> configure the data ifaces -> carrier and
// link facts -> data path (ARP/ping) -> upload and start the probes -> supervised iperf3
// server -> phases ping, tcp, udp (each announced to both probes) -> stop server -> collect
// traces -> teardown (always, by scope) -> analysis -> run dir.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/explanation/explain.hpp"
#include "analysis/readers/params.hpp"

namespace np::experiment {

// What a run reports while it runs, for the caller to show (np-explain run draws one status line
// on a terminal: src/cli/terminal_progress.hpp). The runner itself prints nothing.
class ProgressSink {
  public:
    virtual ~ProgressSink() = default;
    // A one-off step: "configuring enp0s25 on both nodes".
    virtual void step(const std::string& what) = 0;
    // A test phase under way: seconds elapsed and expected, the wire rate the probe sees now
    // (asked for only while there is a sink, twice a second).
    virtual void phase(const std::string& name, double elapsed_s, double expected_s,
                       std::optional<double> wire_bps) = 0;
    // The step or phase is over.
    virtual void clear() = 0;
};

struct RunOptions {
    std::string node_a;  // server
    std::string node_b;  // client
    Params params;
    std::string ssh_config;  // empty: the user's, as OpenSSH does
    bool accept_new_host_keys = false;
    std::string mode = "np-explain";  // np_contract_<mode>.json
    std::filesystem::path run_dir;
    bool keep_iface = false;
    std::optional<double> link_bps;  // --link; else np_link_rate; else the NIC's ethtool speed
    std::string probe_binary;        // local np-probe to upload
    // The probes' tier (docs/commands.md, "Probe tiers"): each node counts at the best it allows,
    // no better than probe_tier, and the run stops before any test when a node allows less than
    // require_tier. Empty: no bound. no_probe: measure with the tools alone.
    std::string probe_tier;
    std::string require_tier;
    bool no_probe = false;
    bool cpu_account = true;           // the probes' CPU account (off: np-probe --no-cpu-account)
    ProgressSink* progress = nullptr;  // none: nothing is reported while it runs
};

struct RunOutcome {
    int exit_status = 0;      // 0, 1 (an error finding), 3 (environment), 128+signal (interrupted)
    Explanation explanation;  // its link_bps: the rate the run was held against
    // None when it could not be saved (exit 3; `stopped` says why).
    std::optional<std::filesystem::path> contract_path;
    std::vector<std::filesystem::path> files;  // everything written to the run dir
    std::string stopped;                       // why the run ended early; empty when it completed
    std::string note;  // a signal that came while collecting or tearing down (exit 128+signal)
};

// Throws InputError for bad options (before anything is sent to a node).
RunOutcome run_experiment(const RunOptions& o);

// What teardown did on both nodes.
struct TeardownOutcome {
    std::string report;        // per node, in the nodes' order: what was undone, or why not
    bool all_reached = false;  // false when a node could not be reached or is held by a live run
    bool in_use = false;       // a node is held by a live run
};

// Undoes on both nodes whatever runs that ended left there (probe, server, uploaded files,
// iface changes), each node held meanwhile.
TeardownOutcome teardown_nodes(const std::string& node_a, const std::string& node_b,
                               const std::string& ssh_config);

}  // namespace np::experiment
