#pragma once
// The data iface's queueing discipline as the kernel reports it over rtnetlink (what `tc -s
// qdisc show` prints): the root qdisc's kind, the rate it shapes to if it is a shaper (tbf, or
// htb's top class), and its cumulative drop/overlimit/requeue counters. A shaper on the sender
// is where a path "slower than the NIC" can be; its overlimits say it held traffic back.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace np::probe {

struct QdiscState {
    std::string root_kind;             // "tbf", "htb", "fq_codel", "mq", "noqueue", …
    std::optional<uint64_t> rate_bps;  // the shaper's rate, when the root shapes
    // Cumulative counters of the root qdisc (mq sums its children's): drops, overlimits,
    // requeues.
    std::map<std::string, int64_t> counters;
    // Packets and bytes in the queue right now (gauges, not counters).
    int64_t queued_packets = 0;
    int64_t queued_bytes = 0;
};

// Empty (kind "", no counters) when the kernel does not answer: the trace then says nothing
// about the qdisc rather than failing the probe.
QdiscState read_qdisc_state(uint32_t ifindex);

}  // namespace np::probe
