#pragma once
// Helpers of the `np-explain run` integration tests: run the real binary (in the foreground,
// or in the background to interrupt it), and look at the testbed's nodes from the root
// namespace the way an operator would (processes, tc, addresses, files) — read-only, except
// where a test makes a fault on purpose.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/run_command.hpp"

extern char** environ;

namespace np::testing {

inline nlohmann::json read_json(const std::filesystem::path& path) {
    return nlohmann::json::parse(read_file(path), nullptr, false);
}

// The per-connection sshd processes serving np-explain on `node` of the testbed in `state_dir`:
// the testbed sshd's descendants that are sshd themselves (the shells and tools they started are
// left to notice the lost connection, as on a real node).
inline std::vector<pid_t> session_sshds(const std::string& state_dir, const std::string& node) {
    const pid_t listener = std::atoi(read_file(state_dir + "/" + node + "/sshd.pid").c_str());
    std::vector<pid_t> out;
    if (listener <= 1) return out;
    std::vector<pid_t> parents = {listener};
    while (!parents.empty()) {
        const std::string p = std::to_string(parents.back());
        parents.pop_back();
        std::istringstream children(read_file("/proc/" + p + "/task/" + p + "/children"));
        for (pid_t child; children >> child;) {
            std::error_code ec;
            const auto exe =
                std::filesystem::read_symlink("/proc/" + std::to_string(child) + "/exe", ec);
            if (ec || exe.filename() != "sshd") continue;
            out.push_back(child);
            parents.push_back(child);
        }
    }
    return out;
}

// Polls `done` every 50 ms until it holds or `timeout` passes; returns whether it held.
inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

// np-explain running in the background (stdin /dev/null, stdout and stderr to files), so a
// test can signal it or break something under it. Killed (SIGKILL) if still running when
// destroyed.
class BackgroundRun {
  public:
    explicit BackgroundRun(std::vector<std::string> args) {
        char dir[] = "/tmp/np-run-test-XXXXXX";
        dir_ = mkdtemp(dir);
        args.insert(args.begin(), NP_EXPLAIN_BIN);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, (dir_ + "/out").c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_addopen(&fa, 2, (dir_ + "/err").c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&fa);
        start_ = std::chrono::steady_clock::now();
    }
    ~BackgroundRun() {
        if (pid_ > 0 && !result_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        std::filesystem::remove_all(dir_);
    }
    BackgroundRun(const BackgroundRun&) = delete;
    BackgroundRun& operator=(const BackgroundRun&) = delete;

    pid_t pid() const { return pid_; }
    bool running() {
        if (pid_ <= 0 || result_) return false;
        int st = 0;
        if (waitpid(pid_, &st, WNOHANG) == pid_) {
            finish(st);
            return false;
        }
        return true;
    }
    void signal(int sig) const {
        if (pid_ > 0) kill(pid_, sig);
    }
    // Waits for it to exit; on timeout kills it and returns exit_status -2.
    CommandResult wait(std::chrono::seconds timeout) {
        if (!wait_until([this] { return !running(); }, timeout)) {
            kill(pid_, SIGKILL);
            int st = 0;
            waitpid(pid_, &st, 0);
            finish(st);
            result_->exit_status = -2;
        }
        return *result_;
    }
    double seconds() const { return seconds_; }
    // What it printed on stderr so far (while it runs: to wait for a line).
    std::string err_so_far() const { return read_file(dir_ + "/err"); }

  private:
    void finish(int st) {
        seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        CommandResult r;
        r.exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        r.out = read_file(dir_ + "/out");
        r.err = read_file(dir_ + "/err");
        result_ = r;
    }
    std::string dir_;
    pid_t pid_ = -1;
    std::chrono::steady_clock::time_point start_;
    double seconds_ = 0;
    std::optional<CommandResult> result_;
};

// ------------------------------------------------------------------ what is on a node

struct NodeProcess {
    pid_t pid;
    std::vector<std::string> argv;
};

inline std::vector<std::string> cmdline(pid_t pid) {
    std::vector<std::string> argv;
    const std::string raw = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    size_t start = 0;
    while (start < raw.size()) {
        size_t end = raw.find('\0', start);
        if (end == std::string::npos) end = raw.size();
        argv.push_back(raw.substr(start, end - start));
        start = end + 1;
    }
    return argv;
}

// Processes inside a node's network namespace (`ip netns pids`), zombies left out.
inline std::vector<NodeProcess> node_processes(const std::string& node) {
    std::vector<NodeProcess> out;
    std::istringstream pids(sh("ip netns pids " + shell_quote(node)).out);
    for (pid_t pid; pids >> pid;) {
        const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
        const auto close = stat.rfind(") ");
        if (close == std::string::npos || stat.compare(close + 2, 1, "Z") == 0) continue;
        auto argv = cmdline(pid);
        if (!argv.empty()) out.push_back({pid, std::move(argv)});
    }
    return out;
}

inline std::string basename_of(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

inline bool has_arg(const NodeProcess& p, const std::string& arg) {
    for (const auto& a : p.argv)
        if (a == arg) return true;
    return false;
}

// Processes of `program` (argv[0]'s base name) on the node, as "pid argv..." lines.
inline std::vector<std::string> programs(
    const std::string& node, const std::string& program,
    const std::function<bool(const NodeProcess&)>& also = nullptr) {
    std::vector<std::string> out;
    for (const auto& p : node_processes(node)) {
        if (basename_of(p.argv[0]) != program) continue;
        if (also && !also(p)) continue;
        std::string line = std::to_string(p.pid);
        for (const auto& a : p.argv) line += " " + a;
        out.push_back(line);
    }
    return out;
}

inline bool is_iperf3_server(const NodeProcess& p) {
    return has_arg(p, "-s");
}
inline bool is_iperf3_client(const NodeProcess& p) {
    return has_arg(p, "-c");
}
inline bool is_udp(const NodeProcess& p) {
    return has_arg(p, "-u");
}

inline std::string ns_exec(const std::string& node, const std::string& command) {
    return sh("ip netns exec " + shell_quote(node) + " " + command).out;
}

// What np-explain keeps in a node's state dir, every run's (/run/np-explain/<node>/<run>/: undo
// scripts, PIDs; /run is shared by the testbed's namespaces): nothing, once the runs ended.
inline std::vector<std::string> run_state_files(const std::string& node) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator("/run/np-explain/" + node, ec))
        if (!e.is_directory()) out.push_back(e.path().string());
    return out;
}

// A file the live run keeps in its state dir on `node` (iperf3.pid, probe.pid): the newest
// one, should a run that was not cleaned up have left its own; empty when there is none.
inline std::string run_state_file(const std::string& node, const std::string& name) {
    std::error_code ec;
    std::string newest;
    std::filesystem::file_time_type when{};
    for (const auto& e : std::filesystem::directory_iterator("/run/np-explain/" + node, ec)) {
        const auto file = e.path() / name;
        if (!e.is_directory() || !std::filesystem::exists(file)) continue;
        const auto t = std::filesystem::last_write_time(file, ec);
        if (newest.empty() || t > when) newest = file.string(), when = t;
    }
    return newest;
}

// The private upload dirs np-explain made in these nodes' TMPDIRs (the testbed gives each
// node its own: Testbed::tmpdir), so another testbed's run is never counted.
inline std::set<std::string> upload_dirs(const std::vector<std::string>& node_tmpdirs) {
    std::set<std::string> out;
    for (const auto& dir : node_tmpdirs) {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec))
            if (e.path().filename().string().starts_with("np-explain."))
                out.insert(e.path().string());
    }
    return out;
}

