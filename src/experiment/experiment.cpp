#include "src/experiment/experiment.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "analysis/explanation/ceiling_search.hpp"
#include "analysis/explanation/codes.hpp"
#include "analysis/explanation/contract.hpp"
#include "analysis/explanation/model.hpp"
#include "analysis/explanation/preflight.hpp"
#include "analysis/explanation/repeats.hpp"
#include "analysis/readers/inputs.hpp"
#include "analysis/readers/names.hpp"
#include "analysis/readers/text.hpp"
#include "common/errors.hpp"
#include "common/link_facts.hpp"
#include "common/output_file.hpp"
#include "common/run_dir.hpp"
#include "common/shell_quote.hpp"
#include "common/trace.hpp"
#include "rundir/writer.hpp"
#include "src/experiment/interrupt.hpp"
#include "src/experiment/node.hpp"
#include "src/experiment/node_steps.hpp"
#include "src/experiment/progress.hpp"
#include "src/experiment/test_pause.hpp"
#include "src/remote/command_shell.hpp"
#include "src/remote/session.hpp"

namespace np::experiment {
namespace {

using remote::CommandShell;
using remote::Millis;
using remote::Session;
using Clock = std::chrono::steady_clock;

// What the run collected, whatever point it reached.
struct Record {
    std::vector<Finding> findings;      // preflight and run findings, before the engine's
    std::string ping, tcp, udp;         // raw tool outputs
    std::map<std::string, int> status;  // each raw output's tool's exit status, by file name
    // node -> its probe's trace as the probe handed it over: saved as it is, read once.
    std::vector<std::pair<std::string, nlohmann::json>> traces;
    std::string stopped;  // why the run ended early
    int signal = 0;
    std::string late_signal_phase;  // collect or teardown: a signal came once nothing stops
    bool environment_failed = false;
    bool node_in_use = false;       // refused before touching either node: nothing to undo
    std::optional<int> speed_mbps;  // node A's data link as sysfs states it
    std::optional<int> mtu_bytes;   // and its MTU
    std::optional<CeilingSearch> udp_ceiling;  // run --find-udp-ceiling, once it started
    std::string udp_ceiling_not_searched;      // why it could not start
    struct Repetition {  // run --repeat: the tests' outputs of repetition 2, 3, …
        int number = 2;
        std::string tcp, udp;
    };
    std::vector<Repetition> repetitions;
    std::string command_log;  // every command run on the nodes, with status and stderr
};

// Pauses here under the test hook (test_pause.hpp); a signal that arrived meanwhile stops the
// run at this point like one that arrived during the phase's work.
void pause_point(const std::string& phase) {
    test_pause_point(phase);
    throw_if_interrupted("the " + phase + " phase");
}

std::unique_ptr<Session> connect(const RunOptions& o, const std::string& node) {
    remote::SessionOptions so;
    so.host = node;
    so.ssh_config = o.ssh_config;
    so.host_keys =
        o.accept_new_host_keys ? remote::HostKeyPolicy::accept_new : remote::HostKeyPolicy::strict;
    return std::make_unique<Session>(so);
}

// A node as the run uses it: the SSH session, one shell on it for the short commands, the run's
// own state dir there, and the node's lock once taken.
struct Node {
    std::string name;
    RunState st;
    std::unique_ptr<Session> ssh;
    std::unique_ptr<CommandShell> sh;  // rides on ssh: released first
    std::unique_ptr<NodeLock> lock;    // rides on sh: released before it

