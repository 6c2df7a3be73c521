#include "src/experiment/node.hpp"

#include <fmt/format.h>

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "analysis/readers/text.hpp"
#include "common/errors.hpp"
#include "common/probe_protocol.hpp"
#include "common/shell_quote.hpp"

namespace np::experiment {

namespace proto = probe_protocol;

RunState run_state(const std::string& node, const std::string& run, CleanupReport report) {
    return {node, run, "/run/np-explain/" + node + "/" + run, std::move(report)};
}

std::string new_run_id() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char when[32];
    std::strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &utc);
    return fmt::format("{}-{}", when, getpid());
}

std::string lock_holder(const std::string& what, const std::string& id) {
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "?");
    std::string user = std::to_string(getuid());
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) user = pw->pw_name;
    // A SUDO_USER says who is behind root on a shared console.
    if (const char* sudo = std::getenv("SUDO_USER"); sudo && *sudo && getuid() == 0)
        user = fmt::format("{} (as root)", sudo);
    return fmt::format("{} {} by {} on {} (np-explain pid {})", what, id, user, host, getpid());
}

NodeLock::NodeLock(remote::CommandShell& sh, const std::string& node, const std::string& holder)
    : sh_(sh) {
    // Watched: the sshd process serving the run's connection (the command shell's parent; the
    // shell may be restarted within the connection), or where the shell has no such parent, the
    // command shell itself.
    const auto r = sh_.run(fmt::format("np_lock {} \"$PPID\" \"$$\"", shell_quote(holder)),
                           remote::Millis(30000));
    const std::string out = r.out.substr(0, r.out.find('\n'));
    if (r.exit_status == 0 && out.starts_with("locked ")) {
        pid_ = out.substr(7);
        if (!pid_.empty() && pid_.find_first_not_of("0123456789") == std::string::npos) return;
    }
    if (r.exit_status == 75 && out.starts_with("held "))
        throw NodeInUse(EnvironmentError::Kind::remote,
                        fmt::format("{} is held by another np-explain {}", node, out.substr(5)));
    std::string err = r.err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    throw EnvironmentError(
        EnvironmentError::Kind::remote,
        fmt::format("{}: could not lock the node for the run: {}", node,
                    err.empty() ? fmt::format("exit status {}", r.exit_status) : err));
}

NodeLock::~NodeLock() {
    release();
}

void NodeLock::release() {
    if (pid_.empty()) return;
    const std::string pid = std::exchange(pid_, {});
    try {
        sh_.run("np_unlock " + pid);
    } catch (const std::exception&) {
        // The session is gone: the holder ends with the connection it watches.
    }
}

UndoStep::UndoStep(remote::CommandShell& sh, const RunState& st, std::string name,
                   const std::string& script)
    : UndoStep(sh, st, std::move(name)) {
    sh_.check(shell_join({"np_undo_record", st.dir, name_, script}));
}

UndoStep::UndoStep(remote::CommandShell& sh, const RunState& st, std::string name)
    : sh_(sh),
      name_(std::move(name)),
      path_(st.dir + "/" + name_ + ".undo"),
      report_(st.cleanup_failed) {}

UndoStep::~UndoStep() {
    const std::string failed = run();
    if (!failed.empty() && report_) report_(failed);
}

std::string UndoStep::run() {
    if (done_) return {};
    done_ = true;
    try {
        const auto r = sh_.run("np_undo_run " + shell_quote(path_));
        if (r.exit_status != 0) {
            return fmt::format("{}: undo {} failed (status {}): {}", sh_.session().name(), path_,
                               r.exit_status, r.err);
        }
    } catch (const std::exception&) {
        // The session is gone. The run's final sweep runs the scripts left from a fresh
        // session and reports (TEARDOWN_INCOMPLETE) what it cannot reach; advising
        // 'np-explain teardown' here was wrong whenever that sweep cleaned up.
    }
    return {};
}

std::string undo_all(remote::CommandShell& sh, const RunState& st) {
    return sh.run("np_undo_all " + shell_quote(st.dir)).out;
}

std::string undo_leftovers(remote::CommandShell& sh, const std::string& node) {
    return sh.run("np_undo_leftovers " + shell_quote("/run/np-explain/" + node)).out;
}

// ---------------------------------------------------------------------------------------------

IfaceConfig::IfaceConfig(remote::CommandShell& sh, const RunState& st, const std::string& iface,
                         const std::string& cidr, std::optional<int> mtu, bool keep) {
    // np_iface_up records its undo step on the node before it changes anything.
    if (!keep) undo_ = std::make_unique<UndoStep>(sh, st, "40-iface");
    const auto r =
        sh.run(shell_join({"np_iface_up", st.dir, iface, cidr,
                           mtu ? std::to_string(*mtu) : std::string(), keep ? "keep" : ""}),
               remote::Millis(40000));  // np_dad_wait's 10 s at most within it
    if (r.exit_status != 0)
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: the data port {} was not configured: {}", sh.session().name(), iface,
                        text::trim(r.err).empty() ? fmt::format("exit status {}", r.exit_status)
                                                  : std::string(text::trim(r.err))));
    dad_failed_ = text::trim(r.out) == "dad=failed";
}

// ---------------------------------------------------------------------------------------------

