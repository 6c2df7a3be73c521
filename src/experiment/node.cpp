#include "src/experiment/node.hpp"

#include <fmt/format.h>

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "analysis/explanation/model.hpp"
#include "analysis/readers/text.hpp"
#include "common/errors.hpp"
#include "common/json_document.hpp"
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

namespace {

// The lock's holder: a process in a session of its own, holding the locked fd, that waits for
// the sshd process serving the run's connection to end ($2: the command shell's parent; the
// shell may be restarted within the connection), or, where the shell has no such parent, for
// the command shell itself ($3). $1: who holds it. Prints "locked PID", or "held WHO" and
// exits 75 when another holds the lock.
constexpr const char* kLockScript = R"sh(set -u
umask 077
mkdir -p -m 0700 /run/np-explain || exit 3
command -v flock >/dev/null 2>&1 || { echo 'flock (util-linux) is not installed' >&2; exit 4; }
net=$(stat -L -c %i /proc/self/ns/net 2>/dev/null) || net=host
lock=/run/np-explain/net-$net.lock
exec 9<>"$lock" || exit 3
if ! flock -w 3 9; then
  held=$(head -c 512 "$lock" | tr -cd '[:print:]\n' | head -n 1)
  echo "held ${held:-by a process that has not said who it is}"
  exit 75
fi
conn=$2
[ "$conn" -gt 1 ] 2>/dev/null || conn=$3
setsid sh -c 'while kill -0 "$1" 2>/dev/null; do sleep 1 9>&-; done' np-lock "$conn" \
  </dev/null >/dev/null 2>&1 &
pid=$!
printf '%s, since %s (holder pid %s on this node)\n' "$1" "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" \
  "$pid" >"$lock"
echo "locked $pid"
)sh";

}  // namespace

NodeLock::NodeLock(remote::CommandShell& sh, const std::string& node, const std::string& holder)
    : sh_(sh) {
    const auto r = sh_.run(fmt::format("sh -c {} np-lock {} \"$PPID\" \"$$\"",
                                       shell_quote(kLockScript), shell_quote(holder)),
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
        // The holder is ours if it is still the sh running the wait (a recycled PID is not);
        // it leads a session of its own, so its sleep goes with it.
        sh_.run(fmt::format(
            "grep -q np-lock /proc/{0}/cmdline 2>/dev/null && kill -TERM -{0} 2>/dev/null; true",
            pid));
    } catch (const std::exception&) {
        // The session is gone: the holder ends with the connection it watches.
    }
}

UndoStep::UndoStep(remote::CommandShell& sh, const RunState& st, std::string name,
                   const std::string& script)
    : sh_(sh), path_(st.dir + "/" + name + ".undo"), report_(st.cleanup_failed) {
    sh_.check(fmt::format("mkdir -p -m 0700 /run/np-explain {0} {1} && printf '%s\\n' {2} > {3}",
                          shell_quote("/run/np-explain/" + st.node), shell_quote(st.dir),
                          shell_quote(script), shell_quote(path_)));
}