// BPF programs of the probe (named np_*) that belong to `node`: held open by one of its
// processes (a prog or link fd: "prog_id:" in /proc/PID/fdinfo) or attached to one of its
// devices (bpftool net in its namespace). A program of another node's probe is neither; one
// that is neither any more is being freed by the kernel, not left behind.
inline std::set<std::string> node_bpf_programs(const std::string& node) {
    std::set<int> ids;
    for (const auto& p : node_processes(node)) {
        std::error_code ec;
        const std::string fdinfo = "/proc/" + std::to_string(p.pid) + "/fdinfo";
        for (const auto& e : std::filesystem::directory_iterator(fdinfo, ec)) {
            std::istringstream in(read_file(e.path()));
            for (std::string line; std::getline(in, line);)
                if (line.starts_with("prog_id:")) ids.insert(std::atoi(line.c_str() + 8));
        }
    }
    const auto net = nlohmann::json::parse(
        sh("{ ip netns exec " + shell_quote(node) + " bpftool -j net show 2>/dev/null; }").out,
        nullptr, false);
    if (net.is_array())
        for (const auto& section : net)
            for (const auto& [kind, attached] : section.items())
                if (attached.is_array())
                    for (const auto& a : attached)
                        if (a.contains("id") && a["id"].is_number()) ids.insert(a["id"].get<int>());
    std::set<std::string> out;
    if (ids.empty()) return out;
    const auto progs =
        nlohmann::json::parse(sh("{ bpftool -j prog show 2>/dev/null; }").out, nullptr, false);
    if (!progs.is_array()) return out;
    for (const auto& p : progs) {
        const std::string name = p.value("name", "");
        if (name.starts_with("np_") && p.contains("id") && ids.count(p["id"].get<int>()))
            out.insert(std::to_string(p["id"].get<int>()) + " " + name);
    }
    return out;
}

