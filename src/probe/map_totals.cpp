#include "src/probe/map_totals.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace np::probe {
namespace {

constexpr uint64_t kFrameBucketBounds[NP_FRAME_BUCKETS] = NP_FRAME_BUCKET_BOUNDS;

int possible_cpus() {
    static const int n = libbpf_num_possible_cpus();
    return n;
}

void add(np_traffic& a, const np_traffic& b) {
    a.packets += b.packets;
    a.bytes += b.bytes;
    a.wire_packets += b.wire_packets;
    a.wire_bytes += b.wire_bytes;
    for (int i = 0; i < NP_FRAME_BUCKETS; ++i) a.frames_by_size[i] += b.frames_by_size[i];
}

void sub(np_traffic& a, const np_traffic& b) {
    a.packets -= b.packets;
    a.bytes -= b.bytes;
    a.wire_packets -= b.wire_packets;
    a.wire_bytes -= b.wire_bytes;
    for (int i = 0; i < NP_FRAME_BUCKETS; ++i) a.frames_by_size[i] -= b.frames_by_size[i];
}

// Per-CPU values of one key, summed. Values of per-CPU maps come as one slot per possible
// CPU, each rounded up to 8 bytes (all of ours are multiples of 8 already).
template <typename Value, typename Key>
bool lookup_sum(int map_fd, const Key& key, Value& sum, void (*accumulate)(Value&, const Value&)) {
    static_assert(sizeof(Value) % 8 == 0);
    std::vector<Value> per_cpu(possible_cpus());
    if (bpf_map_lookup_elem(map_fd, &key, per_cpu.data()) != 0) return false;
    sum = Value{};
    for (const auto& v : per_cpu) accumulate(sum, v);
    return true;
}

TrafficCounts counts(const np_traffic& t) {
    return {t.packets, t.bytes, t.wire_packets, t.wire_bytes};
}

void fill_direction(DirectionTraffic& d, const MapTotals& delta, unsigned dir) {
    std::array<uint64_t, NP_FRAME_BUCKETS> frames{};
    for (unsigned p = 0; p < NP_PROTO_COUNT; ++p) {
        for (unsigned f = 0; f < NP_FLOW_COUNT; ++f) {
            const np_traffic& t = delta.traffic[np_traffic_slot(dir, p, f)];
            const TrafficCounts c = counts(t);
            d.total += c;
            d.by_protocol[kTraceProtocols[p]] += c;
            // The measured iperf flow is TCP or UDP; its key names which.
            d.by_flow[f == NP_FLOW_IPERF ? std::string("iperf_") + kTraceProtocols[p]
                                         : std::string(kTraceFlows[f])] += c;
            for (int b = 0; b < NP_FRAME_BUCKETS; ++b) frames[b] += t.frames_by_size[b];
        }
    }
    d.frame_sizes.clear();
    for (int b = 0; b < NP_FRAME_BUCKETS; ++b)
        d.frame_sizes.push_back({kFrameBucketBounds[b], frames[b]});
}

}  // namespace