IperfServer::IperfServer(remote::CommandShell& sh, const RunState& st, int port)
    : sh_(sh), dir_(st.dir), port_(port), node_(st.node), report_(st.cleanup_failed) {
    // The unit's name is the run's own; np_server_start records its undo step before it starts.
    undo_ = std::make_unique<UndoStep>(sh_, st, "20-server");
    const auto r =
        sh_.run(shell_join({"np_server_start", dir_, std::to_string(port), "np-iperf3-" + st.run}),
                remote::Millis(30000));
    if (r.exit_status == 2)
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: TCP port {} is already in use (an iperf3 server from an earlier run? "
                        "'np-explain teardown' stops what np-explain started; otherwise choose "
                        "another np_port)",
                        sh_.session().name(), port));
    if (r.exit_status != 0)
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: {}", sh_.session().name(),
                        text::trim(r.err).empty() ? "the iperf3 server did not start"
                                                  : std::string(text::trim(r.err))));
    supervisor_ = text::trim(r.out);
}

void IperfServer::stop() {
    if (!undo_) return;
    const std::string failed = undo_->run();
    if (!failed.empty() && report_) report_(failed);
}

bool IperfServer::runs() {
    return sh_.run(shell_join({"np_server_runs", dir_})).exit_status == 0;
}

bool IperfServer::ready() {
    return sh_.run(shell_join({"np_server_ready", dir_, std::to_string(port_)})).exit_status == 0;
}

std::optional<std::string> IperfServer::stopped() {
    const auto r = sh_.run("np_server_stopped " + shell_quote(dir_));
    if (r.exit_status != 0) return std::nullopt;
    return r.out.substr(0, r.out.find('\n'));
}

// ---------------------------------------------------------------------------------------------

RemoteProbe::RemoteProbe(remote::CommandShell& sh, const RunState& st,
                         const std::string& local_binary)
    : sh_(sh), state_(st) {
    dir_ = sh_.make_private_dir();
    upload_undo_ = std::make_unique<UndoStep>(sh_, st, "30-upload", "rm -rf " + shell_quote(dir_));
    binary_ = sh_.upload(local_binary, dir_, "np-probe", 0700);
    control_ = dir_ + "/control.sock";
    trace_file_ = dir_ + "/trace.json";
    pidfile_ = st.dir + "/probe.pid";
}

void RemoteProbe::start(const std::string& iface, const std::string& role, int port,
                        const std::string& max_tier, const std::string& require_tier,
                        bool cpu_account) {
    const std::string& node = state_.node;
    // $$ is the node's command shell (a subshell's $$ is its parent's): when that shell ends,
    // the probe writes its trace and detaches. np_probe_start records the undo step first.
    probe_undo_ = std::make_unique<UndoStep>(sh_, state_, "10-probe");
    std::string tiers;
    if (!max_tier.empty()) tiers += " --max-tier " + shell_quote(max_tier);
    if (!require_tier.empty()) tiers += " --require-tier " + shell_quote(require_tier);
    if (!cpu_account) tiers += " --no-cpu-account";
    const auto started = sh_.run(
        fmt::format("{} --role {} --node {} --port {} --control {} --out {} --exit-with $${}",
                    shell_join({"np_probe_start", state_.dir, binary_, iface, pidfile_}),
                    shell_quote(role), shell_quote(node), port, shell_quote(control_),
                    shell_quote(trace_file_), tiers),
        remote::Millis(30000));
    const auto ready = proto::parse_message(started.out);
    if (started.exit_status != 0 || proto::message_type(ready) != proto::kMessageReady) {
        std::string err = started.err;
        while (!err.empty() && err.back() == '\n') err.pop_back();
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: np-probe did not start on {}: {}", sh_.session().name(), iface,
                        err.empty() ? fmt::format("exit status {}", started.exit_status) : err));
    }
}

RemoteProbe::~RemoteProbe() = default;

std::string RemoteProbe::send(const std::string& command, remote::Millis timeout) {
    const auto r =
        sh_.run(shell_join({binary_, "--control", control_, "--send", command}), timeout);
    return r.exit_status == 0 ? r.out : std::string();
}

bool RemoteProbe::phase(const std::string& name) {
    if (stopped_) return false;
    const auto j = proto::parse_message(send("phase " + name, remote::Millis(10000)));
    if (proto::message_type(j) != proto::kMessagePhase) return false;
    closed_phases_.push_back(*j);
    closed_phases_.back().erase(std::string(proto::kTypeKey));
    return true;
}

std::optional<double> RemoteProbe::rate_bps() {
    if (stopped_) return std::nullopt;
    const auto j = proto::parse_message(send("status", remote::Millis(5000)));
    if (!j || !j->contains("last_sample") || !(*j)["last_sample"].is_object()) return std::nullopt;
    const auto& s = (*j)["last_sample"];
    const double ms = proto::number_field(s, "interval_ms");
    if (ms <= 0) return std::nullopt;
    const double tx = proto::number_field(s, "tx_wire_bytes");
    const double rx = proto::number_field(s, "rx_wire_bytes");
    return std::max(tx, rx) * 8.0 / (ms / 1000.0);
}

nlohmann::json RemoteProbe::stop(remote::Millis timeout) {
    if (stopped_) throw EnvironmentError(EnvironmentError::Kind::remote, "the probe was stopped");
    stopped_ = true;
    auto j = proto::parse_message(send(std::string(proto::kCommandStop), timeout));
    if (proto::message_type(j) == proto::kMessageTrace) {
        j->erase(std::string(proto::kTypeKey));
        return *j;
    }
    // The probe stopped before we asked (its shell ended, a signal) and wrote its trace on
    // the node; wait for it to finish writing, then take that.
    const auto r = sh_.run(
        fmt::format("pid=$(cat {0} 2>/dev/null); i=0; while [ -n \"$pid\" ] && kill -0 \"$pid\" "
                    "2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; cat {1}",
                    shell_quote(pidfile_), shell_quote(trace_file_)));
    if (auto written = proto::parse_message(r.out); r.exit_status == 0 && written) return *written;
    throw EnvironmentError(EnvironmentError::Kind::remote,
                           "the probe was gone and left no trace (killed?)");
}

}  // namespace np::experiment
