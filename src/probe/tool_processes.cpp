#include "src/probe/tool_processes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace np::probe {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    if (!in) return "";
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string link_target(const std::string& path) {
    char buf[256];
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

std::vector<int> numeric_entries(const std::string& dir) {
    std::vector<int> out;
    DIR* d = opendir(dir.c_str());
    if (!d) return out;
    while (const dirent* e = readdir(d)) {
        char* end = nullptr;
        const long v = std::strtol(e->d_name, &end, 10);
        if (end != e->d_name && *end == '\0' && v >= 0) out.push_back(int(v));
    }
    closedir(d);
    return out;
}

// The CPU limit a cgroup directory sets, in cores (nothing: none).
std::optional<double> quota_of(const std::string& dir, bool v2) {
    if (v2) return parse_cpu_max(read_text(dir + "/cpu.max"));
    return parse_cfs_quota(read_text(dir + "/cpu.cfs_quota_us"),
                           read_text(dir + "/cpu.cfs_period_us"));
}

// The processes of this network namespace holding any of `inodes` (a socket belongs to the
// namespace it was made in, so the others' descriptors are not listed at all).
std::vector<int> processes_holding(const std::vector<uint64_t>& inodes, int skip_pid) {
    std::vector<int> out;
    const std::string own_netns = link_target("/proc/self/ns/net");
    for (const int pid : numeric_entries("/proc")) {
        if (pid == skip_pid || pid == getpid()) continue;
        const std::string base = "/proc/" + std::to_string(pid);
        if (link_target(base + "/ns/net") != own_netns) continue;
        for (const int fd : numeric_entries(base + "/fd")) {
            const std::string target = link_target(base + "/fd/" + std::to_string(fd));
            if (!target.starts_with("socket:[")) continue;
            const uint64_t inode = std::strtoull(target.c_str() + 8, nullptr, 10);
            if (std::find(inodes.begin(), inodes.end(), inode) != inodes.end()) {
                out.push_back(pid);
                break;
            }
        }
    }
    return out;
}

constexpr size_t kMaxInodes = 1024;

// The helper: CAP_SYS_PTRACE alone, no way to gain more, dead with the probe; answers each
// request (inodes) with the PIDs holding them until the probe's end of the pair closes.
[[noreturn]] void serve_owners(int fd, int probe_pid) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != probe_pid) _exit(0);
    // Nothing of the probe's but its end of the pair: no BPF object, control socket or SSH
    // channel stays open in it.
    if (fd != 3) {
        dup2(fd, 3);
        fd = 3;
    }
    syscall(SYS_close_range, 4U, ~0U, 0U);
    if (const int null = open("/dev/null", O_RDWR); null >= 0) {
        for (int std_fd : {0, 1, 2}) dup2(null, std_fd);
        if (null > 3) close(null);
    }
    for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap)
        if (cap != CAP_SYS_PTRACE) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    data[CAP_TO_INDEX(CAP_SYS_PTRACE)].effective = CAP_TO_MASK(CAP_SYS_PTRACE);
    data[CAP_TO_INDEX(CAP_SYS_PTRACE)].permitted = CAP_TO_MASK(CAP_SYS_PTRACE);
    syscall(SYS_capset, &header, data);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    std::vector<uint64_t> inodes(kMaxInodes);
    for (;;) {
        const ssize_t n = recv(fd, inodes.data(), inodes.size() * sizeof(uint64_t), 0);
        if (n <= 0) _exit(0);
        const std::vector<uint64_t> asked(inodes.begin(),
                                          inodes.begin() + n / ssize_t(sizeof(uint64_t)));
        const std::vector<int> pids = processes_holding(asked, probe_pid);
        if (send(fd, pids.data(), pids.size() * sizeof(int), MSG_NOSIGNAL) < 0) _exit(0);
    }
}

}  // namespace

SocketOwners::SocketOwners() {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return;
    const int probe_pid = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        close(pair[0]);
        serve_owners(pair[1], probe_pid);
    }
    close(pair[1]);
    if (pid < 0) {
        close(pair[0]);
        return;
    }
    fd_ = pair[0];
    pid_ = pid;
}

