// The fault matrix of issue 12: for each phase of `np-explain run` (preflight, configure,
// upload, probe start, ping, tcp, udp, collect, teardown), each fault — SIGINT to np-explain,
// SIGKILL to np-explain (then `np-explain teardown` with the run's arguments), the SSH session
// to node B cut, the iperf3 server killed, the server stopped (SIGSTOP), node A's probe killed
// with SIGKILL, node B's data link set down, the run dir's disk full, a second run on the same
// nodes (refused naming this one, which goes on undisturbed), node B's iperf3 printing without
// end, node A's iperf3 behind a wrapper that does not exec, a second np-probe on node A's data
// port (refused) — injected into the real binary on the local testbed.
// Each cell is held to: the exit status docs/hardening.md documents, a message naming what
// happened, every phase finished so far saved in the run dir, and nothing of the run left on
// either node (no probe, tc filter or clsact, BPF program, iperf3, upload dir, undo script,
// address). The run stops at a phase through its test-only pause hook
// (src/experiment/test_pause.hpp), so no cell depends on timing; the table is printed at the
// end:
//   ctest --test-dir BUILD -R '^faults\.matrix$' -V
#include <gtest/gtest.h>

#include <sys/mount.h>

#include <fstream>
#include <iostream>
#include <map>

#include "tests/faults/tables.hpp"
#include "tests/run/run_helpers.hpp"
#include "tests/testbed/testbed_environment.hpp"