UndoStep::~UndoStep() {
    const std::string failed = run();
    if (!failed.empty() && report_) report_(failed);
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

namespace {

// A shell fragment that runs the undo scripts in the current dir in order, printing "undone:
// NAME" or "failed: NAME" (PREFIX before each name), and sets found=1 if there were any.
std::string undo_here(const std::string& prefix) {
    return fmt::format(
        "for f in *.undo; do [ -e \"$f\" ] || continue; found=1; "
        "if sh \"$f\"; then echo \"undone: {0}${{f%.undo}}\"; rm -f \"$f\"; "
        "else echo \"failed: {0}${{f%.undo}}\"; fi; done",
        prefix);
}

// A shell fragment that removes a run's state dir `dir` (quoted here unless it is a shell
// variable, "$d") when none of its undo scripts is left.
std::string remove_if_undone(const std::string& dir) {
    const std::string d = dir.starts_with("$") ? "\"" + dir + "\"" : shell_quote(dir);
    return fmt::format("ls {0} 2>/dev/null | grep -q '[.]undo$' || rm -rf -- {0};", d);
}

}  // namespace

std::string undo_all(remote::CommandShell& sh, const RunState& st) {
    const std::string node_dir = "/run/np-explain/" + st.node;
    // Once every step is undone, what the dir still holds (PIDs, the server's log) is the
    // run's and goes with it; a step that failed keeps the dir for `teardown`.
    const auto r = sh.run(fmt::format(
        "cd {0} 2>/dev/null || {{ echo 'nothing to undo'; exit 0; }}; found=0; {1}; "
        "[ $found = 1 ] || echo 'nothing to undo'; cd / && {{ {3} }}; rmdir {2} 2>/dev/null; "
        "true",
        shell_quote(st.dir), undo_here(""), shell_quote(node_dir), remove_if_undone(st.dir)));
    return r.out;
}

std::string undo_leftovers(remote::CommandShell& sh, const std::string& node) {
    // Each run's dir in turn (a run's undo steps are ordered within it), then scripts an
    // earlier np-explain left in the node's dir itself.
    const std::string node_dir = "/run/np-explain/" + node;
    const auto r = sh.run(fmt::format(
        "cd {0} 2>/dev/null || {{ echo 'nothing to undo'; exit 0; }}; found=0; "
        "for d in */; do [ -d \"$d\" ] || continue; ( cd \"$d\" && found=0 && {1}; "
        "[ $found = 1 ] ) && found=1; cd {0} && {{ {3} }}; done; {2}; "
        "[ $found = 1 ] || echo 'nothing to undo'; cd / && rmdir {0} 2>/dev/null; true",
        shell_quote(node_dir), undo_here("run ${d%/}: "), undo_here(""), remove_if_undone("$d")));
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

namespace {

// A shell fragment that stops process group $pg while a member's command line matches the
// extended regex `programs` (a recycled id whose members run something else is left alone):
// TERM and CONT (a stopped member would hold TERM), up to 2 s, then KILL and up to 1 s. It
// leaves `ours` defined, for whether anything of the group outlived that.
std::string stop_group_fragment(const std::string& programs) {
    return fmt::format(
        "ours() {{ for p in $(pgrep -g \"$pg\" 2>/dev/null); do "
        "tr '\\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -Eq {0} && return 0; done; "
        "return 1; }}; "
        "if ours; then kill -TERM -$pg 2>/dev/null; kill -CONT -$pg 2>/dev/null; i=0; "
        "while ours && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done; "
        "ours && kill -KILL -$pg 2>/dev/null; i=0; "
        "while ours && [ $i -lt 10 ]; do sleep 0.1; i=$((i+1)); done; fi",
        shell_quote(programs));
}

}  // namespace

std::string stop_group_script(const std::string& pidfile, const std::string& program) {
    return fmt::format(
        "pf={0}; [ -r \"$pf\" ] || exit 0; pg=$(cat \"$pf\"); "
        "case $pg in ''|*[!0-9]*|0|1) rm -f \"$pf\"; exit 0;; esac; {1}; "
        "if ours; then echo \"process group $pg ({2}) did not stop\" >&2; exit 1; fi; "
        "rm -f \"$pf\"; exit 0",
        shell_quote(pidfile), stop_group_fragment(program), program);
}

std::string stop_foreign_group_script(const std::string& pgidfile, const std::string& programs) {
    return fmt::format(
        "f={0}; [ -r \"$f\" ] || exit 0; pg=$(cat \"$f\"); "
        "case $pg in ''|*[!0-9]*|0|1) exit 0;; esac; "
        "[ \"$(ps -o pgid= -p $$ | tr -d ' ')\" = \"$pg\" ] && exit 0; {1}; exit 0",
        shell_quote(pgidfile), stop_group_fragment(programs));
}

// ---------------------------------------------------------------------------------------------

IfaceConfig::IfaceConfig(remote::CommandShell& sh, const RunState& st, const std::string& iface,
                         const std::string& cidr, std::optional<int> mtu, bool keep) {
    const std::string command = "ip -j link show dev " + shell_quote(iface);
    // What is undone comes from this reply: one that does not read as the link's state never
    // drives an undo step (taken for "was down", it would set the data link down at teardown).
    const auto not_read = [&] {
        return EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: `{}` did not print the link's state as JSON; nothing was changed on "
                        "{}",
                        sh.session().name(), command, iface));
    };
    nlohmann::json link;
    try {
        link = parse_json_document(sh.check(command).out, command);
    } catch (const InputError&) {
        throw not_read();
    }
    if (!link.is_array() || link.empty() || !link[0].is_object() || !link[0].contains("flags") ||
        !link[0]["flags"].is_array())
        throw not_read();
    for (const auto& flag : link[0]["flags"])
        if (flag == "UP") was_up_ = true;
    // The MTU to set back: only a number read from the reply (none: the MTU is left alone).
    std::optional<int64_t> mtu_was;
    if (link[0].contains("mtu") && link[0]["mtu"].is_number_integer())
        mtu_was = link[0]["mtu"].get<int64_t>();
    const bool set_mtu = mtu && mtu_was && *mtu_was != *mtu;
    if (mtu && !mtu_was)
        throw EnvironmentError(EnvironmentError::Kind::remote,
                               fmt::format("{}: `{}` did not say {}'s MTU; it was not changed",
                                           sh.session().name(), command, iface));
    const auto addr_line = sh.run(fmt::format("ip -o addr show dev {} to {}", shell_quote(iface),
                                              shell_quote(cidr.substr(0, cidr.find('/')))));
    const bool had_addr = addr_line.exit_status == 0 && !addr_line.out.empty();
    const bool v6 = ip_version_of_address(cidr.substr(0, cidr.find('/'))) == IpVersion::v6;
    // IPv6 removes a link's addresses when it goes down, unless keep_addr_on_down is set (IPv4
    // keeps them): the run's address would not outlive a flap of the link, and every test after
    // it would fail for want of it. Kept for the run, as over IPv4, and set back after.
    const std::string keep_addr = "/proc/sys/net/ipv6/conf/" + iface + "/keep_addr_on_down";
    std::string keep_addr_was;
    if (v6) {
        const auto r = sh.run("cat " + shell_quote(keep_addr));
        if (r.exit_status == 0) keep_addr_was = text::trim(r.out);
    }
    const bool set_keep_addr = !keep_addr_was.empty() && keep_addr_was != "1";
    if (!keep) {
        std::string undo;
        if (!had_addr)
            undo += fmt::format("ip addr del {} dev {} 2>/dev/null; ", shell_quote(cidr),
                                shell_quote(iface));
        if (set_keep_addr)
            undo += fmt::format("echo {} > {} 2>/dev/null; ", shell_quote(keep_addr_was),
                                shell_quote(keep_addr));
        if (set_mtu)
            undo += fmt::format("ip link set dev {} mtu {} 2>/dev/null; ", shell_quote(iface),
                                *mtu_was);
        if (!was_up_) undo += fmt::format("ip link set dev {} down; ", shell_quote(iface));
        undo += "true";
        undo_ = std::make_unique<UndoStep>(sh, st, "40-iface", undo);
    }
    if (set_keep_addr) sh.check(fmt::format("echo 1 > {}", shell_quote(keep_addr)));
    if (set_mtu) sh.check(fmt::format("ip link set dev {} mtu {}", shell_quote(iface), *mtu));
    sh.check(fmt::format("ip link set dev {0} up && ip addr replace {1} dev {0}",
                         shell_quote(iface), shell_quote(cidr)));
    if (!v6) return;
    // Duplicate address detection: one neighbour solicitation and a second's wait by default,
    // after a random delay of up to a second; more with dad_transmits raised. A link without
    // carrier holds the address tentative until it has one: the carrier check names that.
    const auto dad = sh.check(fmt::format(
        "i=0; while [ $i -lt {2} ]; do s=$(ip -o addr show dev {0} to {1}); "
        "case $s in *dadfailed*) echo dad=failed; exit 0;; *tentative*) ;; *) echo dad=done; "
        "exit 0;; esac; [ \"$(cat /sys/class/net/{0}/carrier 2>/dev/null)\" = 1 ] || "
        "{{ echo dad=no-carrier; exit 0; }}; sleep 0.2; i=$((i + 1)); done; echo dad=waiting",
        shell_quote(iface), shell_quote(cidr.substr(0, cidr.find('/'))), kDadWait.count() / 200));
    dad_failed_ = text::trim(dad.out) == "dad=failed";
}

