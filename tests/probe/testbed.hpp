#pragma once
// Kernel test harness for np-probe: network namespaces joined by veth pairs, and child
// processes started inside them. Every object removes what it created in its destructor
// (namespaces take their veths, qdiscs and tc filters with them), so a failing assertion
// still leaves the machine clean. Names start with "npp", addresses come from
// 198.18.20.0/24 .. 198.18.29.0/24 only.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace np::testing {

inline std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs a shell command; returns its stdout. Throws when it fails and `check` is set.
inline std::string sh(const std::string& cmd, bool check = true) {
    std::string out;
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) throw std::runtime_error("popen failed: " + cmd);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    const int status = pclose(p);
    if (check && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
        throw std::runtime_error("command failed: " + cmd + "\n" + out);
    return out;
}

// Removes namespaces "npp-PID-…" of test processes that no longer run (killed by a CTest
// timeout before their destructors ran), stopping what still runs inside them first.
inline void remove_stale_namespaces() {
    std::istringstream list(sh("ip netns list", false));
    std::string line;
    while (std::getline(list, line)) {
        const std::string name = line.substr(0, line.find(' '));
        if (name.rfind("npp-", 0) != 0) continue;
        const std::string pid = name.substr(4, name.find('-', 4) - 4);
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (access(("/proc/" + pid).c_str(), F_OK) == 0) continue;
        std::istringstream pids(sh("ip netns pids " + name, false));
        for (std::string p; pids >> p;) kill(std::stoi(p), SIGKILL);
        sh("ip netns del " + name, false);
    }
}

class Netns {
  public:
    explicit Netns(std::string name) : name_(std::move(name)) {
        static const bool swept = (remove_stale_namespaces(), true);
        (void)swept;
        sh("ip netns del " + name_, false);  // a leftover of an interrupted run
        sh("ip netns add " + name_);
        sh(exec() + " ip link set lo up");
        // No IPv6 autoconfiguration chatter on the test links.
        sh(exec() +
           " sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1");
    }
    ~Netns() {
        // Whatever a failed test left running inside goes with the namespace.
        std::istringstream pids(sh("ip netns pids " + name_, false));
        for (std::string p; pids >> p;) kill(std::stoi(p), SIGKILL);
        sh("ip netns del " + name_, false);
    }
    Netns(const Netns&) = delete;
    Netns& operator=(const Netns&) = delete;

    const std::string& name() const { return name_; }
    std::string exec() const { return "ip netns exec " + name_; }

  private:
    std::string name_;
};

// A veth pair between two namespaces, 198.18.<subnet>.1/24 on `a`, .2/24 on `b`.
inline void link_veth(const Netns& a, const std::string& a_if, const Netns& b,
                      const std::string& b_if, int subnet) {
    if (subnet < 20 || subnet > 29) throw std::invalid_argument("subnet must be 20..29");
    sh("ip link add " + a_if + " netns " + a.name() + " type veth peer name " + b_if + " netns " +
       b.name());
    sh(a.exec() + " ip addr add 198.18." + std::to_string(subnet) + ".1/24 dev " + a_if);
    sh(b.exec() + " ip addr add 198.18." + std::to_string(subnet) + ".2/24 dev " + b_if);
    sh(a.exec() + " ip link set " + a_if + " up");
    sh(b.exec() + " ip link set " + b_if + " up");
}

// A child process with stdin on a pipe and stdout/stderr in files; killed (by its PID) and
// reaped in the destructor if still running.
class Child {
  public:
    explicit Child(const std::vector<std::string>& argv) {
        static int seq = 0;
        const std::string base =
            "/tmp/npp-test-" + std::to_string(getpid()) + "-" + std::to_string(++seq);
        out_path_ = base + ".out";
        err_path_ = base + ".err";
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        pid_ = fork();
        if (pid_ == 0) {
            dup2(pipefd[0], STDIN_FILENO);
            const int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            const int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(out, STDOUT_FILENO);
            dup2(err, STDERR_FILENO);
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            execvp(args[0], args.data());
            _exit(127);
        }
        close(pipefd[0]);
        stdin_fd_ = pipefd[1];
    }
    ~Child() {
        close_stdin();
        if (running()) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        unlink(out_path_.c_str());
        unlink(err_path_.c_str());
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return pid_; }
    void send(const std::string& line) {
        const std::string s = line + "\n";
        if (write(stdin_fd_, s.data(), s.size()) != static_cast<ssize_t>(s.size()))
            throw std::runtime_error("write to child stdin failed");
    }
    void close_stdin() {
        if (stdin_fd_ >= 0) close(stdin_fd_);
        stdin_fd_ = -1;
    }
    void signal(int sig) const { kill(pid_, sig); }
    bool running() {
        if (exit_status_ != kRunning) return false;
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
            return false;
        }
        return true;
    }
    // Exit status (negative signal number when killed); throws on timeout.
    int wait(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
        const auto end = std::chrono::steady_clock::now() + timeout;
        while (running()) {
            if (std::chrono::steady_clock::now() > end)
                throw std::runtime_error("child did not exit in time: " + err());
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return exit_status_;
    }
    std::string out() const { return read_file(out_path_); }
    std::string err() const { return read_file(err_path_); }

    // The first stdout NDJSON line whose "type" is `type`; waits for it.
    nlohmann::json wait_for_line(const std::string& type,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
        const auto end = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            std::istringstream lines(out());
            std::string line;
            while (std::getline(lines, line)) {
                auto j = nlohmann::json::parse(line, nullptr, false);
                if (!j.is_discarded() && j.value("type", "") == type) return j;
            }
            if (!running() || std::chrono::steady_clock::now() > end)
                throw std::runtime_error("no '" + type + "' line from child; stderr: " + err());
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

  private:
    static constexpr int kRunning = -1000;
    pid_t pid_ = -1;
    int stdin_fd_ = -1;
    int exit_status_ = kRunning;
    std::string out_path_, err_path_;
};

// A directory under /tmp for one test's files, removed with everything in it in the destructor.
class TempDir {
  public:
    explicit TempDir(const std::string& name) : path_("/tmp/" + name) {
        std::filesystem::remove_all(path_);
        std::filesystem::create_directory(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

// Runs iperf3 as a client to completion and returns its -J document.
inline nlohmann::json iperf3_client(const Netns& ns, const std::string& args) {
    // The one-off server may need a moment to listen: retry a refused connection.
    for (int attempt = 0;; ++attempt) {
        // stdout only: iperf3 warns on stderr (a datagram larger than the MSS) beside its JSON.
        const std::string out =
            sh("{ " + ns.exec() + " iperf3 -J " + args + " 2>/dev/null; }", false);
        auto j = nlohmann::json::parse(out, nullptr, false);
        if (!j.is_discarded() && !j.contains("error")) return j;
        if (attempt == 20) throw std::runtime_error("iperf3 failed: " + out);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

}  // namespace np::testing