    void close() {
        lock.reset();
        sh.reset();
        ssh.reset();
    }
};

void log_commands(const Node& n, std::string& out) {
    if (!n.sh) return;
    out += fmt::format("# {}\n", n.name);
    for (const auto& e : n.sh->log()) {
        out += fmt::format("[{:.3f} s] exit {}: {}\n", e.seconds, e.exit_status, e.command);
        if (!e.err.empty()) {
            std::string err = e.err;
            while (!err.empty() && err.back() == '\n') err.pop_back();
            out += "    stderr: " + err + "\n";
        }
    }
}

// `run`: the run's id, for its state dir on the node; empty for `teardown`.
// `report`: where its undo steps that fail are said.
Node open_node(const RunOptions& o, const std::string& name, const std::string& run,
               CleanupReport report) {
    Node n{name, run_state(name, run, std::move(report)), connect(o, name), nullptr, nullptr};
    n.sh = std::make_unique<CommandShell>(*n.ssh);
    n.sh->define(std::string(node_steps_script()));
    return n;
}

// Runs the two nodes' parts of a step at once (their sessions are independent). Both finish
// before either's exception is rethrown, so what one built is still torn down by its owner.
template <class FA, class FB>
auto on_both(FA for_a, FB for_b) {
    auto b = std::async(std::launch::async, for_b);
    std::exception_ptr failed;
    decltype(for_a()) ra{};
    try {
        ra = for_a();
    } catch (...) {
        failed = std::current_exception();
    }
    auto rb = b.get();
    if (failed) std::rethrow_exception(failed);
    return std::pair{std::move(ra), std::move(rb)};
}

// With -C: the congestion controls the kernel has, and whether a module provides `name`
// (np_tcp_congestion: [a-z0-9_], safe in a command). The kernel loads it on iperf3's setsockopt.
std::string congestion_probe(const std::string& name) {
    if (name.empty()) return {};
    return fmt::format(
        "; echo cc=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null); "
        "if {{ modinfo tcp_{0} || ls /lib/modules/$(uname -r)/kernel/net/ipv4/tcp_{0}.ko*; }} "
        ">/dev/null 2>&1; then echo ccmod=1; else echo ccmod=0; fi",
        name);
}

NodeFacts gather_node_facts(CommandShell& s, const std::string& node, const std::string& role,
                            const Params& p) {
    const std::string iface = shell_quote(p.data_iface);
    const auto kv = text::key_values(
        s.run(fmt::format(
                  "if [ -e {0} ]; then echo marker=1; else echo marker=0; fi; "
                  "if [ -d /sys/class/net/{1} ]; then echo iface=1; else echo iface=0; fi; "
                  "echo mac=$(cat /sys/class/net/{1}/address 2>/dev/null); "
                  "echo ifaces=$(ls /sys/class/net | grep -vx lo | tr '\\n' ' '); "
                  "if command -v iperf3 >/dev/null; then echo iperf3=1; else echo iperf3=0; fi; "
                  "if command -v ping >/dev/null; then echo ping=1; else echo ping=0; fi; "
                  "echo ipv6=$(cat /proc/sys/net/ipv6/conf/{1}/disable_ipv6 2>/dev/null || "
                  "{{ [ -d /proc/sys/net/ipv6 ] || echo kernel; }}){2}",
                  shell_quote(p.image_marker), iface, congestion_probe(p.congestion)))
            .out);
    NodeFacts n;
    n.node = node;
    n.role = role;
    n.iface = p.data_iface;
    n.image_marker = p.image_marker;
    n.image_marker_present = kv.count("marker") && kv.at("marker") == "1";
    n.iface_exists = kv.count("iface") && kv.at("iface") == "1";
    n.ifaces = text::words(kv.count("ifaces") ? kv.at("ifaces") : "");
    n.iperf3_present = kv.count("iperf3") && kv.at("iperf3") == "1";
    n.ping_present = kv.count("ping") && kv.at("ping") == "1";
    n.mac = kv.count("mac") ? text::lower(text::trim(kv.at("mac"))) : "";
    n.data_ip = role == "server" ? p.server_ip : p.client_ip;
    n.congestion = p.congestion;
    if (!p.congestion.empty()) {
        n.congestion_available = kv.count("cc") ? std::string(text::trim(kv.at("cc"))) : "";
        const auto have = text::words(n.congestion_available);
        n.congestion_present = std::find(have.begin(), have.end(), p.congestion) != have.end() ||
                               (kv.count("ccmod") && kv.at("ccmod") == "1");
    }
    if (ip_version_of_address(n.data_ip) == IpVersion::v6 && kv.count("ipv6")) {
        const std::string_view v = text::trim(kv.at("ipv6"));
        n.ipv6_disabled = v == "1";
        n.kernel_without_ipv6 = v == "kernel";
    }
    return n;
}

// After the link is up: carrier (a NIC takes a few seconds to negotiate), speed, duplex, MTU
// and driver, from the sysfs files np-probe reads too (common/link_facts.hpp).
void gather_link_facts(CommandShell& s, NodeFacts& n) {
    namespace file = sysfs_link;
    const auto kv = text::key_values(
        s.run(fmt::format(
                  "d={dir}; i=0; while [ $i -lt 50 ]; do c=$(cat \"$d/{carrier}\" 2>/dev/null); "
                  "[ \"$c\" = 1 ] && break; sleep 0.1; i=$((i+1)); done; echo {carrier}=$c; "
                  "for f in {speed} {duplex} {mtu}; do "
                  "echo \"$f=$(cat \"$d/$f\" 2>/dev/null)\"; done; "
                  "echo \"{driver}=$(readlink \"$d/{driver}\" 2>/dev/null)\"; "
                  "printf 'others='; for p in {net}*; do b=${{p##*/}}; "
                  "[ \"$b\" = lo ] || [ \"$b\" = {iface} ] && continue; "
                  "[ \"$(cat \"$p/{carrier}\" 2>/dev/null)\" = 1 ] && printf '%s ' \"$b\"; "
                  "done; echo",
                  fmt::arg("dir", std::string(kSysClassNet) + shell_quote(n.iface)),
                  fmt::arg("iface", shell_quote(n.iface)), fmt::arg("net", kSysClassNet),
                  fmt::arg("carrier", file::kCarrier), fmt::arg("speed", file::kSpeed),
                  fmt::arg("duplex", file::kDuplex), fmt::arg("mtu", file::kMtu),
                  fmt::arg("driver", file::kDriver)),
              Millis(20000))
            .out);
    const auto get = [&](std::string_view k) {
        const auto it = kv.find(std::string(k));
        return it != kv.end() ? it->second : std::string();
    };
    const LinkState link =
        parse_link_state({get(file::kCarrier), get(file::kSpeed), get(file::kDuplex),
                          get(file::kMtu), get(file::kDriver)});
    n.carrier = link.carrier;
    n.speed_mbps = link.speed_mbps;
    n.duplex = link.duplex;
    n.mtu_bytes = link.mtu_bytes;
    n.driver = link.driver;
    n.ports_with_carrier = text::words(get("others"));
}

// Whether node A's data iface already holds `ip` (a testbed or a user that configured it, or
// --keep-iface from an earlier run): then its own answers are expected.
bool holds_address(CommandShell& a, const std::string& iface, const std::string& ip) {
    const auto r =
        a.run(fmt::format("ip -o addr show dev {} to {}", shell_quote(iface), shell_quote(ip)),
              Millis(15000));
    return r.exit_status == 0 && !text::trim(r.out).empty();
}

// A command printing "lladdr=MAC" of the neighbour entry of the server's address on the data
// iface: the MAC that answered for it, empty when none did.
std::string echo_lladdr(const Params& p) {
    return fmt::format(
        "echo lladdr=$(ip neigh show {1} dev {0} | "
        "awk '{{for (i = 1; i < NF; i++) if ($i == \"lladdr\") print $(i + 1)}}')",
        shell_quote(p.data_iface), shell_quote(p.server_ip));
}

// The MAC in `kv`'s lladdr line, lower case; empty when none answered.
std::string answered_mac(const std::map<std::string, std::string>& kv) {
    return kv.count("lladdr") ? text::lower(text::trim(kv.at("lladdr"))) : "";
}

// The MAC that answers for the server's address on the client's data iface (its neighbour
// entry after one ping), lower case; empty when none did.
std::string who_answers(CommandShell& b, const Params& p) {
    const auto kv = text::key_values(
        b.run(fmt::format("ip neigh flush to {1} dev {0} 2>/dev/null; "
                          "ping -c 1 -W 1 -I {0} {1} >/dev/null 2>&1; "
                          "{2}",
                          shell_quote(p.data_iface), shell_quote(p.server_ip), echo_lladdr(p)),
              Millis(15000))
            .out);
    return answered_mac(kv);
}

// The client's ping to the server's address over the data iface, from a fresh neighbour entry:
// the address check before it (who_answers) leaves the entry INCOMPLETE when nobody held the
// address then, and the kernel would hold this ping until its next ARP retry, a second later.
PathFacts check_path(CommandShell& b, const Params& p) {
    const auto kv = text::key_values(
        b.run(fmt::format("ip neigh flush to {1} dev {0} 2>/dev/null; "
                          "if ping -c 1 -W 2 -I {0} {1} >/dev/null 2>&1; then echo ping=1; else "
                          "echo ping=0; fi; "
                          "echo neigh=$(ip neigh show {1} dev {0} | awk '{{print $NF}}'); "
                          "{2}",
                          shell_quote(p.data_iface), shell_quote(p.server_ip), echo_lladdr(p)),
              Millis(15000))
            .out);
    PathFacts path;
    path.client_iface = p.data_iface;
    path.server_ip = p.server_ip;
    path.ping_answered = kv.count("ping") && kv.at("ping") == "1";
    path.neighbour_state = kv.count("neigh") ? kv.at("neigh") : "";
    path.neighbour_mac = answered_mac(kv);
    return path;
}

bool has_error(const std::vector<Finding>& findings) {
    return exit_status_for(findings) != 0;
}

void append(std::vector<Finding>& to, std::vector<Finding> from) {
    for (auto& f : from) to.push_back(std::move(f));
}

// The data link as the runner watches it during a phase: whether it has its carrier now, and the
// error that stops the run when it has not come back.
struct LinkWatch {
    std::function<bool()> carrier;
    std::function<EnvironmentError(const std::string& how)> down;
};

// How long the data link may be without its carrier during a phase before the run stops: a
// shorter outage (a cable reseated, a switch port flapping) the tool rides out, and the probes'
// carrier count says it happened (LINK_WENT_DOWN) beside what it cost.
constexpr Millis kLinkDownGrace{5000};
// How long a server that still runs may take to be ready for the next test
// (Measurement::server_ready).
constexpr Millis kServerReadyWait{60000};

// The interval of the ping beside each test, in seconds: the shortest ping allows a user who is
// not root, five echoes a second — 50 over a 10 s test, a few hundred bytes a second beside it.
constexpr const char* kLoadedPingInterval = "0.2";

// A client command of a phase, and what to watch while it runs.
struct ClientRun {
    std::string command;
    double expected_s = 0;  // the test's own length
    std::string phase;
    RemoteProbe* rate_probe = nullptr;  // on the other node, whose shell is free meanwhile
    IperfServer* server = nullptr;      // watched for a stopped (SIGSTOPped) server
    // How many per-interval reports the tool prints side by side (iperf3: one per stream and
    // direction), which its output may grow by.
    int reports = 1;
};

// What a client command printed (its stderr when it printed nothing else) and its exit status.
struct ClientResult {
    std::string out;
    int status = 0;
};

// What run_client looks at while the command runs, each at its own interval: the live wire
// rate for the progress line, the server, the data link and the phase's deadline. Each check
// throws what stops the phase.
class PhaseWatch {
  public:
    PhaseWatch(const ClientRun& run, const std::string& node, const LinkWatch& link,
               Progress& progress)
        : run_(run), node_(node), link_(link), progress_(progress) {}