// ---------------------------------------------------------------------------------------------

IperfServer::IperfServer(remote::CommandShell& sh, const RunState& st, int port)
    : sh_(sh), node_(st.node), report_(st.cleanup_failed) {
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
        const std::string unit = "np-iperf3-" + st.run;
        supervisor_ = "systemd unit " + unit;
        undo_ = std::make_unique<UndoStep>(
            sh_, st, "20-server",
            fmt::format("systemctl stop {0} 2>/dev/null; systemctl reset-failed {0} 2>/dev/null; "
                        "true",
                        unit));
        sh_.check(fmt::format("systemd-run --quiet --unit={} --collect {} -s -p {}", unit,
                              shell_quote(bin), port));
        is_alive_cmd_ = fmt::format("systemctl is-active --quiet {} && {}", unit, listening);
        main_pid_cmd_ = fmt::format("systemctl show -p MainPID --value {}", unit);
    } else {
        const std::string pidfile = st.dir + "/iperf3.pid";
        const std::string log = st.dir + "/iperf3.log";
        // The server leads a session of its own: its process group is what it started, a
        // wrapper's child included.
        undo_ = std::make_unique<UndoStep>(
            sh_, st, "20-server",
            "rm -f " + shell_quote(log) + "; " + stop_group_script(pidfile, "iperf3"));
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
        main_pid_cmd_ = "cat " + shell_quote(pidfile);
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
    if (!failed.empty() && report_) report_(failed);
}