namespace {

using namespace np::testing;
using nlohmann::json;
using std::chrono::seconds;

// The nodes of the testbed this cell was given (tests/testbed/testbed_environment.hpp).
std::string server() {  // node A: iperf3 server
    return testbed().server();
}
std::string client() {  // node B: the client; its session and link are cut
    return testbed().client();
}
const std::string kDataIface = "enp0s25";

const auto* const kTestbed = ::testing::AddGlobalTestEnvironment(
    new np::testing::TestbedEnvironment("/run/np-testbed-fault-matrix", "0"));

const std::vector<std::string>& kPhases = kMatrixPhases;
// In the order of kMatrixFaults, the table's columns (tests/faults/tables.hpp).
enum class Fault {
    sigint,
    sigkill,
    ssh_cut,
    server_killed,
    server_stopped,
    probe_killed,
    link_down,
    disk_full,
    second_run,
    client_flood,
    server_wrapper,
    second_probe,
    undo_fails
};
const std::vector<std::pair<Fault, std::string>> kFaults = {
    {Fault::sigint, "SIGINT"},
    {Fault::sigkill, "SIGKILL+teardown"},
    {Fault::ssh_cut, "SSH to B cut"},
    {Fault::server_killed, "server killed"},
    {Fault::server_stopped, "server stopped"},
    {Fault::probe_killed, "probe killed"},
    {Fault::link_down, "link down"},
    {Fault::disk_full, "disk full"},
    {Fault::second_run, "second run"},
    {Fault::client_flood, "client floods"},
    {Fault::server_wrapper, "server wrapper"},
    {Fault::second_probe, "second probe"},
    {Fault::undo_fails, "undo fails"}};

size_t phase_index(const std::string& phase) {
    return size_t(std::find(kPhases.begin(), kPhases.end(), phase) - kPhases.begin());
}

// What a cell must end with. `exit_status` -1: killed by a signal (SIGKILL).
struct Expected {
    std::string not_applicable;  // why the cell is n/a; empty when it applies
    int exit_status = 0;
    std::string message;  // on stdout or stderr (or teardown's stdout after SIGKILL)
};

Expected not_applicable(std::string why) {
    return {std::move(why), 0, ""};
}

Expected expected(const std::string& phase, Fault fault) {
    const size_t at = phase_index(phase);
    const bool before_server = at < phase_index("ping");
    const bool after_tests = at >= phase_index("collect");
    switch (fault) {
        case Fault::sigint:
            if (after_tests) return {"", 130, "SIGINT arrived during the " + phase + " phase"};
            return {"", 130, "interrupted by SIGINT during the " + phase + " phase"};
        case Fault::sigkill:
            return {"", -1, phase == "preflight" ? "nothing to undo" : "undone: "};
        case Fault::ssh_cut:
            if (phase == "teardown")  // B's undo steps fail; the run's sweep redoes them
                return {"", 0, ""};
            if (phase == "collect") return {"", 0, "No trace from the probe on " + client()};
            return {"", 3, client()};
        case Fault::server_killed:
            if (before_server)
                return not_applicable("no iperf3 server yet: it starts after probe start");
            if (after_tests) return not_applicable("the run has stopped the server already");
            return {"", 1, "the iperf3 server on " + server()};
        case Fault::server_stopped:  // SIGSTOP: alive and listening, it never answers
            if (before_server)
                return not_applicable("no iperf3 server yet: it starts after probe start");
            if (after_tests) return not_applicable("the run has stopped the server already");
            return {"", 3, "is stopped (process "};
        case Fault::second_run:  // refused (checked below); this run goes on undisturbed
            return {"", 0, ""};
        case Fault::client_flood:  // node B's iperf3, from here on, prints without end
            if (at > phase_index("udp")) return not_applicable("no iperf3 client runs any more");
            // Injected earlier, it floods there all the same: a cell that repeats that one.
            if (at < phase_index("tcp"))
                return not_applicable(
                    "the tcp cell's: node B's iperf3 first runs in the tcp phase");
            return {"", 1, "printed more than 16 MiB on stdout"};
        case Fault::server_wrapper:  // node A's iperf3, from here on, a wrapper that does not exec
            if (!before_server) return not_applicable("the server has started already");
            return {"", 0, ""};
        case Fault::second_probe:  // refused (checked below); the run's probe counts on
            if (at < phase_index("probe start") || phase == "teardown")
                return not_applicable("no probe of the run counts at this phase");
            return {"", 0, ""};
        case Fault::undo_fails:  // the server's port undo does its work, then exits 7
            if (phase != "udp")
                return not_applicable(
                    "one phase shows it: the port's undo runs at teardown whenever it changed");
            return {"", 0, "A step of the run could not be undone"};
        case Fault::probe_killed:
            if (phase == "teardown")
                return not_applicable("the run has stopped the probes already (traces collected)");
            if (at < phase_index("probe start"))
                return not_applicable("no probe yet: it starts at probe start");
            return {"", 0, "No trace from the probe on " + server()};
        case Fault::link_down:
            if (phase == "preflight")  // configure brings the link up (and leaves it as found)
                return {"", 0, ""};
            if (phase == "configure") return {"", 1, "no carrier on the data port"};
            if (after_tests) return {"", 0, ""};  // nothing crosses the link any more
            return {"", 3, "the data link " + kDataIface + " went down (no carrier)"};
        case Fault::disk_full:
            return {"", 3, "No space left on device"};
    }
    return not_applicable("?");
}

// ------------------------------------------------------------------ the table

MatrixTable& table() {  // this process's cells
    static MatrixTable t;
    return t;
}

// At the end of the process: under ctest each cell's row is saved for np_fault_tables; run
// directly, the table of every cell it ran is printed.
class PrintTable : public ::testing::Environment {
  public:
    void TearDown() override {
        if (table().empty()) return;
        std::vector<json> rows;
        for (const auto& [cell, o] : table()) rows.push_back(to_json(cell, o));
        if (!save_table_rows("fault-matrix", rows)) print_matrix(table());
    }
};
const auto* const kPrintTable = ::testing::AddGlobalTestEnvironment(new PrintTable);

// ------------------------------------------------------------------ faults and checks

// Kills the process whose PID is in `pidfile` if it runs `program`; false when there is none.
bool kill_from_pidfile(const std::string& pidfile, const std::string& program) {
    const pid_t pid = std::atoi(read_file(pidfile).c_str());
    if (pid <= 1) return false;
    const auto argv = cmdline(pid);
    if (argv.empty() || basename_of(argv[0]) != program) return false;
    return kill(pid, SIGKILL) == 0;
}

// A tmpfs of `size` mounted on a new dir for the cell, unmounted (and the dir removed) by the
// destructor, also when the cell fails.
class SmallTmpfs {
  public:
    explicit SmallTmpfs(const std::string& size) {
        char dir[] = "/tmp/np-fault-matrix-tmpfs-XXXXXX";
        dir_ = mkdtemp(dir);
        mounted_ = mount("np-fault-matrix", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                         ("size=" + size + ",mode=0700").c_str()) == 0;
    }
    ~SmallTmpfs() {
        if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
        rmdir(dir_.c_str());
    }
    bool mounted() const { return mounted_; }
    const std::string& dir() const { return dir_; }
    // Writes a file until the tmpfs is full; true when it ended with ENOSPC.
    bool fill() const {
        const int fd = open((dir_ + "/filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) return false;
        const std::string block(65536, 'x');
        int err = 0;
        for (;;) {
            if (write(fd, block.data(), block.size()) < 0) {
                err = errno;
                break;
            }
        }
        // A partial block may still fit: fill the last bytes one by one.
        while (write(fd, "x", 1) == 1) {
        }
        close(fd);
        return err == ENOSPC;
    }

  private:
    std::string dir_;
    bool mounted_ = false;
};

class FaultMatrix : public ::testing::TestWithParam<std::tuple<std::string, Fault>> {
  protected:
    void SetUp() override { uploads_before_ = uploads(); }
    static std::set<std::string> uploads() {
        return upload_dirs({testbed().tmpdir(server()), testbed().tmpdir(client())});
    }
    std::string ssh_config() const { return testbed().ssh_config(); }
    std::string params() const { return testbed().params(); }
    std::vector<std::string> args(const std::string& command, const std::string& run_dir) const {
        return {command,    server(),         client(),    "--ssh-config", ssh_config(),
                "--params", params(),         "--run-dir", run_dir,        "--tcp-duration",
                "1",        "--udp-duration", "1",         "--ping-count", "1"};
    }

    // Nothing of the run on either node. Waits (event-driven) for what goes away by itself:
    // a probe or iperf3 that notices its lost session, a BPF program the kernel frees late.
    void expect_nodes_clean(std::string& failures) {
        const auto check = [&](const std::string& what, const std::function<std::string()>& left) {
            std::string now;
            if (!wait_until([&] { return (now = left()).empty(); }, seconds(20)))
                failures += what + " left: " + now + "; ";
        };
        // One look per node (its processes, then one shell in its namespace for tc and ip):
        // a cell's leak check costs a few process starts, not a dozen.
        for (const auto& node : {server(), client()}) {
            check(node, [&] {
                std::string left;
                for (const auto& p : node_processes(node)) {
                    const std::string program = basename_of(p.argv[0]);
                    if (program == "np-probe" || program == "iperf3")
                        left += program + " (pid " + std::to_string(p.pid) + ") ";
                }
                const std::string dev = shell_quote(kDataIface);
                const std::string kernel = ns_exec(
                    node, "sh -c " + shell_quote("tc filter show dev " + dev +
                                                 " ingress; tc filter show dev " + dev +
                                                 " egress; tc qdisc show dev " + dev +
                                                 " | grep clsact; ip -o addr show dev " + dev +
                                                 " | grep -F " + testbed().data_net()));
                if (!kernel.empty()) left += "tc/addr: " + kernel;
                const std::string undo = join(run_state_files(node));
                if (!undo.empty()) left += "undo state: " + undo;
                return left;
            });
        }
        check("upload dirs", [&] {
            std::string left;
            for (const auto& d : uploads())
                if (!uploads_before_.count(d)) left += d + " ";
            return left;
        });
        check("BPF programs", [&] {
            std::string left;
            for (const auto& node : {server(), client()})
                for (const auto& p : node_bpf_programs(node)) left += node + ": " + p + " ";
            return left;
        });
    }

    std::set<std::string> uploads_before_;
};

TEST_P(FaultMatrix, EndsClearlySavesWhatWasFinishedAndLeavesNothing) {
    const auto& [phase, fault] = GetParam();
    std::string fault_name;
    for (const auto& [f, name] : kFaults)
        if (f == fault) fault_name = name;
    const Expected want = expected(phase, fault);
    Outcome& outcome = table()[{phase, fault_name}];
    if (!want.not_applicable.empty()) {
        outcome = {"n/a", want.not_applicable, 0};
        GTEST_SKIP() << want.not_applicable;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::string failures;  // every check that did not hold, for the table and the assertion

    // Where the results go: a small tmpfs for the disk-full cells, else a private dir.
    std::unique_ptr<SmallTmpfs> tmpfs;
    std::string run_dir;
    char scratch_template[] = "/tmp/np-fault-matrix-XXXXXX";
    const std::string scratch = mkdtemp(scratch_template);
    struct RemoveAtEnd {
        std::string dir;
        ~RemoveAtEnd() { std::filesystem::remove_all(dir); }
    } remove_scratch{scratch};
    if (fault == Fault::disk_full) {
        tmpfs = std::make_unique<SmallTmpfs>("4m");
        ASSERT_TRUE(tmpfs->mounted()) << "cannot mount a tmpfs on " << tmpfs->dir();
        run_dir = tmpfs->dir();
    } else {
        run_dir = scratch + "/run";
    }
    struct LinkUpAtEnd {  // the testbed as it was, whatever the cell did
        bool armed = false;
        ~LinkUpAtEnd() {
            if (armed) ns_exec(client(), "ip link set dev " + kDataIface + " up");
        }
    } link_up_at_end{fault == Fault::link_down};

    const std::string resume = scratch + "/resume";
    setenv("NP_EXPLAIN_TEST_PAUSE_AT", phase.c_str(), 1);
    setenv("NP_EXPLAIN_TEST_RESUME_FILE", resume.c_str(), 1);
    BackgroundRun run(args("run", run_dir));
    unsetenv("NP_EXPLAIN_TEST_PAUSE_AT");
    unsetenv("NP_EXPLAIN_TEST_RESUME_FILE");
    const std::string pause_line = "np-explain: test pause at " + phase + " ";
    ASSERT_TRUE(wait_until(
        [&] { return !run.running() || run.err_so_far().find(pause_line) != std::string::npos; },
        seconds(120)));
    ASSERT_TRUE(run.running()) << "the run ended before " << phase << ":\n"
                               << run.wait(seconds(1)).out << run.wait(seconds(1)).err;

    // The fault, while the run waits at the phase.
    bool injected = true;
    std::unique_ptr<Iperf3Replaced> replaced;  // a node's iperf3, until the cell ends
    switch (fault) {
        case Fault::sigint:
            run.signal(SIGINT);
            break;
        case Fault::sigkill:
            run.signal(SIGKILL);
            break;
        case Fault::ssh_cut: {
            const auto sshds = session_sshds(testbed_state_dir(), client());
            injected = !sshds.empty();
            for (const pid_t pid : sshds) kill(pid, SIGKILL);
            // Event-driven: B's sshd for the run is gone before the run goes on.
            injected =
                injected &&
                wait_until([&] { return session_sshds(testbed_state_dir(), client()).empty(); },
                           seconds(20));
            break;
        }
        case Fault::server_killed:
            injected = kill_from_pidfile(run_state_file(server(), "iperf3.pid"), "iperf3");
            break;
        case Fault::undo_fails: {
            const std::string undo = run_state_file(server(), "40-iface.undo");
            std::ofstream script(undo, std::ios::app);
            script << "exit 7\n";
            injected = !undo.empty() && script.flush().good();
            break;
        }
        case Fault::server_stopped: {
            const pid_t pid = std::atoi(read_file(run_state_file(server(), "iperf3.pid")).c_str());
            injected =
                pid > 1 && basename_of(cmdline(pid).at(0)) == "iperf3" && kill(pid, SIGSTOP) == 0;
            break;
        }
        case Fault::second_run: {
            // The same nodes, another port and run dir: refused while this run holds them,
            // naming it, with nothing changed on either node.
            std::vector<std::string> second = args("run", scratch + "/second");
            second.insert(second.end(), {"--port", "5202"});
            const CommandResult s2 = np_explain(second);
            const std::string holder = "(np-explain pid " + std::to_string(run.pid()) + ")";
            injected = s2.exit_status == 3 &&
                       (s2.out + s2.err).find("is in use by another run") != std::string::npos &&
                       (s2.out + s2.err).find(holder) != std::string::npos;
            if (!injected)
                failures += "second run: exit " + std::to_string(s2.exit_status) + ": " + s2.out +
                            s2.err + "; ";
            break;
        }
        case Fault::client_flood:
            replaced =
                std::make_unique<Iperf3Replaced>(testbed_state_dir(), client(), kFloodingIperf3);
            injected = replaced->ok();
            break;
        case Fault::server_wrapper:
            replaced =
                std::make_unique<Iperf3Replaced>(testbed_state_dir(), server(), kWrappedIperf3);
            injected = replaced->ok();
            break;
        case Fault::second_probe: {
            // Another np-probe on node A's data port while the run's counts there: it refuses,
            // naming the one counting, and takes nothing over.
            const CommandResult p2 =
                run_command({"ip", "netns", "exec", server(), NP_PROBE_BIN, "--iface", kDataIface,
                             "--role", "server", "--duration", "1"});
            injected =
                p2.exit_status == 3 && p2.err.find("another np-probe (pid ") != std::string::npos;
            if (!injected)
                failures +=
                    "second probe: exit " + std::to_string(p2.exit_status) + ": " + p2.err + "; ";
            break;
        }
        case Fault::probe_killed:
            injected = kill_from_pidfile(run_state_file(server(), "probe.pid"), "np-probe");
            break;
        case Fault::link_down:
            injected = sh("ip netns exec " + client() + " ip link set dev " + kDataIface + " down")
                           .status == 0;
            break;
        case Fault::disk_full:
            injected = tmpfs->fill();
            break;
    }
    EXPECT_TRUE(injected) << "could not inject " << fault_name;
    std::ofstream(resume).put('\n');
    const CommandResult r = run.wait(seconds(180));
    std::string said = r.out + r.err;
    if (r.exit_status == -2) failures += "np-explain did not end within 180 s; ";

    if (fault == Fault::sigkill) {
        // The run's own command line with `teardown` for `run` finishes the job.
        const CommandResult td = np_explain(args("teardown", run_dir));
        if (td.exit_status != 0)
            failures += "teardown exit " + std::to_string(td.exit_status) + ": " + td.err + "; ";
        said = td.out + td.err;
    }
    if (r.exit_status != want.exit_status)
        failures += "exit " + std::to_string(r.exit_status) + ", want " +
                    std::to_string(want.exit_status) + "; ";
    if (said.find(want.message) == std::string::npos)
        failures += "no '" + want.message + "' in what it said; ";

    // Every phase finished before this one is saved: the phases file lists them, and the
    // tests' raw outputs (and, after a SIGKILL, each node's partial trace) are there.
    const json phases = read_json(run_dir + "/np-explain_phases.json");
    const size_t at = phase_index(phase);
    for (size_t i = 0; i < at; ++i) {
        bool listed = false;
        if (phases.is_object())
            for (const auto& f : phases["finished"]) listed = listed || f == kPhases[i];
        if (!listed) failures += "phase " + kPhases[i] + " not saved as finished; ";
    }
    const std::pair<const char*, const char*> raw[] = {{"ping", "np-explain_ping.txt"},
                                                       {"tcp", "np-explain_tcp.json"},
                                                       {"udp", "np-explain_udp.json"}};
    for (const auto& [test, file] : raw)
        if (at > phase_index(test) && !std::filesystem::exists(run_dir + "/" + file))
            failures += std::string(file) + " missing; ";
    if (fault == Fault::sigkill && at >= phase_index("ping")) {
        for (const auto& node : {server(), client()}) {
            const std::string kept = phase == "teardown"
                                         ? "np-explain_trace_" + node + ".json"
                                         : "np-explain_partial-trace_" + node + ".json";
            if (!read_json(run_dir + "/" + kept).is_object()) failures += kept + " missing; ";
        }
    }
    // Nothing half-written: no temp file of the run's atomic saves.
    for (const auto& e : std::filesystem::directory_iterator(run_dir))
        if (e.path().extension() == ".tmp") failures += e.path().filename().string() + " left; ";

    expect_nodes_clean(failures);

    // The message for the table: the run's own words.
    std::string message;
    for (const std::string& line : {r.err, r.out}) {
        const auto stop = line.find("the run stopped early: ");
        if (stop != std::string::npos) {
            message = line.substr(stop + 23, line.find('\n', stop) - stop - 23);
            break;
        }
    }
    if (message.empty() && fault != Fault::sigkill && !want.message.empty() &&
        said.find(want.message) != std::string::npos) {
        const auto at_msg = said.find(want.message);
        const auto bol = said.rfind('\n', at_msg);
        const auto eol = said.find('\n', at_msg);
        message = said.substr(bol == std::string::npos ? 0 : bol + 1,
                              eol == std::string::npos ? std::string::npos : eol - bol - 1);
    }
    if (fault == Fault::sigkill) message = "killed; teardown: " + want.message + "…, exit 0";
    for (const char* tail : {"; partial results saved in", "; all results saved in"})
        if (const auto saved = message.find(tail); saved != std::string::npos)
            message.resize(saved);
    if (message.starts_with("np-explain: ")) message.erase(0, 12);
    if (message.empty()) message = "completed";
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string status = r.exit_status == -1 ? "killed" : std::to_string(r.exit_status);
    outcome = {failures.empty() ? status + " ok" : "FAIL",
               failures.empty() ? message : failures + " [" + message + "]", secs};
    EXPECT_EQ(failures, "") << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
}

std::string cell_name(const ::testing::TestParamInfo<FaultMatrix::ParamType>& info) {
    std::string name = std::get<0>(info.param);
    for (auto& c : name)
        if (c == ' ') c = '_';
    for (const auto& [f, fault] : kFaults)
        if (f == std::get<1>(info.param)) name += "_" + fault;
    std::string out;
    for (const char c : name)
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') out += c;
    return out;
}

INSTANTIATE_TEST_SUITE_P(
    Cells, FaultMatrix,
    ::testing::Combine(::testing::ValuesIn(kPhases),
                       ::testing::Values(Fault::sigint, Fault::sigkill, Fault::ssh_cut,
                                         Fault::server_killed, Fault::server_stopped,
                                         Fault::probe_killed, Fault::link_down, Fault::disk_full,
                                         Fault::second_run, Fault::client_flood,
                                         Fault::server_wrapper, Fault::second_probe,
                                         Fault::undo_fails)),
    cell_name);

}  // namespace
