#pragma once
// Owners of the probe's kernel objects. Each class holds one object and releases it in its
// destructor, so whatever path leaves the probe (normal stop, signal, stdin EOF, an error)
// detaches everything in reverse order of creation.
#include <bpf/libbpf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/probe/cpu_account.hpp"

struct probe_bpf;  // the generated skeletons (probe.skel.h, probe_tc.skel.h)
struct probe_tc_bpf;

namespace np::probe {

// Our tc filters are recognised by this handle and priority on the clsact hooks (and by
// their program names), so a probe can remove what a killed predecessor left behind.
inline constexpr uint32_t kTcHandle = 0x4e50;  // "NP"
inline constexpr uint32_t kTcPriority = 1;
inline constexpr const char* kTcIngressProgram = "np_tc_ingress";
inline constexpr const char* kTcEgressProgram = "np_tc_egress";

struct ProbeConfig {
    uint64_t netns_inode = 0;
    uint32_t ifindex = 0;
    uint16_t iperf_port = 5201;
    bool kfree_skb_has_rx_sk = false;
    bool retransmit_has_err = false;
    // The drops-without-reasons tier: np_kfree_skb_site (by code address) is loaded instead of
    // np_kfree_skb (by reason).
    bool drop_sites = false;
    // The CPU account (bpf/cpu_account.h), sampled at the kernel's tick where it is known
    // (np_account_on_tick is loaded as well as the probe's own timer's np_account_tick).
    bool cpu_account = false;
    KernelTick tick;
};

// open -> set rodata -> load; destroy on scope exit. The full and drops-without-reasons tiers.
class ProbeSkeleton {
  public:
    explicit ProbeSkeleton(const ProbeConfig& config);
    ~ProbeSkeleton();
    ProbeSkeleton(const ProbeSkeleton&) = delete;
    ProbeSkeleton& operator=(const ProbeSkeleton&) = delete;
    probe_bpf* get() const { return skel_; }

  private:
    probe_bpf* skel_ = nullptr;
};

// The tc-counters tier's object (probe_tc.bpf.c): the tc programs alone, without CO-RE, loaded
// without the kernel's BTF (libbpf is pointed at none, so a relocation needing it would fail
// here as on a kernel without BTF).
class TcSkeleton {
  public:
    explicit TcSkeleton(uint16_t iperf_port);
    ~TcSkeleton();
    TcSkeleton(const TcSkeleton&) = delete;
    TcSkeleton& operator=(const TcSkeleton&) = delete;
    probe_tc_bpf* get() const { return skel_; }

  private:
    probe_tc_bpf* skel_ = nullptr;
};

// One probe per interface: an flock on /run/np-probe/iface-COOKIE-IFINDEX.lock (the namespace
// by its cookie, as ClsactQdisc's marker), held for the probe's life and released by the kernel
// however the holder ends, with the holder's PID inside. A second probe on the interface
// refuses (EnvironmentError naming the holder) instead of taking over a live one's hooks; what
// it finds there once it holds the lock was left by a probe that is gone. The file is removed
// on exit, while still locked; a probe that locked a file removed under it tries again.
class InterfaceLock {
  public:
    InterfaceLock(uint32_t ifindex, const std::string& iface);
    ~InterfaceLock();
    InterfaceLock(const InterfaceLock&) = delete;
    InterfaceLock& operator=(const InterfaceLock&) = delete;

  private:
    std::string path_;
    int fd_ = -1;
};

// The clsact qdisc that carries the tc hooks. Created if absent; destroyed on exit only when
// this probe (or a killed predecessor, per its marker file under /run/np-probe) created it.
// The marker names the namespace by its cookie, which the kernel never reuses (an inode
// number is reused once a namespace is gone), and the iface by index and name.
class ClsactQdisc {
  public:
    ClsactQdisc(uint32_t ifindex, const std::string& iface);
    ~ClsactQdisc();
    ClsactQdisc(const ClsactQdisc&) = delete;
    ClsactQdisc& operator=(const ClsactQdisc&) = delete;
    bool owned() const { return owned_; }

  private:
    uint32_t ifindex_;
    std::string marker_;
    bool owned_ = false;
};

// One tc filter (direct-action BPF) on ingress or egress; detached in the destructor.
class TcFilter {
  public:
    TcFilter(uint32_t ifindex, bpf_tc_attach_point point, const bpf_program* prog);
    ~TcFilter();
    TcFilter(const TcFilter&) = delete;
    TcFilter& operator=(const TcFilter&) = delete;

  private:
    bpf_tc_hook hook_{};
};

// Removes filters at our handle/priority that run our programs (a probe killed with -9
// cannot detach); returns how many it removed. Throws when a foreign filter sits there.
int remove_stale_filters(uint32_t ifindex);

// A tracing attachment (tp_btf); bpf_link__destroy on scope exit.
class TracingLink {
  public:
    explicit TracingLink(bpf_program* prog, const char* hook_name);
    ~TracingLink();
    TracingLink(const TracingLink&) = delete;
    TracingLink& operator=(const TracingLink&) = delete;

  private:
    bpf_link* link_ = nullptr;
};

// `prog` run by a timer of `period_ns` on every online CPU (a cpu-clock perf event each, which
// fires whether the CPU is busy or idle), detached on destruction. `what` names the timer in
// errors. Throws EnvironmentError when a CPU's event cannot be opened (perf_event_paranoid, no
// CAP_PERFMON) or the program attached.
class CpuTimers {
  public:
    CpuTimers(bpf_program* prog, uint64_t period_ns, const char* what);
    ~CpuTimers();
    CpuTimers(const CpuTimers&) = delete;
    CpuTimers& operator=(const CpuTimers&) = delete;

  private:
    void release();
    std::vector<bpf_link*> links_;
};

// An mmap-able BPF array's values in this process's memory (BPF_F_MMAPABLE), unmapped on
// destruction. Throws EnvironmentError when the map cannot be mapped.
class MappedMap {
  public:
    MappedMap(int map_fd, size_t bytes);
    ~MappedMap();
    MappedMap(const MappedMap&) = delete;
    MappedMap& operator=(const MappedMap&) = delete;
    void* data() const { return data_; }

  private:
    void* data_ = nullptr;
    size_t bytes_ = 0;
};

// BPF run-time statistics (run_time_ns, run_cnt) stay enabled while this fd is open.
class RunTimeStats {
  public:
    RunTimeStats();
    ~RunTimeStats();
    RunTimeStats(const RunTimeStats&) = delete;
    RunTimeStats& operator=(const RunTimeStats&) = delete;
    bool enabled() const { return fd_ >= 0; }

  private:
    int fd_ = -1;
};

// Throws EnvironmentError unless the process may load BPF and change tc (root, or CAP_BPF +
// CAP_PERFMON + CAP_NET_ADMIN): what --cleanup and the benchmarks need.
void check_privileges();

}  // namespace np::probe