bool IperfServer::alive() {
    return sh_.run(is_alive_cmd_).exit_status == 0;
}

std::optional<std::string> IperfServer::stopped() {
    // The state field of /proc/PID/stat, after the command name in parentheses: T when a
    // SIGSTOP holds it, t under a debugger.
    const auto r =
        sh_.run(fmt::format("pid=$({}); case $pid in ''|*[!0-9]*|0) exit 1;; esac; "
                            "state=$(sed -n 's/.*) \\(.\\).*/\\1/p' /proc/$pid/stat 2>/dev/null); "
                            "case $state in T|t) echo \"$pid $state\";; *) exit 1;; esac",
                            main_pid_cmd_));
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
    // tc filters stay attached when the probe that attached them is killed (they belong to the
    // qdisc, not to the process): if its np_tc_* filters are still there once it is stopped,
    // `np-probe --cleanup` removes them, and the clsact if a probe made it (10-probe runs before
    // 30-upload removes the binary).
    const std::string q_iface = shell_quote(iface);
    probe_undo_ = std::make_unique<UndoStep>(
        sh_, state_, "10-probe",
        fmt::format("( {0} ); if tc filter show dev {1} ingress 2>/dev/null | grep -q np_tc_ || "
                    "tc filter show dev {1} egress 2>/dev/null | grep -q np_tc_; then "
                    "{2} --iface {1} --cleanup </dev/null >/dev/null 2>&1; fi; true",
                    stop_pidfile_script(pidfile_, "np-probe"), q_iface, shell_quote(binary_)));
    // $$ is the node's command shell (a subshell's $$ is its parent's): when that shell ends,
    // the probe writes its trace and detaches.
    std::string tiers;
    if (!max_tier.empty()) tiers += " --max-tier " + shell_quote(max_tier);
    if (!require_tier.empty()) tiers += " --require-tier " + shell_quote(require_tier);
    if (cpu_account) tiers += " --cpu-account";
    const auto started = sh_.run(
        fmt::format("{} --iface {} --role {} --node {} --port {} --control {} --out {} "
                    "--pidfile {} --exit-with $$ --background{}",
                    shell_quote(binary_), q_iface, shell_quote(role), shell_quote(node), port,
                    shell_quote(control_), shell_quote(trace_file_), shell_quote(pidfile_), tiers),
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