    void tick() {
        throw_if_interrupted("the " + run_.phase + " phase");
        if (progress_.enabled() && run_.rate_probe && Clock::now() >= next_rate_) {
            rate_ = run_.rate_probe->rate_bps();
            next_rate_ = Clock::now() + Millis(500);
        }
        if (run_.server && Clock::now() >= next_server_check_) check_server();
        if (Clock::now() >= next_link_check_) check_link();
        progress_.update(run_.phase, std::chrono::duration<double>(Clock::now() - t0_).count(),
                         run_.expected_s, rate_);
        if (Clock::now() > deadline_) {
            throw EnvironmentError(EnvironmentError::Kind::timeout,
                                   fmt::format("{}: the {} phase did not finish within {:.0f} s",
                                               node_, run_.phase, run_.expected_s + 30));
        }
    }

    // Once the command ended: a tool that failed at once on a link that went down says only
    // "unreachable", so the link check names the cause. A link that went down near the phase's
    // end has the rest of the grace to come back before the next phase needs it.
    void link_back() {
        if (!down_) down_since_ = Clock::now();
        while (!link_.carrier()) {
            if (Clock::now() - down_since_ >= kLinkDownGrace)
                throw link_.down(
                    fmt::format("for {} s at the end of the phase", kLinkDownGrace.count() / 1000));
            throw_if_interrupted("the " + run_.phase + " phase");
            std::this_thread::sleep_for(Millis(250));
        }
    }

  private:
    // Stopped (SIGSTOP), the server keeps listening and the client waits on it until the
    // phase's deadline; it is named at the second look that finds it so.
    void check_server() {
        const auto stopped = run_.server->stopped();
        server_stopped_looks_ = stopped ? server_stopped_looks_ + 1 : 0;
        if (server_stopped_looks_ >= 2)
            throw EnvironmentError(
                EnvironmentError::Kind::remote,
                fmt::format("the iperf3 server on {} ({}) is stopped (process {}: state T is a "
                            "SIGSTOP, t a debugger): it holds the test's connection and never "
                            "answers",
                            run_.server->node(), run_.server->supervisor(), *stopped));
        next_server_check_ = Clock::now() + Millis(2000);
    }

    void check_link() {
        const bool was_down = down_;
        down_ = !link_.carrier();
        if (down_ && !was_down) down_since_ = Clock::now();
        if (down_ && Clock::now() - down_since_ >= kLinkDownGrace)
            throw link_.down(fmt::format("for {} s", kLinkDownGrace.count() / 1000));
        next_link_check_ = Clock::now() + Millis(500);
    }

    const ClientRun& run_;
    const std::string node_;
    const LinkWatch& link_;
    Progress& progress_;
    const Clock::time_point t0_ = Clock::now();
    const Clock::time_point deadline_ =
        t0_ + std::chrono::milliseconds(static_cast<int64_t>((run_.expected_s + 30) * 1000));
    Clock::time_point next_rate_ = t0_;
    Clock::time_point next_link_check_ = t0_ + Millis(500);
    Clock::time_point next_server_check_ = t0_ + Millis(2000);
    int server_stopped_looks_ = 0;
    bool down_ = false;  // at the last check, since down_since_
    Clock::time_point down_since_{};
    std::optional<double> rate_;
};

// Runs a client command in node B's shell while showing progress. Throws Interrupted, or
// EnvironmentError on a dead session, a hung tool or a data link down for kLinkDownGrace
// (during the phase or past its end) — stopping the command first.
ClientResult run_client(Node& b, const ClientRun& run, const LinkWatch& link, Progress& progress) {
    ClientResult r;
    PhaseWatch watch(run, b.ssh->name(), link, progress);
    try {
        // A tool's output grows with its test (iperf3 -J: about 1 KiB per interval and stream).
        b.sh->begin(run.command, remote::kMaxOutputBytes +
                                     static_cast<size_t>(std::max(0.0, run.expected_s)) * 4096 *
                                         static_cast<size_t>(std::max(1, run.reports)));
        while (!b.sh->finished()) {
            // The lines that have come, then the watch: a tool printing a flood of short lines
            // is stopped by its bytes (the bound above), not slowed by a check between each two.
            const auto until = Clock::now() + Millis(20);
            Millis wait(100);
            while (const auto line = b.sh->read_line(wait)) {
                r.out += *line;
                r.out += '\n';
                wait = Millis(0);
                if (Clock::now() >= until) break;
            }
            watch.tick();
        }
    } catch (...) {
        b.sh->abort();  // stops the tool too: it runs in the shell's process group
        throw;
    }
    progress.clear();
    watch.link_back();
    r.status = b.sh->exit_status();
    if (r.out.empty() && !b.sh->err().empty()) r.out = b.sh->err();
    return r;
}

// Node A's data port, watched for its carrier: lost when its own link is set down, or (a veth,
// a direct cable) the other end's. Read on A, whose shell is free while B runs the tools.
LinkWatch watch_link(Node& a, const std::string& iface) {
    return {[&a, iface] {
                SysfsLinkText text;
                text.carrier =
                    a.sh->run(fmt::format("cat {}{}/{} 2>/dev/null || echo 0", kSysClassNet,
                                          shell_quote(iface), sysfs_link::kCarrier),
                              Millis(15000))
                        .out;
                return parse_link_state(text).carrier;
            },
            [&a, iface](const std::string& how) {
                return EnvironmentError(EnvironmentError::Kind::remote,
                                        fmt::format("{}: the data link {} went down (no carrier) "
                                                    "and was still down {}",
                                                    a.ssh->name(), iface, how));
            }};
}

// The client's command for a test: iperf3's options as every mode makes them from the params.
std::string iperf3_command(const Params& p, Transport t) {
    std::string command = "iperf3 -c " + shell_quote(p.server_ip);
    for (const auto& word : iperf3_client_options(p, t)) command += " " + word;
    return command;
}

// The model's UDP goodput ceiling for the ceiling search: the fixed UDP test's result on the
// link as the explanation takes it (node A's MTU). Empty, with why, when there is no link rate
// (nothing bounds the search then) or the UDP test gave no result.
struct SearchStart {
    std::optional<double> ceiling_bps;
    std::string why_not;
};
// What a tool's output holds, its tests held to `phase` (empty: the one named after their
// transport): nothing when the tool failed (its exit status is not 0, or none was recorded) or
// what it printed does not read as its output.
Measurements results_of(const std::string& output, const Record& rec, const std::string& file,
                        const std::string& phase = {}) {
    const auto status = rec.status.find(file);
    if (output.empty() || status == rec.status.end() || status->second != 0) return {};
    try {
        Measurements m = parse_measurements(output, file);
        for (auto& t : m.throughput) t.phase = phase;
        return m;
    } catch (const InputError&) {
        return {};
    }
}

SearchStart search_ceiling(const RunOptions& o, const Record& rec) {
    const auto link = resolve_link_bps(o.link_bps, o.params.link_rate_bps, rec.speed_mbps);
    if (!link) return {std::nullopt, "the link rate is unknown"};
    for (const auto& t :
         results_of(rec.udp, rec, run_dir::output(o.mode, run_dir::kUdp)).throughput)
        if (t.transport == Transport::udp)
            if (const auto model = model_for(t, *link, rec.mtu_bytes))
                return {model->udp.goodput_bps, {}};
    return {std::nullopt, "the fixed UDP test gave no result to start from"};
}

// One step of the search as its output reads: the UDP test it holds, in the step's phase, or
// none when the tool failed or printed no UDP result.
CeilingStep ceiling_step(const std::string& output, const Record& rec, double offered_bps,
                         const std::string& phase, const std::string& file) {
    CeilingStep step{offered_bps, phase, file, std::nullopt};
    for (auto& t : results_of(output, rec, file, phase).throughput)
        if (t.transport == Transport::udp) {
            step.test = std::move(t);
            break;
        }
    return step;
}

// Phases with the probes and the server running. Any fault here is recorded, not thrown, so
// the probes can still hand over their traces before teardown. Each test's output and each
// node's closed phases are saved as soon as they exist.
class Measurement {
  public:
    Measurement(Node& a, Node& b, const RunOptions& o, Record& rec, Progress& progress,
                RunDirWriter& dir)
        : a_(a), b_(b), o_(o), p_(o.params), rec_(rec), progress_(progress), dir_(dir) {}

