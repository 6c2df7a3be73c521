#pragma once
// What the kernel says about a process and the CPU limit of its cgroup, as text in procfs and
// cgroupfs, parsed: np-probe reads the files where it runs (src/probe/tool_processes.cpp) to
// watch the test's own processes, and these parsers turn the text into numbers. Both cgroup
// versions are read: v2 (one unified hierarchy, cpu.max and cpu.stat's *_usec keys) and v1 (a
// cpu hierarchy of its own, cpu.cfs_quota_us / cpu.cfs_period_us and cpu.stat's throttled_time
// in ns), as on a machine whose systemd mounts the hybrid layout.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace np {

// The inodes of the sockets in a /proc/net/{tcp,tcp6,udp,udp6} table whose local or remote port
// is `port` (the header line and sockets without an inode are skipped).
std::vector<uint64_t> socket_inodes_on_port(std::string_view table, uint16_t port);

// /proc/PID/stat: the command name, the user and system time of all its threads (clock ticks),
// its start time (ticks after boot: a PID reused by another process starts later), and whether
// it has exited (a zombie not yet reaped: its cgroup then reads as the root, "0::/").
struct ProcStat {
    std::string comm;
    int64_t cpu_ticks = 0;
    uint64_t start_ticks = 0;
    bool exited = false;
};
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// /proc/PID/task/TID/schedstat, one thread's "ON_CPU_NS WAIT_NS TIMESLICES": how long it ran,
// and how long it was ready to run but waited on a run queue for a CPU (the scheduler's
// run_delay), both in ns since the thread began. Nothing for any other text.
struct SchedStat {
    int64_t on_cpu_ns = 0;
    int64_t wait_ns = 0;
};
std::optional<SchedStat> parse_schedstat(std::string_view text);

// A process's threads' schedstat readings over the time it is watched, kept by thread: a thread
// that ends keeps what it ran and waited (a sum over the threads alive would drop by it), and a
// thread ID the kernel gave to a new thread (its time on a CPU lower than the last reading's)
// keeps the ended thread's as well.
class ThreadWaits {
  public:
    void add(int tid, const SchedStat& reading);
    // How long its threads have waited for a CPU so far, in ns; nothing where every reading said
    // no time on a CPU either (a kernel that keeps no scheduling statistics prints zeros).
    std::optional<int64_t> wait_ns() const;

  private:
    std::map<int, SchedStat> threads_;
    SchedStat ended_{};  // threads whose ID was reused
};

// /proc/PID/cgroup: the process's path in the v2 hierarchy ("0::PATH") and in the v1 hierarchy
// that holds the cpu controller ("N:cpu,cpuacct:PATH").
struct CgroupPaths {
    std::optional<std::string> unified;
    std::optional<std::string> cpu_v1;
};
CgroupPaths parse_proc_cgroup(std::string_view text);

// /proc/self/mountinfo: where those two hierarchies are mounted here ("" when not), and the
// path within the hierarchy each mount shows at its mount point (its root, "/" usually).
struct CgroupMounts {
    std::string unified, unified_root = "/";
    std::string cpu_v1, cpu_v1_root = "/";
};
CgroupMounts parse_cgroup_mounts(std::string_view mountinfo);

// The directory of cgroup `path` under a mount of its hierarchy whose root is `root`: "" when the
// mount does not show it (a path outside the mount's root).
std::string cgroup_dir(const std::string& mount, const std::string& root, const std::string& path);

// A cgroup's cpu.stat, in either version's words: enforcement periods, the periods in which its
// quota ran out, and the time its tasks were throttled for it. has_bandwidth is false where the
// file has no period counts (v2 without the cpu controller enabled for it: usage only).
struct CgroupCpuStat {
    bool has_bandwidth = false;
    int64_t periods = 0;
    int64_t throttled_periods = 0;
    int64_t throttled_us = 0;
};
CgroupCpuStat parse_cpu_stat(std::string_view text);

// The CPU limit in cores: v2's cpu.max ("max 100000" none, "5000 100000" 0.05), v1's quota and
// period files (-1: none). Nothing when unlimited or unreadable.
std::optional<double> parse_cpu_max(std::string_view text);
std::optional<double> parse_cfs_quota(std::string_view quota_us, std::string_view period_us);

}  // namespace np
