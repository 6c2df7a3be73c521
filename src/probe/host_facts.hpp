#pragma once
// What the probe reads from the host besides its BPF maps: the data iface's link facts (sysfs,
// read as preflight reads them: common/link_facts.hpp), and the kernel counters the trace
// carries per phase as deltas.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/trace.hpp"

namespace np::probe {

// The iface's index in this network namespace, 0 where there is none: SIOCGIFINDEX on one
// socket kept for the process's life, since the probe asks at every sample whether the iface is
// still there (if_nametoindex opens and closes a socket each time, and a socket is freed through
// an RCU grace period: docs/performance.md, "What a sample frees").
uint32_t find_iface_index(const std::string& iface);
// The same; throws EnvironmentError when the iface does not exist in this network namespace.
uint32_t iface_index(const std::string& iface);
uint64_t own_netns_inode();
std::string kernel_release();
std::string node_name();

LinkFacts read_link_facts(const std::string& iface);

// A snapshot of the counters whose phase deltas go into the trace.
struct KernelCounters {
    std::map<std::string, int64_t> nstat;          // selected /proc/net/{snmp,netstat,snmp6}
    std::map<std::string, int64_t> ethtool_stats;  // `ethtool -S` names with drop/miss/...
    int64_t softnet_dropped = 0;                   // /proc/net/softnet_stat, all CPUs
    std::map<std::string, int64_t> qdisc;          // the root qdisc's drops, overlimits, …
    int64_t qdisc_queued = 0;   // packets in the root qdisc at the snapshot (a gauge)
    std::vector<CpuTime> cpus;  // /proc/stat's cpuN lines, cumulative since boot
    int64_t cpus_read_ms = 0;   // when they were read, on the monotonic clock (a delta: b's)
    std::map<std::string, int64_t> dev_stats;  // the iface's /proc/net/dev line: rx_packets, …
};

// The iface's line of /proc/net/dev (this namespace's, whichever /sys is mounted): rx_bytes,
// rx_packets, rx_errors, rx_dropped, rx_fifo_errors, rx_frame_errors, tx_bytes, tx_packets,
// tx_errors, tx_dropped, tx_fifo_errors, collisions, tx_carrier_errors; empty when absent. Read
// at every sample at the kernel-counters tier: the file is opened once and read again from its
// start (a /proc/net file opened anew makes an inode that is freed through an RCU grace period).
std::map<std::string, int64_t> read_dev_stats(const std::string& iface);

KernelCounters read_kernel_counters(const std::string& iface);
// b - a, key by key (a key missing in a counts from 0). Each CPU's time /proc/stat placed
// nowhere between the two readings is its unticked_ms (common/trace.hpp).
KernelCounters counter_delta(const KernelCounters& a, const KernelCounters& b);

}  // namespace np::probe