inline std::string join(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

// A node's iperf3 replaced, for a test's life, in the node's own mount namespace (its sshd's,
// which every session there inherits; `state_dir`: its testbed's), by a script; REAL in it is
// the real iperf3 (a copy).
class Iperf3Replaced {
  public:
    Iperf3Replaced(const std::string& state_dir, const std::string& node,
                   const std::string& script) {
        const std::string dir = state_dir + "/" + node;
        std::string tool = sh("command -v iperf3").out;  // the nodes share the console's /usr
        tool_ = tool.substr(0, tool.find('\n'));
        const std::string real = dir + "/iperf3.real", fake = dir + "/iperf3.fake";
        ok_ = sh("cp " + shell_quote(tool_) + " " + shell_quote(real)).status == 0;
        std::string text = script;
        for (size_t at; (at = text.find("REAL")) != std::string::npos;) text.replace(at, 4, real);
        std::ofstream(fake) << text;
        ns_ = "nsenter -t " + std::to_string(std::atoi(read_file(dir + "/sshd.pid").c_str())) +
              " -m ";
        ok_ = ok_ && sh("chmod 755 " + shell_quote(fake)).status == 0 &&
              sh(ns_ + "mount --bind " + shell_quote(fake) + " " + shell_quote(tool_)).status == 0;
    }
    ~Iperf3Replaced() { sh(ns_ + "umount " + shell_quote(tool_)); }
    bool ok() const { return ok_; }

  private:
    std::string tool_, ns_;
    bool ok_ = false;
};

// An iperf3 that, as the client, prints without end (Iperf3Replaced).
inline const char* const kFloodingIperf3 =
    "#!/bin/sh\ncase \" $* \" in *\" -c \"*) exec yes '{\"flood\": 1}';; esac\nexec REAL \"$@\"\n";
// An iperf3 behind a wrapper that does not exec it (Iperf3Replaced).
inline const char* const kWrappedIperf3 = "#!/bin/sh\nREAL \"$@\"\necho wrapper done\n";

// A finding of the contract's explanation by code, or nullptr.
inline const nlohmann::json* finding(const nlohmann::json& contract, const std::string& code) {
    for (const auto& f : contract["explain"]["findings"])
        if (f.value("code", "") == code) return &f;
    return nullptr;
}

// All the contract's finding codes with their severity, for failure messages.
inline std::string codes(const nlohmann::json& contract) {
    std::string out;
    for (const auto& f : contract["explain"]["findings"])
        out += f.value("code", "?") + "(" + f.value("severity", "?") + ") ";
    return out;
}

}  // namespace np::testing
