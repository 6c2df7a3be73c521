#pragma once
// What a run changes on a node, each change an object that undoes itself. The changes are made
// by node_steps.sh's functions, defined in the node's command shell (the one implementation,
// shared with the tutorial's modes); each leaves its undo step in the node's state dir first, so
// that `np-explain teardown` can undo what a run killed with SIGKILL, or cut off from the node,
// could not.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "src/experiment/cleanup_report.hpp"
#include "src/remote/command_shell.hpp"
#include "src/remote/session.hpp"

namespace np::experiment {

// Where one run keeps its state on a node: /run/np-explain/<node>/<run>/ (0700, one dir per
// node name: two testbed "nodes" share one /run) — its undo scripts and the PIDs of what it
// started, apart from any other run's, so that a run's teardown undoes only its own.
struct RunState {
    std::string node;
    std::string run;  // the run's id (run_id()): safe in a path and a systemd unit's name
    std::string dir;
    CleanupReport cleanup_failed;
};
RunState run_state(const std::string& node, const std::string& run, CleanupReport report);
// A new run's id: its start in UTC and the console process's PID, "20261204T161500Z-4242".
std::string new_run_id();

// The node held for one run (or one teardown): an flock on /run/np-explain/net-<netns>.lock,
// one per network namespace, so one host reached under two names is still one node. A small
// process on the node holds it for as long as the run's SSH connection lives (it watches the
// sshd process that serves it), so a run killed with SIGKILL or cut off releases it with its
// connection; release() (and the destructor) ends it at once. A node another run holds is
// refused after up to 3 s (a killed run's connection takes a moment to go) with NodeInUse,
// naming the holder.
class NodeInUse : public EnvironmentError {
  public:
    using EnvironmentError::EnvironmentError;
};
class NodeLock {
  public:
    // `holder`: who asks, as the other side's refusal will name it ("run 20261204T161500Z-4242
    // by alice on console1 (np-explain pid 4242)").
    NodeLock(remote::CommandShell& sh, const std::string& node, const std::string& holder);
    ~NodeLock();
    NodeLock(const NodeLock&) = delete;
    NodeLock& operator=(const NodeLock&) = delete;
    void release();

  private:
    remote::CommandShell& sh_;
    std::string pid_;  // the holding process on the node
};
// Who asks for a node lock from this console: "<what> <id> by <user> on <host> (np-explain pid
// <pid>)".
std::string lock_holder(const std::string& what, const std::string& id);

// An undo step NAME.undo in the run's state dir (node_steps.sh's calls that reverse a change),
// run (then removed) by the destructor. Names sort in teardown order: 05-client, 10-probe,
// 20-server, 30-upload, 40-iface.
class UndoStep {
  public:
    // Records `calls` as the step.
    UndoStep(remote::CommandShell& sh, const RunState& st, std::string name,
             const std::string& calls);
    // The step a node_steps.sh function records itself before its change (none yet: nothing to
    // undo).
    UndoStep(remote::CommandShell& sh, const RunState& st, std::string name);
    ~UndoStep();
    UndoStep(const UndoStep&) = delete;
    UndoStep& operator=(const UndoStep&) = delete;
    // Runs the undo now (once); returns what it printed on failure, empty on success or when
    // the session is gone (the run's final sweep retries from a fresh session).
    std::string run();

  private:
    remote::CommandShell& sh_;
    std::string name_;
    std::string path_;
    CleanupReport report_;
    bool done_ = false;
};

// Runs every undo script the run left on the node, in order, and removes its state dir.
// Returns one line per script that ran, and "nothing to undo" when there were none.
std::string undo_all(remote::CommandShell& sh, const RunState& st);
// `teardown`: every run's undo scripts left on the node, each run's in order. Only with the
// node's lock held, so none of them is a live run's.
std::string undo_leftovers(remote::CommandShell& sh, const std::string& node);

// The data iface configured for the run: link up, address replaced, the MTU set when the run
// asks for one (np_mtu); undone as found.
class IfaceConfig {
  public:
    // An IPv6 address is usable only once duplicate address detection has passed (~1 s after
    // it is added, while it is "tentative"): the constructor waits for that, as long as the link
    // has carrier (np_dad_wait: up to 10 s).
    IfaceConfig(remote::CommandShell& sh, const RunState& st, const std::string& iface,
                const std::string& cidr, std::optional<int> mtu, bool keep);
    // The kernel marked the IPv6 address "dadfailed": another host on the segment answered
    // duplicate address detection for it (it holds the address).
    bool dad_failed() const { return dad_failed_; }

