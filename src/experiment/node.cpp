#include "src/experiment/node.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "src/common/errors.hpp"
#include "src/common/probe_protocol.hpp"
#include "src/remote/shell.hpp"

namespace np::experiment {

namespace proto = probe_protocol;
using remote::shell_join;
using remote::shell_quote;

std::string node_state_dir(const std::string& node) {
    return "/run/np-explain/" + node;
}

UndoStep::UndoStep(remote::CommandShell& sh, const std::string& node, std::string name,
                   const std::string& script)
    : sh_(sh), path_(node_state_dir(node) + "/" + name + ".undo") {
    const std::string dir = node_state_dir(node);
    sh_.check(fmt::format("mkdir -p -m 0700 /run/np-explain {0} && printf '%s\\n' {1} > {2}",
                          shell_quote(dir), shell_quote(script), shell_quote(path_)));
}

UndoStep::~UndoStep() {
    const std::string failed = run();
    if (!failed.empty()) std::fprintf(stderr, "np-explain: %s\n", failed.c_str());
}

std::string UndoStep::run() {
    if (done_) return {};
    done_ = true;
    try {
        const auto r =
            sh_.run(fmt::format("sh {0}; status=$?; rm -f {0}; exit $status", shell_quote(path_)));
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

std::string undo_all(remote::CommandShell& sh, const std::string& node) {
    const std::string dir = node_state_dir(node);
    const auto r =
        sh.run(fmt::format("cd {} 2>/dev/null || {{ echo 'nothing to undo'; exit 0; }}; found=0; "
                           "for f in *.undo; do [ -e \"$f\" ] || continue; found=1; "
                           "if sh \"$f\"; then echo \"undone: ${{f%.undo}}\"; rm -f \"$f\"; "
                           "else echo \"failed: ${{f%.undo}}\"; fi; done; "
                           "[ $found = 1 ] || echo 'nothing to undo'; cd / && rmdir {} "
                           "/run/np-explain 2>/dev/null; true",
                           shell_quote(dir), shell_quote(dir)));
    return r.out;
}

std::string stop_pidfile_script(const std::string& pidfile, const std::string& program) {
    // Only a process whose argv[0] ends in `program` is ours; a recycled PID is left alone.
    return fmt::format(
        "pf={0}; [ -r \"$pf\" ] || exit 0; pid=$(cat \"$pf\"); "
        "case $pid in ''|*[!0-9]*) rm -f \"$pf\"; exit 0;; esac; "
        "ours() {{ [ -r /proc/$pid/cmdline ] && tr '\\0' '\\n' </proc/$pid/cmdline | head -n 1 | "
        "grep -q {1}; }}; "
        "if ours; then kill -TERM $pid 2>/dev/null; i=0; "
        "while ours && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done; "
        "ours && kill -KILL $pid 2>/dev/null; fi; rm -f \"$pf\"; exit 0",
        shell_quote(pidfile), shell_quote("\\(^\\|/\\)" + program + "$"));
}

// ---------------------------------------------------------------------------------------------

IfaceConfig::IfaceConfig(remote::CommandShell& sh, const std::string& node,
                         const std::string& iface, const std::string& cidr, bool keep) {
    const auto link =
        proto::parse_message(sh.check("ip -j link show dev " + shell_quote(iface)).out);
    if (link.is_array() && !link.empty()) {
        for (const auto& flag : link[0].value("flags", nlohmann::json::array()))
            if (flag == "UP") was_up_ = true;
    }
    const auto addr_line = sh.run(fmt::format("ip -o addr show dev {} to {}", shell_quote(iface),
                                              shell_quote(cidr.substr(0, cidr.find('/')))));
    const bool had_addr = addr_line.exit_status == 0 && !addr_line.out.empty();
    if (!keep) {
        std::string undo;
        if (!had_addr)
            undo += fmt::format("ip addr del {} dev {} 2>/dev/null; ", shell_quote(cidr),
                                shell_quote(iface));
        if (!was_up_) undo += fmt::format("ip link set dev {} down; ", shell_quote(iface));
        undo += "true";
        undo_ = std::make_unique<UndoStep>(sh, node, "40-iface", undo);
    }
    sh.check(fmt::format("ip link set dev {0} up && ip addr replace {1} dev {0}",
                         shell_quote(iface), shell_quote(cidr)));
}

// ---------------------------------------------------------------------------------------------

IperfServer::IperfServer(remote::CommandShell& sh, const std::string& node, int port) : sh_(sh) {
    const std::string listening = fmt::format("ss -Htln 'sport = :{}' | grep -q .", port);
    if (sh_.run(listening).exit_status == 0) {
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: TCP port {} is already in use (an iperf3 server from an earlier run? "
                        "'np-explain teardown' stops what np-explain started; otherwise choose "
                        "another np_port)",
                        sh_.session().name(), port));
    }
    const bool systemd =
        sh_.run("[ \"$(cat /proc/1/comm 2>/dev/null)\" = systemd ]").exit_status == 0;
    const std::string iperf3 = sh_.check("command -v iperf3").out;
    const std::string bin = iperf3.substr(0, iperf3.find('\n'));
    if (systemd) {
        supervisor_ = "systemd unit np-iperf3";
        undo_ = std::make_unique<UndoStep>(sh_, node, "20-server",
                                           "systemctl stop np-iperf3 2>/dev/null; systemctl "
                                           "reset-failed np-iperf3 2>/dev/null; true");
        sh_.check(fmt::format("systemd-run --quiet --unit=np-iperf3 --collect {} -s -p {}",
                              shell_quote(bin), port));
        is_alive_cmd_ = "systemctl is-active --quiet np-iperf3 && " + listening;
    } else {
        const std::string dir = node_state_dir(node);
        const std::string pidfile = dir + "/iperf3.pid";
        const std::string log = dir + "/iperf3.log";
        undo_ = std::make_unique<UndoStep>(
            sh_, node, "20-server",
            "rm -f " + shell_quote(log) + "; " + stop_pidfile_script(pidfile, "iperf3"));
        // setsid -f forks: the server holds none of the SSH channel's fds, so exec returns, and
        // it is in its own session, out of reach of the channel's process group.
        const std::string inner = fmt::format("cd / && echo $$ > {} && exec {} -s -p {}",
                                              shell_quote(pidfile), shell_quote(bin), port);
        sh_.check(fmt::format("setsid -f sh -c {} </dev/null >{} 2>&1", shell_quote(inner),
                              shell_quote(log)));
        // The shell writes the pidfile just before exec: wait for the PID, not the file.
        const auto pid = sh_.run(fmt::format(
            "i=0; until grep -q '^[0-9][0-9]*$' {0} 2>/dev/null || [ $i -ge 50 ]; do sleep 0.1; "
            "i=$((i+1)); done; cat {0}",
            shell_quote(pidfile)));
        supervisor_ = "pid " + pid.out.substr(0, pid.out.find('\n'));
        is_alive_cmd_ =
            fmt::format("kill -0 \"$(cat {})\" 2>/dev/null && {}", shell_quote(pidfile), listening);
    }
    for (int i = 0; i < 50; ++i) {  // up to 5 s for it to listen
        if (alive()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw EnvironmentError(
        EnvironmentError::Kind::remote,
        fmt::format("{}: the iperf3 server ({}) did not start listening on port {}",
                    sh_.session().name(), supervisor_, port));
}

void IperfServer::stop() {
    if (!undo_) return;
    const std::string failed = undo_->run();
    if (!failed.empty()) std::fprintf(stderr, "np-explain: %s\n", failed.c_str());
}

bool IperfServer::alive() {
    return sh_.run(is_alive_cmd_).exit_status == 0;
}

// ---------------------------------------------------------------------------------------------

RemoteProbe::RemoteProbe(remote::CommandShell& sh, const std::string& node,
                         const std::string& local_binary)
    : sh_(sh), node_(node) {
    dir_ = sh_.make_private_dir();
    upload_undo_ =
        std::make_unique<UndoStep>(sh_, node, "30-upload", "rm -rf " + shell_quote(dir_));
    binary_ = sh_.upload(local_binary, dir_, "np-probe", 0700);
    control_ = dir_ + "/control.sock";
    trace_file_ = dir_ + "/trace.json";
    pidfile_ = node_state_dir(node) + "/probe.pid";
}

void RemoteProbe::start(const std::string& iface, const std::string& role, int port,
                        const std::string& max_tier, const std::string& require_tier) {
    const std::string& node = node_;
    // tc filters stay attached when the probe that attached them is killed (they belong to the
    // qdisc, not to the process): if its np_tc_* filters are still there once it is stopped,
    // `np-probe --cleanup` removes them, and the clsact if a probe made it (10-probe runs before
    // 30-upload removes the binary).
    const std::string q_iface = shell_quote(iface);
    probe_undo_ = std::make_unique<UndoStep>(
        sh_, node, "10-probe",
        fmt::format("( {0} ); if tc filter show dev {1} ingress 2>/dev/null | grep -q np_tc_ || "
                    "tc filter show dev {1} egress 2>/dev/null | grep -q np_tc_; then "
                    "{2} --iface {1} --cleanup </dev/null >/dev/null 2>&1; fi; true",
                    stop_pidfile_script(pidfile_, "np-probe"), q_iface, shell_quote(binary_)));
    // $$ is the node's command shell (a subshell's $$ is its parent's): when that shell ends,
    // the probe writes its trace and detaches.
    std::string tiers;
    if (!max_tier.empty()) tiers += " --max-tier " + shell_quote(max_tier);
    if (!require_tier.empty()) tiers += " --require-tier " + shell_quote(require_tier);
    const auto started = sh_.run(
        fmt::format("{} --iface {} --role {} --node {} --port {} --control {} --out {} "
                    "--pidfile {} --exit-with $$ --background{}",
                    shell_quote(binary_), q_iface, shell_quote(role), shell_quote(node), port,
                    shell_quote(control_), shell_quote(trace_file_), shell_quote(pidfile_), tiers),
        remote::Millis(30000));
    const auto ready = proto::parse_message(started.out);
    if (started.exit_status != 0 || !ready.is_object() ||
        ready.value(std::string(proto::kTypeKey), "") != proto::kMessageReady) {
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
    if (!j.is_object() || j.value(std::string(proto::kTypeKey), "") != proto::kMessagePhase)
        return false;
    closed_phases_.push_back(j);
    closed_phases_.back().erase(std::string(proto::kTypeKey));
    return true;
}

std::optional<double> RemoteProbe::rate_bps() {
    if (stopped_) return std::nullopt;
    const auto j = proto::parse_message(send("status", remote::Millis(5000)));
    if (!j.is_object() || !j.contains("last_sample") || !j["last_sample"].is_object())
        return std::nullopt;
    const auto& s = j["last_sample"];
    const double ms = s.value("interval_ms", 0.0);
    if (ms <= 0) return std::nullopt;
    const double tx = s.value("tx_wire_bytes", 0.0), rx = s.value("rx_wire_bytes", 0.0);
    return std::max(tx, rx) * 8.0 / (ms / 1000.0);
}

std::string RemoteProbe::stop(remote::Millis timeout, std::string& why) {
    if (stopped_) return trace_;
    stopped_ = true;
    try {
        auto j = proto::parse_message(send(std::string(proto::kCommandStop), timeout));
        if (j.is_object() && j.value(std::string(proto::kTypeKey), "") == proto::kMessageTrace) {
            j.erase(std::string(proto::kTypeKey));
            trace_ = j.dump(2) + "\n";
            return trace_;
        }
        // The probe stopped before we asked (its shell ended, a signal) and wrote its trace on
        // the node; wait for it to finish writing, then take that.
        const auto r = sh_.run(fmt::format(
            "pid=$(cat {0} 2>/dev/null); i=0; while [ -n \"$pid\" ] && kill -0 \"$pid\" "
            "2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; cat {1}",
            shell_quote(pidfile_), shell_quote(trace_file_)));
        if (r.exit_status == 0 && proto::parse_message(r.out).is_object()) {
            trace_ = r.out;
        } else {
            why = "the probe was gone and left no trace (killed?)";
        }
    } catch (const std::exception& e) {
        why = e.what();
    }
    return trace_;
}

}  // namespace np::experiment