    void run() {
        upload_probes();
        start_probes();
        try {
            run_tests();
        } catch (const Interrupted& e) {
            rec_.stopped = e.what();
            rec_.signal = interrupt_signal();
        } catch (const remote::OutputTooLarge& e) {
            tool_printed_too_much(e);
        } catch (const EnvironmentError& e) {
            rec_.stopped = fmt::format("{} (during the {} phase)", e.what(), phase_);
            rec_.environment_failed = true;
        }
        progress_.clear();
        collect();
    }

  private:
    // The client tools run on node B with their PIDs recorded, so that a run killed mid-test
    // leaves `teardown` a client to stop before the server and the address it talks to go
    // (else it can hang past its test, writing to a path that no longer answers); and with the
    // process group of B's command shell, where the clients run: a teardown after the run was
    // killed (from a shell of its own, in another group) stops whatever of the client is left
    // there, whatever the pidfiles say. The undo step goes with the tests.
    class Clients {
      public:
        explicit Clients(Node& b)
            : dir_(b.st.dir),
              undo_(*b.sh, b.st, "05-client",
                    fmt::format("{}; {}; {}", shell_join({"np_stop_pid", pid_file("ping"), "ping"}),
                                shell_join({"np_stop_pid", pid_file("iperf3"), "iperf3"}),
                                shell_join({"np_stop_foreign_group", dir_ + "/shell.pgid",
                                            "iperf3|ping"}))) {
            b.sh->check(fmt::format("ps -o pgid= -p $$ | tr -d ' ' > {}",
                                    shell_quote(dir_ + "/shell.pgid")));
        }
        // `command` run so that its PID is in the tool's pidfile.
        std::string recorded(const std::string& tool, const std::string& command) const {
            return fmt::format("sh -c {}",
                               shell_quote(fmt::format("echo $$ > {}; exec {}",
                                                       shell_quote(pid_file(tool)), command)));
        }

      private:
        std::string pid_file(const std::string& tool) const {
            return fmt::format("{}/client-{}.pid", dir_, tool);
        }
        std::string dir_;
        UndoStep undo_;
    };

    // A node whose probe cannot be uploaded or started is measured without it: the tools'
    // numbers are never lost to the probe (unless --require-tier asks for one).
    void without_probe(const std::string& node, const std::string& why) {
        Finding f = make_finding("PROBE_NOT_STARTED");
        f.title = fmt::format("No probe on {}: measured with the tools alone", node);
        f.detail = fmt::format(
            "{}. The tests ran as without np-explain; what only the probe measures on {} (what "
            "crossed its NIC, its drops and retransmits) is unknown.",
            why, node);
        f.evidence = {{"node", node}, {"error", why}};
        rec_.findings.push_back(std::move(f));
    }
    bool remote_fault_spares_the_run(const EnvironmentError& e) const {
        return o_.require_tier.empty() && e.kind() == EnvironmentError::Kind::remote;
    }

    void upload_probes() {
        dir_.begin("upload");
        if (!o_.no_probe) {
            progress_.step(fmt::format("uploading np-probe to {} and {}", o_.node_a, o_.node_b));
            const auto upload = [&](Node& n, const std::string& node,
                                    std::unique_ptr<RemoteProbe>& to) {
                try {
                    to = std::make_unique<RemoteProbe>(*n.sh, n.st, o_.probe_binary);
                } catch (const EnvironmentError& e) {
                    if (!remote_fault_spares_the_run(e)) throw;
                    without_probe(node,
                                  fmt::format("np-probe could not be uploaded: {}", e.what()));
                }
                return 0;
            };
            on_both([&] { return upload(a_, o_.node_a, pa_); },
                    [&] { return upload(b_, o_.node_b, pb_); });
        }
        pause_point("upload");
        dir_.done("upload");
    }

    void start_probes() {
        dir_.begin("probe start");
        if (pa_ || pb_)
            progress_.step(fmt::format("starting the probes on {} and {}", o_.node_a, o_.node_b));
        const auto start = [&](std::unique_ptr<RemoteProbe>& probe, const char* role,
                               const std::string& node) {
            if (!probe) return 0;
            try {
                probe->start(p_.data_iface, role, p_.port, o_.probe_tier, o_.require_tier,
                             o_.cpu_account);
            } catch (const EnvironmentError& e) {
                if (!remote_fault_spares_the_run(e)) throw;
                without_probe(node, e.what());
                probe.reset();  // its undo steps run now
            }
            return 0;
        };
        on_both([&] { return start(pa_, "server", o_.node_a); },
                [&] { return start(pb_, "client", o_.node_b); });
        pause_point("probe start");
        dir_.done("probe start");
    }

    void save_partial_traces() {
        for (RemoteProbe* probe : {pa_.get(), pb_.get()}) {
            if (!probe || probe->closed_phases().empty()) continue;
            const nlohmann::json partial = {
                {"schema", "np-partial-trace/1"},
                {"node", probe->node()},
                {"note",
                 "the phases this node's probe had closed when the run last saved; its whole "
                 "np-trace/1 trace replaces this file once the probe hands it over"},
                {"phases", probe->closed_phases()}};
            dir_.save(run_dir::partial_trace(o_.mode, probe->node()), partial.dump(2) + "\n");
        }
    }

    void announce(const std::string& name) {
        phase_ = name;
        dir_.begin(name);
        on_both([&] { return pa_ && pa_->phase(name); }, [&] { return pb_ && pb_->phase(name); });
        save_partial_traces();
        pause_point(name);
    }

    bool server_gone() {
        if (server_->runs()) return false;
        rec_.stopped =
            fmt::format("the iperf3 server on {} ({}) is gone", o_.node_a, server_->supervisor());
        return true;
    }

    // Waits, before a test, until the server can take it (IperfServer::ready): a server held to
    // a sliver of a CPU once took long enough to open its listening socket again that the run
    // called it gone, and a client let in before its last test's connections were closed was
    // reset. False, with why, once its process is gone or after kServerReadyWait.
    bool server_ready(const std::string& phase) {
        const auto since = Clock::now();
        while (!server_->ready()) {
            if (server_gone()) return false;
            if (Clock::now() - since >= kServerReadyWait) {
                rec_.stopped = fmt::format(
                    "the iperf3 server on {} ({}) runs but was not ready for a new test within "
                    "{} s: not listening on port {}, or still holding the last test's "
                    "connections",
                    o_.node_a, server_->supervisor(), kServerReadyWait.count() / 1000, p_.port);
                return false;
            }
            throw_if_interrupted("the " + phase + " phase");
            std::this_thread::sleep_for(Millis(200));
        }
        return true;
    }

    // One iperf3 test in a probe phase of its own: announced, run, its output saved as it ends.
    // False once the server is gone: the run stops there.
    bool iperf_test(const std::string& name, const Params& q, Transport t, const std::string& file,
                    std::string& out) {
        if (!server_ready(name)) return false;
        announce(name);
        phase_file_ = file;
        if (server_gone()) return false;  // gone while the phase was announced
        const int seconds = t == Transport::tcp ? q.tcp_duration_s : q.udp_duration_s;
        // Beside the test, ping on the same path: its echoes, which the probes stamp on both
        // nodes, are the round trip under load, split by the stage it was spent in
        // (analysis/explanation/latency.hpp). Its own output is not kept: the stamps time it.
        // It stops with the test, or by its deadline should the test's shell be cut.
        const std::string loaded_ping = clients_->recorded(
            "ping", fmt::format("ping -q -i {} -w {} -I {} {}", kLoadedPingInterval, seconds + 2,
                                shell_quote(q.data_iface), shell_quote(q.server_ip)));
        const ClientRun run{
            fmt::format("{} >/dev/null 2>&1 & {}; s=$?; kill $! 2>/dev/null; exit $s", loaded_ping,
                        clients_->recorded("iperf3", iperf3_command(q, t))),
            static_cast<double>(seconds),
            name,
            pa_.get(),
            server_.get(),
            q.parallel * (q.direction == Direction::bidir ? 2 : 1)};
        auto result = run_client(b_, run, *link_, progress_);
        out = std::move(result.out);
        rec_.status[file] = result.status;
        dir_.save(file, out);
        if (server_gone()) return false;
        dir_.done(name);
        return true;
    }