MapTotals read_map_totals(const ProbeMaps& maps, bool with_drop_detail) {
    MapTotals m;
    if (maps.traffic >= 0)
        for (uint32_t k = 0; k < NP_TRAFFIC_SLOTS; ++k)
            lookup_sum(maps.traffic, k, m.traffic[k], add);
    if (maps.retransmits >= 0) {
        for (uint32_t k = 0; k < NP_FLOW_COUNT; ++k) {
            lookup_sum<np_retrans>(maps.retransmits, k, m.retransmits[k],
                                   [](np_retrans& a, const np_retrans& b) {
                                       a.skbs += b.skbs;
                                       a.segments += b.segments;
                                   });
        }
    }
    const uint32_t zero = 0;
    if (maps.drop_count >= 0)
        lookup_sum<uint64_t>(maps.drop_count, zero, m.drops_total,
                             [](uint64_t& a, const uint64_t& b) { a += b; });
    if (!with_drop_detail) return m;
    const auto add_drop = [](np_drop& a, const np_drop& b) {
        a.packets += b.packets;
        a.bytes += b.bytes;
        a.skbs += b.skbs;
    };
    if (maps.drop_sites >= 0) {
        // At most NP_DROP_SITES keys, read once per phase.
        np_drop_site_key key{}, next{};
        const np_drop_site_key* at = nullptr;
        while (bpf_map_get_next_key(maps.drop_sites, at, &next) == 0) {
            np_drop sum{};
            if (lookup_sum<np_drop>(maps.drop_sites, next, sum, add_drop) && sum.packets > 0)
                m.sites[{next.location, next.slot}] = sum;
            key = next;
            at = &key;
        }
    }
    if (maps.drops < 0) return m;
    // The drops array is large (NP_DROP_SLOTS) and almost all zero: read it in one batch.
    const int cpus = possible_cpus();
    static std::vector<uint32_t> keys(NP_DROP_SLOTS);
    static std::vector<np_drop> values(size_t(NP_DROP_SLOTS) * cpus);
    uint32_t out_batch = 0, count = NP_DROP_SLOTS;
    if (bpf_map_lookup_batch(maps.drops, nullptr, &out_batch, keys.data(), values.data(), &count,
                             nullptr) != 0 &&
        errno != ENOENT) {
        count = 0;
    }
    for (uint32_t i = 0; i < count; ++i) {
        np_drop sum{};
        for (int c = 0; c < cpus; ++c) add_drop(sum, values[size_t(i) * cpus + c]);
        if (sum.packets == 0) continue;
        // slot = ((reason * 2 + on_data_iface) * NP_PROTO_COUNT + proto) * NP_FLOW_COUNT + flow
        uint32_t k = keys[i];
        const uint8_t flow = k % NP_FLOW_COUNT;
        k /= NP_FLOW_COUNT;
        const uint8_t proto = k % NP_PROTO_COUNT;
        k /= NP_PROTO_COUNT;
        m.drops[{k / 2, k % 2, proto, flow}] = sum;
    }
    return m;
}

MapTotals operator-(const MapTotals& later, const MapTotals& earlier) {
    MapTotals d = later;
    for (size_t i = 0; i < d.traffic.size(); ++i) sub(d.traffic[i], earlier.traffic[i]);
    for (size_t i = 0; i < d.retransmits.size(); ++i) {
        d.retransmits[i].skbs -= earlier.retransmits[i].skbs;
        d.retransmits[i].segments -= earlier.retransmits[i].segments;
    }
    d.drops_total -= earlier.drops_total;
    for (auto it = d.drops.begin(); it != d.drops.end();) {
        if (auto e = earlier.drops.find(it->first); e != earlier.drops.end()) {
            it->second.packets -= e->second.packets;
            it->second.bytes -= e->second.bytes;
            it->second.skbs -= e->second.skbs;
        }
        it = it->second.packets == 0 ? d.drops.erase(it) : std::next(it);
    }
    for (auto it = d.sites.begin(); it != d.sites.end();) {
        if (auto e = earlier.sites.find(it->first); e != earlier.sites.end()) {
            it->second.packets -= e->second.packets;
            it->second.bytes -= e->second.bytes;
            it->second.skbs -= e->second.skbs;
        }
        it = it->second.packets == 0 ? d.sites.erase(it) : std::next(it);
    }
    return d;
}