SocketOwners::~SocketOwners() {
    if (fd_ >= 0) close(fd_);  // the helper reads EOF and exits
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
}

std::vector<int> SocketOwners::owners(const std::vector<uint64_t>& inodes) {
    if (fd_ < 0 || inodes.empty()) return {};
    const size_t n = std::min(inodes.size(), kMaxInodes);
    if (send(fd_, inodes.data(), n * sizeof(uint64_t), MSG_NOSIGNAL) < 0) return {};
    // A scan of /proc takes milliseconds; a helper that does not answer in time is given up.
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 5000) != 1) {
        close(fd_);
        fd_ = -1;
        return {};
    }
    std::vector<int> pids(65536 / sizeof(int));
    const ssize_t got = recv(fd_, pids.data(), pids.size() * sizeof(int), 0);
    if (got < 0) return {};
    pids.resize(size_t(got) / sizeof(int));
    return pids;
}

ToolProcesses::ToolProcesses(uint16_t port, SocketOwners& owners)
    : port_(port),
      owners_(owners),
      mounts_(parse_cgroup_mounts(read_text("/proc/self/mountinfo"))),
      ticks_per_s_(std::max(1L, sysconf(_SC_CLK_TCK))) {}

void ToolProcesses::find_new(int64_t now_ms) {
    std::vector<uint64_t> fresh;
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"})
        for (const uint64_t inode : socket_inodes_on_port(read_text(table), port_))
            if (std::find(known_inodes_.begin(), known_inodes_.end(), inode) ==
                    known_inodes_.end() &&
                std::find(fresh.begin(), fresh.end(), inode) == fresh.end())
                fresh.push_back(inode);
    if (fresh.empty()) return;
    known_inodes_.insert(known_inodes_.end(), fresh.begin(), fresh.end());
    for (const int pid : owners_.owners(fresh)) {
        if (watched_.count(pid)) continue;
        const std::string base = "/proc/" + std::to_string(pid);
        const auto stat = parse_proc_stat(read_text(base + "/stat"));
        if (!stat) continue;
        Watched w;
        w.pid = pid;
        w.start_ticks = stat->start_ticks;
        w.comm = stat->comm;
        read(w, now_ms);
        w.first = w.last;
        watched_.emplace(pid, std::move(w));
    }
}

void ToolProcesses::read(Watched& w, int64_t now_ms) {
    if (!w.alive) return;
    const auto stat = parse_proc_stat(read_text("/proc/" + std::to_string(w.pid) + "/stat"));
    if (!stat || stat->start_ticks != w.start_ticks || stat->exited) {
        w.alive = false;  // ended: its last reading stands (a zombie's cgroup is the root's)
        return;
    }
    w.last.t_ms = now_ms;
    w.last.cpu_ticks = stat->cpu_ticks;
    // How long its threads were ready to run but waited for a CPU: the evidence of other work
    // holding the test back on a busy host (docs/design.md, "The stage that set the rate").
    const std::string task = "/proc/" + std::to_string(w.pid) + "/task/";
    for (const int tid : numeric_entries(task))
        if (const auto s = parse_schedstat(read_text(task + std::to_string(tid) + "/schedstat")))
            w.threads.add(tid, *s);
    w.last.wait_ns = w.threads.wait_ns();
    // Its cgroup and the ancestors: a limit on any of them throttles it. The v1 cpu hierarchy
    // where the machine has one (hybrid: the unified one then has no cpu controller), else the
    // unified one. Read each time: a process can be moved (a slice's manager, a container's).
    const CgroupPaths paths =
        parse_proc_cgroup(read_text("/proc/" + std::to_string(w.pid) + "/cgroup"));
    std::string path, mount, root;
    if (paths.cpu_v1 && !mounts_.cpu_v1.empty()) {
        path = *paths.cpu_v1, mount = mounts_.cpu_v1, root = mounts_.cpu_v1_root;
        w.v2 = false;
    } else if (paths.unified && !mounts_.unified.empty()) {
        path = *paths.unified, mount = mounts_.unified, root = mounts_.unified_root;
        w.v2 = true;
    }
    w.cgroups.clear();
    for (std::string p = path; !p.empty();) {
        std::string dir = cgroup_dir(mount, root, p);
        if (dir.empty()) break;
        w.cgroups.push_back({p, std::move(dir)});
        if (p == "/" || p == root) break;
        const size_t slash = p.rfind('/');
        p = slash == 0 ? "/" : p.substr(0, slash);
    }
    for (const auto& level : w.cgroups) {
        const CgroupCpuStat s = parse_cpu_stat(read_text(level.dir + "/cpu.stat"));
        if (!s.has_bandwidth) continue;
        w.last.cgroups[level.path] = s;
        // A cgroup it joined since the watch began counts from when it was first read.
        w.first.cgroups.emplace(level.path, s);
    }
}