    // Ping, then the TCP and UDP tests, their repetitions and the ceiling search.
    void run_tests() {
        phase_ = "server start";
        server_ = std::make_unique<IperfServer>(*a_.sh, a_.st, p_.port);
        const LinkWatch link = watch_link(a_, p_.data_iface);
        link_ = &link;
        const Clients clients(b_);
        clients_ = &clients;
        progress_.step(fmt::format("starting the iperf3 server on {}", o_.node_a));
        announce("ping");
        // -W 2: where no echo is answered at all (ICMP filtered), ping waits 2 s after its last
        // request, not its default 10; a reply on a data link comes in well under that.
        const std::string ping_file = run_dir::output(o_.mode, run_dir::kPing);
        const ClientRun ping{
            clients.recorded("ping",
                             fmt::format("ping -c {} -W 2 -I {} {}", p_.ping_count,
                                         shell_quote(p_.data_iface), shell_quote(p_.server_ip))),
            static_cast<double>(p_.ping_count), "ping", pa_.get()};
        auto result = run_client(b_, ping, link, progress_);
        rec_.ping = std::move(result.out);
        rec_.status[ping_file] = result.status;
        dir_.save(ping_file, rec_.ping);
        dir_.done("ping");
        // Each step runs only while the server is there.
        if (iperf_test("tcp", p_, Transport::tcp, run_dir::output(o_.mode, run_dir::kTcp),
                       rec_.tcp) &&
            iperf_test("udp", p_, Transport::udp, run_dir::output(o_.mode, run_dir::kUdp),
                       rec_.udp) &&
            repeat_tests())
            search_udp_ceiling();
    }

    // --repeat: the tests again, each repetition in phases tcp-K and udp-K.
    bool repeat_tests() {
        for (int k = 2; k <= p_.repeat; ++k) {
            Record::Repetition& r = rec_.repetitions.emplace_back();
            r.number = k;
            for (const auto t : {Transport::tcp, Transport::udp}) {
                const std::string name =
                    fmt::format("{}-{}", t == Transport::tcp ? "tcp" : "udp", k);
                std::string& out = t == Transport::tcp ? r.tcp : r.udp;
                if (!iperf_test(name, p_, t, run_dir::output(o_.mode, name + ".json"), out))
                    return false;
            }
        }
        return true;
    }

    // --find-udp-ceiling: short UDP tests at the loads the search picks, each its own phase.
    void search_udp_ceiling() {
        if (!p_.find_udp_ceiling) return;
        const SearchStart start = search_ceiling(o_, rec_);
        rec_.udp_ceiling_not_searched = start.why_not;
        if (start.ceiling_bps) rec_.udp_ceiling.emplace(*start.ceiling_bps, p_.ceiling_loss_pct);
        while (rec_.udp_ceiling) {
            const auto rate = rec_.udp_ceiling->next();
            if (!rate) break;
            const std::string name =
                fmt::format("udp-ceiling-{}", rec_.udp_ceiling->steps().size() + 1);
            const std::string file = run_dir::output(o_.mode, name + ".json");
            Params step = p_;
            // Rounded down: a load rounded up past the model's ceiling would be "above" it.
            step.udp_bandwidth = fmt::format("{:.0f}", std::floor(*rate / p_.parallel));
            step.udp_duration_s = kCeilingStepSeconds;
            std::string out;
            const bool going = iperf_test(name, step, Transport::udp, file, out);
            rec_.udp_ceiling->record(ceiling_step(out, rec_, *rate, name, file));
            if (!going) return;
        }
    }

    // The tool was stopped: its test is a tool error, and nothing of what it printed is kept
    // (none of it can be a result).
    void tool_printed_too_much(const remote::OutputTooLarge& e) {
        Finding f = make_finding("TOOL_ERROR", phase_file_);
        f.title = fmt::format("The {} test's tool printed past what a run keeps: stopped", phase_);
        f.detail = fmt::format(
            "{}. A tool's output is held to {} MiB and 4 KiB per second of its test, lines to "
            "{} MiB and its errors to {} MiB: more is never a result, but a tool or a node gone "
            "wrong (a wrapper, a debug build, a loop).",
            e.what(), remote::kMaxOutputBytes >> 20, remote::kMaxLineBytes >> 20,
            remote::kMaxErrBytes >> 20);
        f.evidence = {{"node", o_.node_b}, {"exceeded", e.exceeded()}};
        f.next_step = fmt::format(
            "Run the same command by hand on {} and look at what it prints (which iperf3 or "
            "ping is first in PATH, an alias or a wrapper); then run again.",
            o_.node_b);
        rec_.findings.push_back(std::move(f));
        rec_.stopped = fmt::format("{} (during the {} phase)", e.what(), phase_);
    }

    // From here on nothing stops the run early: the traces are collected and everything is
    // undone whatever happens; a save that fails is said and the run goes on.
    void try_save(const std::function<void()>& save) {
        try {
            save();
        } catch (const EnvironmentError& e) {
            if (rec_.stopped.empty()) rec_.stopped = e.what();
            rec_.environment_failed = true;
        }
    }
    void note_late_signal(const char* phase) {
        if (!rec_.signal && interrupt_signal() && rec_.late_signal_phase.empty())
            rec_.late_signal_phase = phase;
    }

    void collect() {
        if (server_) server_->stop();
        try_save([&] { dir_.begin("collect"); });
        test_pause_point("collect");
        note_late_signal("collect");
        for (RemoteProbe* probe : {pa_.get(), pb_.get()})
            if (probe) collect_trace(*probe);
        try_save([&] {
            dir_.done("collect");
            dir_.begin("teardown");
        });
        test_pause_point("teardown");
        note_late_signal("teardown");
    }

    void collect_trace(RemoteProbe& probe) {
        const std::string partial = run_dir::partial_trace(o_.mode, probe.node());
        nlohmann::json trace;
        try {
            trace = probe.stop(Millis(10000));
        } catch (const std::exception& e) {
            trace_missing(probe.node(), e.what(), partial);
            return;
        }
        try_save([&] {
            dir_.save(run_dir::trace(o_.mode, probe.node()), trace.dump(2) + "\n");
            dir_.remove(partial);
        });
        rec_.traces.emplace_back(probe.node(), std::move(trace));
    }

    void trace_missing(const std::string& node, const std::string& why,
                       const std::string& partial) {
        Finding f = make_finding("TRACE_MISSING");
        f.title = fmt::format("No trace from the probe on {}", node);
        f.detail = fmt::format("The probe on {} handed over no trace: {}.", node, why);
        if (dir_.saved(partial))
            f.detail += fmt::format(" The phases it had closed before are in {}.", partial);
        f.evidence = {{"node", node}};
        rec_.findings.push_back(std::move(f));
    }