void fill_phase(PhaseTrace& phase, const MapTotals& delta, const Naming& naming) {
    const TierMeasures m = measures(naming.tier);
    if (m.flows) {
        fill_direction(phase.tx, delta, NP_DIR_TX);
        fill_direction(phase.rx, delta, NP_DIR_RX);
    }
    phase.xmit.reset();
    if (m.xmit) {
        phase.xmit.emplace();
        fill_direction(*phase.xmit, delta, NP_DIR_XMIT);
    }
    phase.retransmits = {};
    if (m.retransmits) {
        for (unsigned f = 0; f < NP_FLOW_COUNT; ++f) {
            phase.retransmits.segments += delta.retransmits[f].segments;
            phase.retransmits.segments_by_flow[kTraceFlows[f]] = delta.retransmits[f].segments;
        }
    }
    // By reason (full) or by the function that freed them (drops-without-reasons).
    std::map<std::string, DropReasonCount> by_name;
    const auto add = [&](DropReasonCount&& named, uint32_t on_data_iface, uint8_t proto,
                         uint8_t flow, const np_drop& d) {
        const std::string key = named.reason + "@" + named.function;
        DropReasonCount& r = by_name.try_emplace(key, std::move(named)).first->second;
        r.packets += d.packets;
        r.bytes += d.bytes;
        r.skbs += d.skbs;
        const bool on_iface = on_data_iface != 0;
        r.where.push_back({on_iface ? naming.iface : std::string(), on_iface ? naming.ifindex : 0,
                           kTraceProtocols[std::min<unsigned>(proto, NP_PROTO_OTHER)],
                           kTraceFlows[std::min<unsigned>(flow, NP_FLOW_COUNT - 1)], d.packets,
                           d.bytes, d.skbs});
    };
    for (const auto& [where, d] : delta.drops) {
        const auto [reason, on_data_iface, proto, flow] = where;
        DropReasonCount r;
        r.reason = reason == NP_DROP_REASON_SLOTS - 1 ? std::string("OTHER_SUBSYSTEM")
                                                      : naming.btf->drop_reason_name(reason);
        r.unattributed = r.reason == kUnattributedDropReason;
        add(std::move(r), on_data_iface, proto, flow, d);
    }
    for (const auto& [site, d] : delta.sites) {
        // slot = ((0 * 2 + on_data_iface) * NP_PROTO_COUNT + proto) * NP_FLOW_COUNT + flow
        const uint32_t k = site.second;
        DropReasonCount r;
        r.function = naming.symbols && !naming.symbols->empty()
                         ? naming.symbols->function_at(site.first)
                         : fmt::format("{:#x}", site.first);
        // At the full tier only the drops without a reason are counted by site.
        if (naming.tier == ProbeTier::full) {
            r.reason = kUnattributedDropReason;
            r.unattributed = true;
        }
        add(std::move(r), (k / NP_FLOW_COUNT) / NP_PROTO_COUNT,
            (k / NP_FLOW_COUNT) % NP_PROTO_COUNT, k % NP_FLOW_COUNT, d);
    }
    phase.drops.clear();
    for (auto& [name, r] : by_name) {
        std::sort(r.where.begin(), r.where.end(), [](const DropLocation& a, const DropLocation& b) {
            return a.packets > b.packets;
        });
        phase.drops.push_back(std::move(r));
    }
    std::stable_sort(
        phase.drops.begin(), phase.drops.end(),
        [](const DropReasonCount& a, const DropReasonCount& b) { return a.packets > b.packets; });
}

void fill_sample(TraceSample& s, const MapTotals& delta) {
    for (unsigned p = 0; p < NP_PROTO_COUNT; ++p) {
        for (unsigned f = 0; f < NP_FLOW_COUNT; ++f) {
            const np_traffic& tx = delta.traffic[np_traffic_slot(NP_DIR_TX, p, f)];
            const np_traffic& rx = delta.traffic[np_traffic_slot(NP_DIR_RX, p, f)];
            s.tx_wire_packets += tx.wire_packets;
            s.tx_wire_bytes += tx.wire_bytes;
            s.rx_wire_packets += rx.wire_packets;
            s.rx_wire_bytes += rx.wire_bytes;
        }
    }
    for (const auto& r : delta.retransmits) s.retransmits += r.segments;
    s.drops = delta.drops_total;
}

}  // namespace np::probe