void ToolProcesses::watch(int64_t now_ms, const StreamNews& news, bool cut) {
    bool watching = false;
    for (auto& [pid, w] : watched_) {
        read(w, now_ms);
        watching = watching || w.alive;
    }
    // Looking for new sockets reads the kernel's socket tables whole (walk_schedule.hpp). A tool
    // runs as one process (its streams are threads), so while one is watched and alive, no
    // other is looked for: the next is found once it has ended (the UDP test's client after the
    // TCP test's).
    if (watching) return;
    std::vector<uint16_t> unfound;
    for (const ClaimedStream& c : news.streams)
        if (c.port != 0 && std::find(searched_ports_.begin(), searched_ports_.end(), c.port) ==
                               searched_ports_.end())
            unfound.push_back(c.port);
    if (!schedule_.next(cut, news, unfound, now_ms)) return;
    searched_ports_.insert(searched_ports_.end(), unfound.begin(), unfound.end());
    find_new(now_ms);
}

std::vector<int> ToolProcesses::pids() const {
    std::vector<int> out;
    for (const auto& [pid, w] : watched_) out.push_back(pid);
    return out;
}

std::vector<ProcessCpu> ToolProcesses::cut(int64_t now_ms) {
    watch(now_ms, StreamNews{}, true);
    std::vector<ProcessCpu> out;
    for (auto it = watched_.begin(); it != watched_.end();) {
        Watched& w = it->second;
        ProcessCpu p;
        p.pid = w.pid;
        p.comm = w.comm;
        p.watched_ms = w.last.t_ms - w.first.t_ms;
        p.cpu_ms = (w.last.cpu_ticks - w.first.cpu_ticks) * 1000 / ticks_per_s_;
        if (w.first.wait_ns && w.last.wait_ns)
            p.cpu_wait_ms =
                (*w.last.wait_ns - *w.first.wait_ns) / 1'000'000;  // ThreadWaits only grows
        // The level of its cgroup path that throttled it most; where none did, the nearest
        // that sets a limit, else its own cgroup — with that level's counts over the watch.
        const auto delta = [&](const Watched::Level& level) {
            const auto a = w.first.cgroups.find(level.path), b = w.last.cgroups.find(level.path);
            CgroupCpuStat d;
            if (a == w.first.cgroups.end() || b == w.last.cgroups.end()) return d;
            d.periods = b->second.periods - a->second.periods;
            d.throttled_periods = b->second.throttled_periods - a->second.throttled_periods;
            d.throttled_us = b->second.throttled_us - a->second.throttled_us;
            return d;
        };
        const Watched::Level* chosen = nullptr;
        for (const auto& level : w.cgroups)
            if (delta(level).throttled_us > (chosen ? delta(*chosen).throttled_us : 0))
                chosen = &level;
        if (!chosen)
            for (const auto& level : w.cgroups)
                if (!chosen && quota_of(level.dir, w.v2)) chosen = &level;
        if (!chosen && !w.cgroups.empty()) chosen = &w.cgroups.front();
        if (chosen) {
            const CgroupCpuStat d = delta(*chosen);
            p.cgroup = chosen->path;
            p.quota_cores = quota_of(chosen->dir, w.v2);
            p.periods = d.periods;
            p.throttled_periods = d.throttled_periods;
            p.throttled_ms = d.throttled_us / 1000;
        }
        out.push_back(std::move(p));
        if (!w.alive) {
            it = watched_.erase(it);
            continue;
        }
        w.first = w.last;
        ++it;
    }
    return out;
}

}  // namespace np::probe