    Node& a_;
    Node& b_;
    const RunOptions& o_;
    const Params& p_;
    Record& rec_;
    Progress& progress_;
    RunDirWriter& dir_;
    // Destroyed in reverse: the server before the probes, each undoing its own steps.
    std::unique_ptr<RemoteProbe> pa_, pb_;
    std::unique_ptr<IperfServer> server_;
    std::string phase_ = "upload";
    std::string phase_file_ = run_dir::output(o_.mode, run_dir::kPing);  // the phase's output
    // run_tests()' own, for the tests it runs (unused once it returns).
    const LinkWatch* link_ = nullptr;
    const Clients* clients_ = nullptr;
};

void measure(Node& a, Node& b, const RunOptions& o, Record& rec, Progress& progress,
             RunDirWriter& dir) {
    Measurement(a, b, o, rec, progress, dir).run();
}

// Preflight: both nodes' facts, judged. None when a finding stops the run (`rec.stopped`).
std::optional<std::pair<NodeFacts, NodeFacts>> preflight(Node& a, Node& b, const RunOptions& o,
                                                         Record& rec, Progress& progress,
                                                         RunDirWriter& dir) {
    dir.begin("preflight");
    pause_point("preflight");
    progress.step("preflight: checking both nodes");
    auto facts = on_both([&] { return gather_node_facts(*a.sh, o.node_a, "server", o.params); },
                         [&] { return gather_node_facts(*b.sh, o.node_b, "client", o.params); });
    append(rec.findings, node_findings(facts.first));
    append(rec.findings, node_findings(facts.second));
    if (has_error(rec.findings)) {
        rec.stopped = "preflight failed";
        return std::nullopt;
    }
    throw_if_interrupted("the preflight phase");
    dir.done("preflight");
    return facts;
}

// Each node's data port as the run configured it; each undoes itself when it is destroyed.
struct ConfiguredPorts {
    std::unique_ptr<IfaceConfig> server;
    std::unique_ptr<IfaceConfig> client;
};

// Stops the run (`rec.stopped`, and the findings) when `findings` hold an error. True if so.
bool stops_on(std::vector<Finding> findings, Record& rec, const std::string& why) {
    append(rec.findings, std::move(findings));
    if (!has_error(rec.findings)) return false;
    rec.stopped = why;
    return true;
}

// Both data ports configured with their addresses (and the MTU), then their links checked.
// None when another host holds an address or a port has no carrier (`rec.stopped`).
std::optional<ConfiguredPorts> configure(Node& a, Node& b, const RunOptions& o, Record& rec,
                                         Progress& progress, NodeFacts& fa, NodeFacts& fb) {
    const Params& p = o.params;
    progress.step(fmt::format("configuring {} on both nodes", p.data_iface));
    // The client first, and before the server takes its address, whether another host on the
    // segment already answers for it (duplicate address detection, as arping -D does, with the
    // client's own ARP or neighbour discovery): once the server holds it too, whichever answers
    // first wins each ARP, and the client's neighbour table shows only the winner.
    ConfiguredPorts ports;
    bool server_holds = false;
    std::tie(server_holds, ports.client) =
        on_both([&] { return holds_address(*a.sh, p.data_iface, p.server_ip); },
                [&] {
                    auto config = std::make_unique<IfaceConfig>(
                        *b.sh, b.st, p.data_iface, fmt::format("{}/{}", p.client_ip, p.prefix_len),
                        p.mtu, o.keep_iface);
                    gather_link_facts(*b.sh, fb);
                    return config;
                });
    const std::string taken = "preflight failed: another host holds the server's data address";
    if (ports.client->dad_failed()) {
        append(rec.findings,
               dad_failed_findings(o.node_b, p.data_iface, p.client_ip, /*server=*/false));
        rec.stopped = "preflight failed: another host holds the client's data address";
        return std::nullopt;
    }
    if (!server_holds && fb.carrier.value_or(false) &&
        stops_on(address_taken_findings(who_answers(*b.sh, p), p.server_ip, fa, fb), rec, taken))
        return std::nullopt;
    ports.server = std::make_unique<IfaceConfig>(*a.sh, a.st, p.data_iface,
                                                 fmt::format("{}/{}", p.server_ip, p.prefix_len),
                                                 p.mtu, o.keep_iface);
    if (ports.server->dad_failed()) {
        append(rec.findings,
               dad_failed_findings(o.node_a, p.data_iface, p.server_ip, /*server=*/true));
        rec.stopped = taken;
        return std::nullopt;
    }
    pause_point("configure");
    gather_link_facts(*a.sh, fa);
    rec.speed_mbps = fa.speed_mbps;
    rec.mtu_bytes = fa.mtu_bytes;
    std::vector<Finding> carrier = carrier_findings(fa);
    append(carrier, carrier_findings(fb));
    if (stops_on(std::move(carrier), rec, "preflight failed: no carrier on the data port"))
        return std::nullopt;
    append(rec.findings, link_findings(fa, fb));
    return ports;
}

void preflight_and_measure(Node& a, Node& b, const RunOptions& o, Record& rec, Progress& progress,
                           RunDirWriter& dir) {
    auto facts = preflight(a, b, o, rec, progress, dir);
    if (!facts) return;
    dir.begin("configure");
    const auto ports = configure(a, b, o, rec, progress, facts->first, facts->second);
    if (!ports) return;
    throw_if_interrupted("the configure phase");
    progress.step(fmt::format("checking the data path {} -> {}", o.node_b, o.params.server_ip));
    if (stops_on(path_findings(check_path(*b.sh, o.params), facts->first, facts->second), rec,
                 "preflight failed: the data path does not connect the nodes"))
        return;
    throw_if_interrupted("the configure phase");
    dir.done("configure");
    measure(a, b, o, rec, progress, dir);
}

// Whatever the scope-based teardown could not undo (a session that dropped), from a fresh
// session; what cannot be reached is said.
// An undo step that failed: what it printed, and the command that finishes the job.
Finding undo_failed(const RunOptions& o, const std::string& what) {
    Finding f = make_finding("UNDO_FAILED");
    f.title = "A step of the run could not be undone";
    f.detail = fmt::format("{}. What it was to undo may still be on the node.", what);
    f.evidence = {{"error", what}};
    f.next_step = fmt::format("np-explain teardown {} {}", o.node_a, o.node_b);
    return f;
}

void sweep(const RunOptions& o, Node& n, Record& rec) {
    try {
        if (n.sh) {
            undo_all(*n.sh, n.st);
            return;
        }
    } catch (const std::exception&) {
    }
    try {
        // The run's own state dir only: another run may hold the node by now.
        Node fresh = open_node(o, n.name, n.st.run, n.st.cleanup_failed);
        undo_all(*fresh.sh, n.st);
    } catch (const std::exception& e) {
        Finding f = make_finding("TEARDOWN_INCOMPLETE");
        f.title = fmt::format("Could not clean up {}", n.name);
        f.detail = fmt::format("{} could not be reached to undo what the run started there: {}",
                               n.name, e.what());
        f.evidence = {{"node", n.name}};
        f.next_step =
            fmt::format("np-explain teardown {} {} once the node is reachable", o.node_a, o.node_b);
        rec.findings.push_back(std::move(f));
    }
}

// Something the run produced that the analyzer could not read: said, not fatal.
Finding unreadable(const char* code, std::string title, const InputError& e,
                   std::pair<std::string, std::string> what) {
    Finding f = make_finding(code);
    f.title = std::move(title);
    f.detail = fmt::format("{}: {}", e.field(), e.what());
    f.evidence = {{what.first, what.second}};
    return f;
}

}  // namespace

namespace {

// A node the run cannot use: an error finding, and nothing done on either node.
void refuse_node(Record& rec, const char* code, const std::string& node, std::string title,
                 std::string detail, const char* next_step) {
    Finding f = make_finding(code);
    f.title = std::move(title);
    f.detail = std::move(detail);
    f.evidence = {{"node", node}};
    f.next_step = next_step;
    rec.findings.push_back(std::move(f));
    rec.environment_failed = true;
}

// Connects to both nodes at once; each one not reached is NODE_UNREACHABLE. True when both were.
bool reach_nodes(const RunOptions& o, Node& a, Node& b, Record& rec) {
    const auto reach = [&](Node& n) -> std::string {
        try {
            n = open_node(o, n.name, n.st.run, n.st.cleanup_failed);
            return {};
        } catch (const EnvironmentError& e) {
            return e.what();
        }
    };
    auto [why_a, why_b] = on_both([&] { return reach(a); }, [&] { return reach(b); });
    for (const auto& [node, why] : {std::pair{o.node_a, why_a}, std::pair{o.node_b, why_b}})
        if (!why.empty())
            refuse_node(rec, "NODE_UNREACHABLE", node, fmt::format("Cannot use {}", node), why,
                        "Check the node is powered on (omf tell on), the name in your ssh_config "
                        "and its host key.");
    return a.sh && b.sh;
}

// Holds each node for this run before anything is touched on it: a node another run holds is
// NODE_IN_USE, naming the holder, and nothing is done on either. True when both are held.
bool lock_nodes(const RunOptions& o, Node& a, Node& b, Record& rec) {
    const std::string holder = lock_holder("run", a.st.run);
    const auto lock = [&](Node& n) -> std::string {
        try {
            n.lock = std::make_unique<NodeLock>(*n.sh, n.name, holder);
            return {};
        } catch (const NodeInUse& e) {
            return e.what();
        }
    };
    // One node after the other, in the order of their names: two runs started at once on the
    // same nodes then meet at the same first node, and one of them gets both (locked both at
    // once, each could take one and refuse the other's).
    Node& first = a.name < b.name ? a : b;
    Node& second = a.name < b.name ? b : a;
    std::string held_first = lock(first), held_second;
    if (held_first.empty()) {
        held_second = lock(second);
        if (!held_second.empty()) first.lock.reset();
    }
    const std::string& held_a = &first == &a ? held_first : held_second;
    const std::string& held_b = &first == &a ? held_second : held_first;
    for (const auto& [node, why] : {std::pair{o.node_a, held_a}, std::pair{o.node_b, held_b}}) {
        if (why.empty()) continue;
        refuse_node(rec, "NODE_IN_USE", node, fmt::format("{} is in use by another run", node),
                    why +
                        ". Nothing was changed on either node: two runs on one node would "
                        "disturb each other's numbers and undo each other's changes.",
                    "Wait for the other run to end (the lock goes with its np-explain, however "
                    "that ends), or choose other nodes.");
        rec.node_in_use = true;
    }
    return held_a.empty() && held_b.empty();
}

// Connects to both nodes (an unreachable one is a finding), then preflight and the phases.
// What stops the run (a signal, a lost node) is recorded in `rec`, never thrown.
void connect_and_measure(const RunOptions& o, Node& a, Node& b, Record& rec, Progress& progress,
                         RunDirWriter& dir) {
    try {
        progress.step(fmt::format("connecting to {} and {}", o.node_a, o.node_b));
        if (!reach_nodes(o, a, b, rec)) {
            rec.stopped = "a node could not be reached";
            return;
        }
        progress.step(fmt::format("locking {} and {} for this run", o.node_a, o.node_b));
        if (!lock_nodes(o, a, b, rec)) {
            rec.stopped = "a node is in use by another run";
            return;
        }
        preflight_and_measure(a, b, o, rec, progress, dir);
    } catch (const Interrupted& e) {
        rec.stopped = e.what();
        rec.signal = interrupt_signal();
    } catch (const EnvironmentError& e) {
        rec.stopped = e.what();
        rec.environment_failed = true;
    }
}

// Undoes everything on the nodes we reached and closes them. Returns a note when a signal came
// once nothing checked for it any more (collecting, tearing down): the run finished those
// steps as it would have anyway; the exit status still says it came.
std::string leave_nodes(const RunOptions& o, Node& a, Node& b, Record& rec) {
    on_both([&] { return a.ssh ? (sweep(o, a, rec), 0) : 0; },
            [&] { return b.ssh ? (sweep(o, b, rec), 0) : 0; });
    log_commands(a, rec.command_log);
    log_commands(b, rec.command_log);
    a.close();
    b.close();
    if (rec.signal || !interrupt_signal()) return {};
    rec.signal = interrupt_signal();
    return fmt::format(
        "{} arrived during the {} phase; the run finished collecting and tearing down",
        signal_name(rec.signal),
        rec.late_signal_phase.empty() ? "teardown" : rec.late_signal_phase);
}

// The tools' raw outputs under their run-dir names.
using RawOutputs = std::array<std::pair<const std::string*, std::string>, 3>;
RawOutputs raw_outputs(const Record& rec, const std::string& mode) {
    return {{{&rec.ping, run_dir::output(mode, run_dir::kPing)},
             {&rec.tcp, run_dir::output(mode, run_dir::kTcp)},
             {&rec.udp, run_dir::output(mode, run_dir::kUdp)}}};
}

// Why a test's output is not its result though it reads as one, or empty: its tool died by a
// signal or exited with a status that means failure (ping: 0, or 1 when no reply came; iperf3:
// 0), without saying why in its output; or it holds another test's result.
std::string not_its_result(const Measurements& m, int status, bool ping,
                           std::optional<Transport> test) {
    const char* tool = ping ? "ping" : "iperf3";
    const auto name = [](Transport t) { return t == Transport::udp ? "UDP" : "TCP"; };
    if (status > 128) return fmt::format("{} was killed by {}", tool, signal_name(status - 128));
    const bool failed = ping ? status != 0 && status != 1 : status != 0;
    if (failed && m.failures.empty())
        return fmt::format("{} exited with status {} without saying why", tool, status);
    if (test)
        for (const auto& t : m.throughput)
            if (t.transport != *test)
                return fmt::format("the {} test's output is a {} result", name(*test),
                                   name(t.transport));
    return {};
}

// What the tools and the probes recorded, read; what cannot be read is a finding, not fatal.
ExplainInput read_evidence(const RawOutputs& raw, Record& rec) {
    ExplainInput in;
    for (const auto& [text, name] : raw) {
        if (text->empty()) continue;
        try {
            Measurements m = parse_measurements(*text, name);
            const std::optional<Transport> test = text == &rec.udp   ? std::optional(Transport::udp)
                                                  : text == &rec.tcp ? std::optional(Transport::tcp)
                                                                     : std::nullopt;
            // The run knows which test failed even when the tool's error does not say.
            for (auto& f : m.failures)
                if (!f.transport) f.transport = test.value_or(Transport::tcp);
            // A tool that died or failed is a tool error whatever it printed.
            const auto status = rec.status.find(name);
            if (const std::string why = not_its_result(
                    m, status == rec.status.end() ? 0 : status->second, text == &rec.ping, test);
                !why.empty()) {
                Finding f = make_finding("TOOL_ERROR", name);
                f.title = fmt::format("{}: its output is not taken as a result", why);
                f.detail = fmt::format(
                    "{} ({}). What it printed is kept in the run dir, but a tool that died or "
                    "failed, or an output of another test, says nothing this test measured.",
                    why, name);
                f.evidence = {{"file", name},
                              {"exit_status", status == rec.status.end() ? 0 : status->second}};
                f.next_step =
                    "Run the tool by hand on the client node and look at how it ends (its exit "
                    "status, dmesg for a crash, which binary is first in PATH); then run again.";
                rec.findings.push_back(std::move(f));
                continue;
            }
            in.measurements.append(std::move(m));
        } catch (const InputError& e) {
            rec.findings.push_back(unreadable("TOOL_OUTPUT_UNREADABLE",
                                              fmt::format("Could not read {}", name), e,
                                              {"file", name}));
        }
    }
    for (const auto& [node, doc] : rec.traces) {
        try {
            in.traces.push_back(parse_trace(doc));
        } catch (const InputError& e) {
            rec.findings.push_back(unreadable("TRACE_UNREADABLE",
                                              fmt::format("Could not read the trace from {}", node),
                                              e, {"node", node}));
        }
    }
    return in;
}

// A repetition of the tests (run --repeat), explained on its own: its outputs held against its
// own phases (tcp-K, udp-K) of the run's traces. A test whose tool failed has no row.
Explanation explain_repetition(const Record::Repetition& r, const std::string& mode,
                               const Record& rec, const ExplainInput& run) {
    ExplainInput in;
    in.link_bps = run.link_bps;
    in.traces = run.traces;
    for (const auto& [text, kind] : {std::pair{&r.tcp, "tcp"}, std::pair{&r.udp, "udp"}}) {
        const std::string phase = fmt::format("{}-{}", kind, r.number);
        in.measurements.append(
            results_of(*text, rec, run_dir::output(mode, phase + ".json"), phase));
    }
    return explain(in);
}

Finding run_incomplete(const RunOptions& o, const Record& rec) {
    Finding f = make_finding("RUN_INCOMPLETE");
    f.title = "The run did not complete";
    f.detail = fmt::format(
        "The run stopped early: {}. What was measured before that is saved and explained below.",
        rec.stopped);
    f.evidence = {{"stopped", rec.stopped}};
    if (rec.environment_failed && !rec.node_in_use)
        f.next_step = fmt::format(
            "Check the nodes, then run 'np-explain teardown {} {}' if anything was left behind.",
            o.node_a, o.node_b);
    return f;
}

// The run dir: what was not saved as it came, then the explanation and the contract. Returns
// why saving failed (exit 3), empty when it did not; what was saved before stays.
std::string save_results(const RunOptions& o, const RawOutputs& raw, const Record& rec,
                         const Measurements& measured, RunDirWriter& dir, RunOutcome& out) {
    try {
        for (const auto& [text, name] : raw)
            if (!text->empty() && !dir.saved(name)) dir.save(name, *text);
        std::vector<std::string> trace_files;
        for (const auto& [node, doc] : rec.traces) {
            trace_files.push_back(run_dir::trace(o.mode, node));
            if (!dir.saved(trace_files.back())) dir.save(trace_files.back(), doc.dump(2) + "\n");
        }
        if (!rec.command_log.empty()) dir.save(run_dir::commands_log(o.mode), rec.command_log);
        dir.save(run_dir::findings(o.mode), to_json(out.explanation).dump(2) + "\n");
        const auto contract = build_contract(o.mode, o.node_a, o.node_b, measured, out.explanation,
                                             trace_files, out.explanation.link_bps);
        out.contract_path = dir.save(run_dir::contract(o.mode), contract.dump(2) + "\n");
        if (dir.current() == "teardown") dir.done("teardown");
        dir.save_phases(rec.stopped.empty() ? "complete" : "stopped", rec.stopped);
        return {};
    } catch (const EnvironmentError& e) {
        out.contract_path.reset();
        return e.what();
    }
}

}  // namespace

RunOutcome run_experiment(const RunOptions& o) {
    check_mode_name(o.mode, "--mode");
    if (o.node_a == o.node_b) throw InputError("NODE_B", "the two nodes must differ");
    InterruptGuard guard;
    // Before anything is touched on a node: a run dir that cannot be made stops the run here.
    RunDirWriter dir(o.run_dir, o.mode);
    dir.save_phases("running");
    Progress progress(o.progress);
    Record rec;
    const std::string run = new_run_id();
    // An undo step that failed (both nodes' may run at once) is a finding of the run.
    std::mutex cleanup_mutex;
    const CleanupReport cleanup_failed = [&](const std::string& what) {
        const std::lock_guard<std::mutex> hold(cleanup_mutex);
        rec.findings.push_back(undo_failed(o, what));
    };
    Node a{o.node_a, run_state(o.node_a, run, cleanup_failed), nullptr, nullptr, nullptr},
        b{o.node_b, run_state(o.node_b, run, cleanup_failed), nullptr, nullptr, nullptr};
    connect_and_measure(o, a, b, rec, progress, dir);
    progress.clear();
    RunOutcome out;
    out.note = leave_nodes(o, a, b, rec);

    // Analysis: the tools' outputs against the model, then the traces.
    const RawOutputs raw = raw_outputs(rec, o.mode);
    ExplainInput in = read_evidence(raw, rec);
    const Measurements measured = in.measurements;
    in.link_bps = resolve_link_bps(o.link_bps, o.params.link_rate_bps, rec.speed_mbps);
    out.explanation = explain(in);
    if (!rec.repetitions.empty()) {
        std::vector<Repetition> reps{{1, out.explanation}};
        for (const auto& r : rec.repetitions)
            reps.push_back({r.number, explain_repetition(r, o.mode, rec, in)});
        auto found = repeat_findings(reps);
        mark_flipped_verdicts(found, out.explanation.verdicts);
        for (auto& f : found) out.explanation.findings.push_back(std::move(f));
    }
    if (rec.udp_ceiling) {
        out.explanation.findings.push_back(udp_ceiling_finding(*rec.udp_ceiling, in));
    } else if (!rec.udp_ceiling_not_searched.empty()) {
        out.explanation.findings.push_back(udp_ceiling_not_searched(rec.udp_ceiling_not_searched));
    }
    if (!rec.stopped.empty()) rec.findings.push_back(run_incomplete(o, rec));
    out.explanation.findings.insert(out.explanation.findings.begin(), rec.findings.begin(),
                                    rec.findings.end());
    out.stopped = rec.stopped;

    const std::string save_failed = save_results(o, raw, rec, measured, dir, out);
    if (!save_failed.empty() && out.stopped.empty()) out.stopped = save_failed;
    out.files = dir.files();

    if (rec.signal) {
        out.exit_status = 128 + rec.signal;
    } else if (rec.environment_failed || !save_failed.empty()) {
        out.exit_status = 3;
    } else {
        out.exit_status = exit_status_for(out.explanation.findings);
    }
    return out;
}

TeardownOutcome teardown_nodes(const std::string& node_a, const std::string& node_b,
                               const std::string& ssh_config) {
    RunOptions o;
    o.ssh_config = ssh_config;
    const std::string holder = lock_holder("teardown", new_run_id());
    std::atomic<bool> held{false};
    // Both nodes at once: each login may be slow (a node's shell start files), and the nodes
    // are independent. Each report is kept whole and printed in the nodes' order. A node is
    // held while its leftovers are undone, so none of them is a live run's: a node another
    // run holds is left alone.
    const auto undo = [&](const std::string& node) -> std::pair<bool, std::string> {
        try {
            std::string failed;  // undo steps of its own that failed (teardown makes none)
            Node n = open_node(
                o, node, "", [&failed](const std::string& what) { failed += "  " + what + "\n"; });
            try {
                n.lock = std::make_unique<NodeLock>(*n.sh, node, holder);
            } catch (const NodeInUse& e) {
                held = true;
                return {false, fmt::format("{}: nothing undone: {}; that run undoes what it "
                                           "started when it ends\n",
                                           node, e.what())};
            }
            const std::string done = undo_leftovers(*n.sh, node);
            std::string report = fmt::format("{}:\n", node);
            size_t start = 0;
            while (start < done.size()) {
                size_t end = done.find('\n', start);
                if (end == std::string::npos) end = done.size();
                if (end > start) report += "  " + done.substr(start, end - start) + "\n";
                start = end + 1;
            }
            return {true, report + failed};
        } catch (const EnvironmentError& e) {
            return {false, fmt::format("{}: not reached: {}\n", node, e.what())};
        }
    };
    const auto [a, b] = on_both([&] { return undo(node_a); }, [&] { return undo(node_b); });
    return {a.second + b.second, a.first && b.first, held};
}

}  // namespace np::experiment
