#pragma once
// The probe's BPF maps summed over CPUs: cumulative since load. Phases and samples are
// differences of two snapshots, turned into the trace's structs here.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/trace.hpp"
#include "probe.h"
#include "src/probe/kernel_btf.hpp"
#include "src/probe/kernel_symbols.hpp"
#include "src/probe/walk_schedule.hpp"

namespace np::probe {

// (reason, on the data iface (1) or without a device (0), np_proto, np_flow): a drops slot.
using DropWhere = std::tuple<uint32_t, uint32_t, uint8_t, uint8_t>;

// (code address that freed it, drops slot of reason 0): a drop_sites key.
using DropSite = std::pair<uint64_t, uint32_t>;

// (port, np_proto, where: np_dir or NP_STREAM_RETRANS): one stream's counts at one point, summed
// over the CPUs whose streams slot it owns.
using StreamKey = std::tuple<uint16_t, uint8_t, uint8_t>;
// (port, np_proto, code address (0 when a reason names it), reason, on the data iface): a
// stream_drops key.
using StreamDropKey = std::tuple<uint16_t, uint8_t, uint64_t, uint32_t, uint8_t>;

struct MapTotals {
    std::array<np_traffic, NP_TRAFFIC_SLOTS> traffic{};
    std::array<np_retrans, NP_FLOW_COUNT> retransmits{};
    std::map<DropWhere, np_drop> drops;             // empty in a snapshot taken without detail
    std::map<DropSite, np_drop> sites;              // likewise; the drops-without-reasons tier's
    std::map<StreamKey, np_stream> streams;         // likewise: the measured flow by stream
    std::map<StreamDropKey, np_drop> stream_drops;  // likewise
    uint64_t drops_total = 0;
    // The CPU account, one per possible CPU, not summed; empty without detail or without the map.
    std::vector<np_cpu_time> cpu_time;
};

// The map fds a tier has; -1 for a map it does not load (its counts stay zero).
struct ProbeMaps {
    int traffic = -1;
    int retransmits = -1;
    int drops = -1;
    int drop_sites = -1;
    int drop_count = -1;
    int streams = -1;
    int stream_drops = -1;
    int cpu_time = -1;
    bool cpu_time_at_kernel_tick = false;  // sampled at the kernel's tick, not the probe's timer
    int tools = -1;                        // the CPU account's: which processes are the test's
    int nic_irqs = -1;                     // and which IRQs the data NIC's
    int softirq_fns = -1;                  // and where the softirq functions lie
    int echoes = -1;                       // the ICMP echoes' stamps
    // The flow's 1 ms bins (bpf/bins.h), mapped into memory, each CPU's bin still open, and
    // their start on the monotonic clock; null where the bins could not be mapped.
    np_bin* bins = nullptr;
    int bin_open = -1;
    volatile unsigned long long* bins_start_ns = nullptr;
    // How many stream slots the tc programs have claimed (bpf/tc_count.h); null without them.
    const volatile unsigned long long* streams_claimed = nullptr;
    // Set by them when a packet of the flow found no slot for its stream; cleared when read.
    volatile unsigned* streams_unslotted = nullptr;
};

// The echoes map's entries, each as offsets from its first stamp, and the map emptied: what a
// phase just closed saw (an echo stamped on both sides of the cut is split between the phases).
std::vector<EchoTrace> take_echoes(int echoes_fd);

// The bins of the phase just closed, the CPUs' open ones added: its first `duration_ms` (at most
// NP_BINS), less the empty ones at its end; empty when the probe has no bins. The bins stop
// counting until start_bins.
std::optional<PhaseBins> take_bins(const ProbeMaps& maps, int64_t duration_ms);
// Empties the bins and starts them now, for the phase that begins.
void start_bins(const ProbeMaps& maps);

// `with_drop_detail` reads the drops array (large; what a phase needs); samples need only the
// traffic, retransmits and the total number of drops.
MapTotals read_map_totals(const ProbeMaps& maps, bool with_drop_detail);
MapTotals operator-(const MapTotals& later, const MapTotals& earlier);

// The streams the tc programs claimed a slot for on any CPU (the streams map's owners), once
// each; what tells the socket walks there is something new to find (walk_schedule.hpp).
std::vector<ClaimedStream> claimed_streams(int streams_fd);

// Removes from the streams maps the keys that did not move in a phase just closed (`delta`, its
// counts), and from `now`, the snapshot the next phase is counted from: streams that ended, so
// that a run of many tests does not fill the maps. A stream that moves again starts a new key.
// Returns the streams whose slots it freed.
std::vector<ClaimedStream> prune_idle_streams(const ProbeMaps& maps, const MapTotals& delta,
                                              MapTotals& now);

// One CPU's softirq time by vector, the dispatcher's ticks (NP_SOFTIRQ_DISPATCH: the tick landed
// between handlers) shared among the vectors in proportion to the ticks in each one's handler.
struct SoftirqShares {
    unsigned long long net_tx_ns = 0, net_rx_ns = 0, other_ns = 0;
};
SoftirqShares share_dispatch(const unsigned long long (&softirq_ns)[NP_SOFTIRQS]);

// Each CPU of a phase (from /proc/stat) given the probe's account of it (`delta`: a phase's
// MapTotals::cpu_time, by CPU number), sampled at the kernel's tick or the probe's own timer;
// left without one where the tier counted none.
void add_cpu_accounts(std::vector<CpuTime>& cpus, const std::vector<np_cpu_time>& delta,
                      bool at_kernel_tick);

// What the trace needs to name things: the data iface, the kernel's drop reason names and, at
// the drops-without-reasons tier, its functions.
struct Naming {
    std::string iface;
    uint32_t ifindex = 0;
    const KernelBtf* btf = nullptr;
    const KernelSymbols* symbols = nullptr;
    ProbeTier tier = ProbeTier::full;
};

// Fills the counting parts of a phase (traffic, retransmits, drops) from a delta, as far as
// the tier measures them.
void fill_phase(PhaseTrace& phase, const MapTotals& delta, const Naming& naming);
// Fills a sample's counters from a delta.
void fill_sample(TraceSample& sample, const MapTotals& delta);

}  // namespace np::probe
