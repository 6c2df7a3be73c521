#pragma once
// The test's own processes on this node, watched while the probe counts: every process holding a
// socket on the iperf port in this network namespace (the server listening and serving, each
// client while it sends), the CPU time it used, and what the CPU limit of its cgroup did to it
// (its quota, the periods it ran out, the time it was throttled). A host that set a test's pace
// is named from this, its own evidence (docs/design.md, "The bottleneck"), where the CPUs as a
// whole show nothing: one throttled or core-bound process on an otherwise idle machine.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/process_stats.hpp"
#include "common/trace.hpp"
#include "src/probe/walk_schedule.hpp"

namespace np::probe {

// Which processes hold given sockets: read in /proc/PID/fd, which the kernel shows another
// process only with ptrace-read access — a root process that dropped its capabilities (as the
// probe does once attached) no longer has it for processes that kept theirs (iperf3 run by
// root). So a child forked before the drop keeps CAP_SYS_PTRACE alone, answers only this
// question over a socket pair, and exits when the probe closes it or dies.
class SocketOwners {
  public:
    SocketOwners();  // forks the helper; without one (fork refused), owners() finds none
    ~SocketOwners();
    SocketOwners(const SocketOwners&) = delete;
    SocketOwners& operator=(const SocketOwners&) = delete;
    // The PIDs of this network namespace's processes holding any of `inodes`.
    std::vector<int> owners(const std::vector<uint64_t>& inodes);

  private:
    int fd_ = -1;
    int pid_ = -1;
};

class ToolProcesses {
  public:
    ToolProcesses(uint16_t port, SocketOwners& owners);
    // At each sample: reads every watched process's CPU time and its cgroups' counters, and,
    // while none of them is alive, finds processes that opened sockets on the port since, when
    // the schedule says: a stream the tc programs named (`news`) that no search has looked for
    // yet, or `cut`. `now_ms`: the probe's clock.
    void watch(int64_t now_ms, const StreamNews& news, bool cut = false);
    // At a phase cut: what each process watched in the phase used and met since it was first
    // seen (or the phase began), then starts the next phase from here.
    std::vector<ProcessCpu> cut(int64_t now_ms);
    // The processes watched so far, alive or not.
    std::vector<int> pids() const;

  private:
    struct Counters {
        int64_t t_ms = 0;
        int64_t cpu_ticks = 0;
        std::map<std::string, CgroupCpuStat> cgroups;  // by cgroup path
        std::optional<int64_t> wait_ns;  // its threads' wait for a CPU; none: not kept here
    };
    struct Watched {
        int pid = 0;
        uint64_t start_ticks = 0;
        std::string comm;
        bool alive = true;
        // Its cgroup and every ancestor (a limit on any of them throttles it): the path in the
        // hierarchy, the directory here.
        struct Level {
            std::string path, dir;
        };
        std::vector<Level> cgroups;
        bool v2 = false;      // in the unified hierarchy, else v1's cpu one
        ThreadWaits threads;  // its threads' schedstat readings
        Counters first, last;
    };

    void find_new(int64_t now_ms);
    void read(Watched& w, int64_t now_ms);

    uint16_t port_;
    SocketOwners& owners_;
    CgroupMounts mounts_;
    long ticks_per_s_;
    std::map<int, Watched> watched_;      // by PID
    std::vector<uint64_t> known_inodes_;  // sockets already traced to a process (or to none)
    // A process holds its socket before the stream's first packet: each new stream is looked
    // for once.
    WalkSchedule schedule_{0};
    std::vector<uint16_t> searched_ports_;  // the streams' ports at each search so far
};

}  // namespace np::probe
