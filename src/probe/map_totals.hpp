#pragma once
// The probe's BPF maps summed over CPUs: cumulative since load. Phases and samples are
// differences of two snapshots, turned into the trace's structs here.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "analysis/trace.hpp"
#include "probe.h"
#include "src/probe/kernel_btf.hpp"

struct probe_bpf;

namespace np::probe {

// (reason, on the data iface (1) or without a device (0), np_proto, np_flow): a drops slot.
using DropWhere = std::tuple<uint32_t, uint32_t, uint8_t, uint8_t>;

struct MapTotals {
    std::array<np_traffic, NP_TRAFFIC_SLOTS> traffic{};
    std::array<np_retrans, NP_FLOW_COUNT> retransmits{};
    std::map<DropWhere, np_drop> drops;  // empty in a snapshot taken without detail
    uint64_t drops_total = 0;
};

// `with_drop_detail` reads the drops array (large; what a phase needs); samples need only the
// traffic, retransmits and the total number of drops.
MapTotals read_map_totals(const probe_bpf* skel, bool with_drop_detail);
MapTotals operator-(const MapTotals& later, const MapTotals& earlier);

// What the trace needs to name things: the data iface and the kernel's drop reason names.
struct Naming {
    std::string iface;
    uint32_t ifindex = 0;
    const KernelBtf* btf = nullptr;
};

// Fills the counting parts of a phase (traffic, retransmits, drops) from a delta.
void fill_phase(PhaseTrace& phase, const MapTotals& delta, const Naming& naming);
// Fills a sample's counters from a delta.
void fill_sample(TraceSample& sample, const MapTotals& delta);

}  // namespace np::probe