  private:
    bool dad_failed_ = false;
    std::unique_ptr<UndoStep> undo_;
};

// The iperf3 server on node A, supervised: a transient systemd unit where PID 1 is systemd,
// else setsid with a pidfile; stopped by unit or PID, never by name. The unit's name is the
// run's own (np-iperf3-<run>).
class IperfServer {
  public:
    IperfServer(remote::CommandShell& sh, const RunState& st, int port);
    const std::string& node() const { return node_; }
    // Stops it now; the destructor then has nothing left to do.
    void stop();
    // Whether its process (its unit's) still runs: it may have been killed mid-run.
    bool runs();
    // Whether it can take a test now: it runs, listens on its port and holds no connection of
    // the last test. Between tests iperf3 closes its listening socket and opens a new one; a
    // client that connects before (a server starved of CPU takes seconds) is reset.
    bool ready();
    // "PID T" when its process is stopped (a SIGSTOP, or t: a debugger): alive and listening,
    // it never answers a test. Empty otherwise.
    std::optional<std::string> stopped();
    const std::string& supervisor() const {
        return supervisor_;
    }  // "systemd unit np-iperf3-<run>" or "pid N"

  private:
    remote::CommandShell& sh_;
    std::string supervisor_;
    std::string dir_;  // the run's state dir on the node: the server's pidfile and how it runs
    int port_;
    std::string node_;
    CleanupReport report_;
    std::unique_ptr<UndoStep> undo_;
};

// np-probe uploaded to a private temp dir, checksum verified, and counting on the data iface
// in the background, driven through the node's one command shell: commands go to its control
// socket, and it stops by itself when that shell ends (the SSH connection dropped or the run
// was killed), writing its trace on the node and detaching.
class RemoteProbe {
  public:
    // Uploads the probe (the run's "upload" step); start() attaches it (its "probe start").
    RemoteProbe(remote::CommandShell& sh, const RunState& st, const std::string& local_binary);
    ~RemoteProbe();
    // Throws EnvironmentError when the probe did not start (at require_tier, when given, or at
    // any tier); max_tier bounds the tier it counts at.
    void start(const std::string& iface, const std::string& role, int port,
               const std::string& max_tier, const std::string& require_tier, bool cpu_account);
    // The phases the probe has closed so far, as it answered `phase`: the node's partial
    // trace, kept by the run while the whole trace is not in hand yet.
    const std::vector<nlohmann::json>& closed_phases() const { return closed_phases_; }
    // Cuts the probe's counters into phase NAME and returns once it has: traffic started after
    // this returns is counted in the new phase on this node. (Without the wait, a probe that
    // read the command a few ms late put the first frames of a test in the phase before, and
    // the other node's probe did not: a false LOSS_ON_WIRE.) False when the probe is gone.
    bool phase(const std::string& name);
    // The newest sample's tx or rx wire rate (the larger) in bit/s, if the probe has one.
    // Uses the node's shell: only while it runs no other command.
    std::optional<double> rate_bps();
    // Stops the probe and returns its trace document, parsed once within a trace's bounds.
    // Throws EnvironmentError saying why when there is none (the probe was killed, the node
    // lost); once stopped, a probe hands nothing over again.
    nlohmann::json stop(remote::Millis timeout);
    const std::string& node() const { return state_.node; }

  private:
    std::string send(const std::string& command, remote::Millis timeout);
    remote::CommandShell& sh_;
    RunState state_;
    std::string dir_;
    std::string binary_;
    std::string control_;
    std::string trace_file_;
    std::string pidfile_;
    std::unique_ptr<UndoStep> upload_undo_;
    std::unique_ptr<UndoStep> probe_undo_;
    bool stopped_ = false;
    std::vector<nlohmann::json> closed_phases_;
};

}  // namespace np::experiment
