#include "src/probe/map_totals.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>
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

// A per-CPU array's first `n` keys and their values (`cpus` per key) in one batch, where the
// kernel allows it (5.6): how many it read, or 0.
template <typename Value>
uint32_t lookup_array_batch(int fd, uint32_t n, std::vector<uint32_t>& keys,
                            std::vector<Value>& values) {
    static_assert(sizeof(Value) % 8 == 0);
    keys.resize(n);
    values.resize(size_t(n) * possible_cpus());
    uint32_t out_batch = 0, count = n;
    if (bpf_map_lookup_batch(fd, nullptr, &out_batch, keys.data(), values.data(), &count,
                             nullptr) != 0 &&
        errno != ENOENT)
        return 0;
    return count;
}

// Every key of a per-CPU array of `n` keys, its CPUs' values summed into `into[key]`: in one
// batch, else key by key. A sample reads the traffic array this way ten times a second: one
// system call instead of one per key.
template <typename Value>
void read_array_summed(int fd, uint32_t n, Value* into, void (*accumulate)(Value&, const Value&)) {
    std::vector<uint32_t> keys;
    std::vector<Value> values;
    if (lookup_array_batch(fd, n, keys, values) != n) {
        for (uint32_t k = 0; k < n; ++k) lookup_sum(fd, k, into[k], accumulate);
        return;
    }
    const int cpus = possible_cpus();
    for (uint32_t i = 0; i < n; ++i) {
        if (keys[i] >= n) continue;
        Value sum{};
        for (int c = 0; c < cpus; ++c) accumulate(sum, values[size_t(i) * cpus + c]);
        into[keys[i]] = sum;
    }
}

TrafficCounts counts(const np_traffic& t) {
    return {t.packets, t.bytes, t.wire_packets, t.wire_bytes};
}

void add_drop(np_drop& a, const np_drop& b) {
    a.packets += b.packets;
    a.bytes += b.bytes;
    a.skbs += b.skbs;
}

void add_stream(np_stream& a, const np_stream& b) {
    a.packets += b.packets;
    a.bytes += b.bytes;
    a.wire_packets += b.wire_packets;
    a.wire_bytes += b.wire_bytes;
}

// Every key of a hash map with its per-CPU values summed (at most its max_entries keys).
template <typename Key, typename Value, typename MapKey>
void read_hash(int fd, std::map<MapKey, Value>& into, MapKey (*key_of)(const Key&),
               void (*accumulate)(Value&, const Value&)) {
    Key key{}, next{};
    const Key* at = nullptr;
    while (bpf_map_get_next_key(fd, at, &next) == 0) {
        Value sum{};
        if (lookup_sum<Value>(fd, next, sum, accumulate)) into[key_of(next)] = sum;
        key = next;
        at = &key;
    }
}

// The streams array read whole: each CPU's owner of each slot and its counts, summed by stream
// (two CPUs may count one stream, each in its own copy of the slot).
void read_stream_slots(int fd, std::map<StreamKey, np_stream>& into) {
    std::vector<np_stream_slot> per_cpu(possible_cpus());
    for (uint32_t i = 0; i < NP_STREAM_SLOTS; ++i) {
        if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) != 0) continue;
        for (const auto& s : per_cpu) {
            if (!s.claimed) continue;
            for (uint8_t w = 0; w < NP_STREAM_WHERE; ++w)
                if (s.where[w].packets || s.where[w].wire_packets)
                    add_stream(into[{s.port, s.proto, w}], s.where[w]);
        }
    }
}

// Frees each slot whose owners (on every CPU) moved nothing in the phase just closed, and takes
// their counts out of `now`, the snapshot the next phase counts from. A slot one of whose owners
// still moves is left whole: freeing it on all CPUs at once is the only write that races no
// program (a stream that claimed a slot in the instant since the snapshot loses those packets).
// Returns the streams that owned the freed slots.
std::vector<ClaimedStream> free_idle_slots(int fd, const MapTotals& delta, MapTotals& now) {
    static_assert(sizeof(np_stream_slot) % 8 == 0);
    const auto moved = [&](uint16_t port, uint8_t proto) {
        for (uint8_t w = 0; w < NP_STREAM_WHERE; ++w)
            if (delta.streams.contains({port, proto, w})) return true;
        return false;
    };
    std::vector<np_stream_slot> per_cpu(possible_cpus());
    const std::vector<np_stream_slot> free_slot(possible_cpus());
    std::vector<ClaimedStream> freed;
    for (uint32_t i = 0; i < NP_STREAM_SLOTS; ++i) {
        if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) != 0) continue;
        bool owned = false, idle = true;
        for (const auto& s : per_cpu) {
            if (!s.claimed) continue;
            owned = true;
            idle = idle && !moved(s.port, s.proto);
        }
        if (!owned || !idle || bpf_map_update_elem(fd, &i, free_slot.data(), BPF_ANY) != 0)
            continue;
        for (const auto& s : per_cpu) {
            if (!s.claimed) continue;
            for (uint8_t w = 0; w < NP_STREAM_WHERE; ++w) now.streams.erase({s.port, s.proto, w});
            const ClaimedStream c{s.port, s.proto};
            if (std::find(freed.begin(), freed.end(), c) == freed.end()) freed.push_back(c);
        }
    }
    return freed;
}

// `later` less `earlier`, key by key; keys whose difference is all zero are removed.
template <typename Key, typename Value>
void subtract(std::map<Key, Value>& later, const std::map<Key, Value>& earlier,
              void (*minus)(Value&, const Value&), bool (*zero)(const Value&)) {
    for (auto it = later.begin(); it != later.end();) {
        if (auto e = earlier.find(it->first); e != earlier.end()) minus(it->second, e->second);
        it = zero(it->second) ? later.erase(it) : std::next(it);
    }
}

void minus_drop(np_drop& a, const np_drop& b) {
    a.packets -= b.packets;
    a.bytes -= b.bytes;
    a.skbs -= b.skbs;
}
bool zero_drop(const np_drop& d) {
    return d.packets == 0;
}
void minus_cpu_time(np_cpu_time& a, const np_cpu_time& b) {
    a.tool_ns -= b.tool_ns;
    a.tool_in_irq_ns -= b.tool_in_irq_ns;
    for (int v = 0; v < NP_SOFTIRQS; ++v) a.softirq_ns[v] -= b.softirq_ns[v];
    a.nic_irq_ns -= b.nic_irq_ns;
    a.samples -= b.samples;
}

void minus_stream(np_stream& a, const np_stream& b) {
    a.packets -= b.packets;
    a.bytes -= b.bytes;
    a.wire_packets -= b.wire_packets;
    a.wire_bytes -= b.wire_bytes;
}
bool zero_stream(const np_stream& s) {
    return s.packets == 0 && s.wire_packets == 0;
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

// The drops slot's parts: slot = ((reason * 2 + on_data_iface) * NP_PROTO_COUNT + proto) *
// NP_FLOW_COUNT + flow.
DropWhere drop_where(uint32_t slot) {
    const uint8_t flow = slot % NP_FLOW_COUNT;
    slot /= NP_FLOW_COUNT;
    const uint8_t proto = slot % NP_PROTO_COUNT;
    slot /= NP_PROTO_COUNT;
    return {slot / 2, slot % 2, proto, flow};
}

// The counts a sample needs: the traffic, the retransmits and the total number of drops.
void read_sample_counts(const ProbeMaps& maps, MapTotals& m) {
    if (maps.traffic >= 0) read_array_summed(maps.traffic, NP_TRAFFIC_SLOTS, m.traffic.data(), add);
    if (maps.retransmits >= 0) {
        read_array_summed<np_retrans>(maps.retransmits, NP_FLOW_COUNT, m.retransmits.data(),
                                      [](np_retrans& a, const np_retrans& b) {
                                          a.skbs += b.skbs;
                                          a.segments += b.segments;
                                      });
    }
    const uint32_t zero = 0;
    if (maps.drop_count >= 0)
        lookup_sum<uint64_t>(maps.drop_count, zero, m.drops_total,
                             [](uint64_t& a, const uint64_t& b) { a += b; });
}

// The drops array's slots that counted anything, summed over CPUs. The array is large
// (NP_DROP_SLOTS) and almost all zero: it is read in one batch.
void read_drop_slots(int fd, std::map<DropWhere, np_drop>& into) {
    const int cpus = possible_cpus();
    static std::vector<uint32_t> keys;
    static std::vector<np_drop> values;
    const uint32_t count = lookup_array_batch(fd, NP_DROP_SLOTS, keys, values);
    for (uint32_t i = 0; i < count; ++i) {
        np_drop sum{};
        for (int c = 0; c < cpus; ++c) add_drop(sum, values[size_t(i) * cpus + c]);
        if (sum.packets == 0) continue;
        into[drop_where(keys[i])] = sum;
    }
}

// What a phase needs beyond a sample's counts: the streams and the drops by stream, by site and
// by reason.
void read_drop_detail(const ProbeMaps& maps, MapTotals& m) {
    if (maps.streams >= 0) read_stream_slots(maps.streams, m.streams);
    if (maps.stream_drops >= 0) {
        read_hash<np_stream_drop_key, np_drop, StreamDropKey>(
            maps.stream_drops, m.stream_drops,
            [](const np_stream_drop_key& k) {
                return StreamDropKey{k.port, k.proto, k.location, k.reason, k.on_data_iface};
            },
            add_drop);
    }
    if (maps.drop_sites >= 0) {  // at most NP_DROP_SITES keys, read once per phase
        read_hash<np_drop_site_key, np_drop, DropSite>(
            maps.drop_sites, m.sites,
            [](const np_drop_site_key& k) {
                return DropSite{k.location, k.slot};
            },
            add_drop);
    }
    if (maps.drops >= 0) read_drop_slots(maps.drops, m.drops);
    if (maps.cpu_time >= 0) {
        static_assert(sizeof(np_cpu_time) % 8 == 0);
        std::vector<np_cpu_time> per_cpu(possible_cpus());
        const uint32_t zero = 0;
        if (bpf_map_lookup_elem(maps.cpu_time, &zero, per_cpu.data()) == 0)
            m.cpu_time = std::move(per_cpu);
    }
}

}  // namespace

std::vector<ClaimedStream> claimed_streams(int fd) {
    std::vector<ClaimedStream> out;
    std::vector<np_stream_slot> per_cpu(possible_cpus());
    for (uint32_t i = 0; i < NP_STREAM_SLOTS; ++i) {
        if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) != 0) continue;
        for (const auto& s : per_cpu) {
            const ClaimedStream c{s.port, s.proto};
            if (s.claimed && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
        }
    }
    return out;
}

MapTotals read_map_totals(const ProbeMaps& maps, bool with_drop_detail) {
    MapTotals m;
    read_sample_counts(maps, m);
    if (with_drop_detail) read_drop_detail(maps, m);
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
    for (size_t cpu = 0; cpu < d.cpu_time.size() && cpu < earlier.cpu_time.size(); ++cpu)
        minus_cpu_time(d.cpu_time[cpu], earlier.cpu_time[cpu]);
    subtract(d.drops, earlier.drops, minus_drop, zero_drop);
    subtract(d.sites, earlier.sites, minus_drop, zero_drop);
    subtract(d.streams, earlier.streams, minus_stream, zero_stream);
    subtract(d.stream_drops, earlier.stream_drops, minus_drop, zero_drop);
    return d;
}

SoftirqShares share_dispatch(const unsigned long long (&softirq_ns)[NP_SOFTIRQS]) {
    SoftirqShares s;
    s.net_tx_ns = softirq_ns[NP_SOFTIRQ_NET_TX];
    s.net_rx_ns = softirq_ns[NP_SOFTIRQ_NET_RX];
    for (int v = 0; v < NP_SOFTIRQS; ++v)
        if (v != NP_SOFTIRQ_NET_TX && v != NP_SOFTIRQ_NET_RX && v != NP_SOFTIRQ_DISPATCH)
            s.other_ns += softirq_ns[v];
    // The dispatcher's ticks go to the vectors in proportion to the ticks that landed in each
    // one's handler on this CPU; with none there, they stay "other".
    const unsigned long long dispatch = softirq_ns[NP_SOFTIRQ_DISPATCH];
    const long double handlers = static_cast<long double>(s.net_tx_ns) + s.net_rx_ns + s.other_ns;
    if (handlers <= 0) {
        s.other_ns += dispatch;
        return s;
    }
    const auto part = [&](unsigned long long ns) {
        return static_cast<unsigned long long>(static_cast<long double>(dispatch) * ns / handlers);
    };
    const unsigned long long tx = part(s.net_tx_ns), rx = part(s.net_rx_ns);
    s.net_tx_ns += tx;
    s.net_rx_ns += rx;
    s.other_ns += dispatch - tx - rx;
    return s;
}

void add_cpu_accounts(std::vector<CpuTime>& cpus, const std::vector<np_cpu_time>& delta,
                      bool at_kernel_tick) {
    const auto us = [](unsigned long long ns) { return static_cast<int64_t>(ns / 1000); };
    for (auto& c : cpus) {
        if (c.cpu < 0 || static_cast<size_t>(c.cpu) >= delta.size()) continue;
        const np_cpu_time& t = delta[static_cast<size_t>(c.cpu)];
        CpuAccount a;
        a.tool_us = us(t.tool_ns);
        // A NIC IRQ timed while a tool was current can outgrow the tool's sampled time.
        a.tool_in_irq_us = std::min(us(t.tool_in_irq_ns), a.tool_us);
        const SoftirqShares s = share_dispatch(t.softirq_ns);
        a.net_tx_us = us(s.net_tx_ns);
        a.net_rx_us = us(s.net_rx_ns);
        a.other_softirq_us = us(s.other_ns);
        a.nic_irq_us = us(t.nic_irq_ns);
        a.samples = static_cast<int64_t>(t.samples);
        a.at_kernel_tick = at_kernel_tick;
        c.account = a;
    }
}

static_assert(sizeof(np_echo_key) == 8 && NP_ECHO_STAMPS == kEchoStamps);
// A per-CPU value is read as a multiple of 8 bytes: the open bin is one already.
static_assert(sizeof(np_bin_open) == 32);

std::vector<EchoTrace> take_echoes(int fd) {
    std::vector<EchoTrace> out;
    if (fd < 0) return out;
    std::vector<np_echo_key> keys;
    np_echo_key key{}, next{};
    const np_echo_key* from = nullptr;
    while (keys.size() < NP_ECHOES && bpf_map_get_next_key(fd, from, &next) == 0) {
        keys.push_back(next);
        key = next;
        from = &key;
    }
    for (const auto& k : keys) {
        np_echo v{};
        if (bpf_map_lookup_elem(fd, &k, &v) != 0) continue;
        bpf_map_delete_elem(fd, &k);
        uint64_t first = UINT64_MAX;
        for (const auto ns : v.ns)
            if (ns) first = std::min<uint64_t>(first, ns);
        if (first == UINT64_MAX) continue;
        EchoTrace e;
        e.id = ntohs(k.id);
        e.seq = ntohs(k.seq);
        e.family = k.v6 ? 6 : 4;
        for (size_t i = 0; i < kEchoStamps; ++i)
            if (v.ns[i]) e.ns[i] = static_cast<int64_t>(v.ns[i] - first);
        out.push_back(e);
    }
    return out;
}

std::optional<PhaseBins> take_bins(const ProbeMaps& maps, int64_t duration_ms) {
    if (!maps.bins) return std::nullopt;
    // Stopped first, then a moment for a program that read the phase's start just before to
    // finish (they run to their end within microseconds, with bottom halves off): after it no
    // program adds to an open bin or to the bins until start_bins, so each CPU's open bin is
    // read whole and added once.
    const unsigned long long start = *maps.bins_start_ns;
    *maps.bins_start_ns = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const int cpus = possible_cpus();
    std::vector<np_bin_open> open(static_cast<size_t>(std::max(cpus, 1)));
    const uint32_t zero = 0;
    if (start && cpus > 0) {
        if (bpf_map_lookup_elem(maps.bin_open, &zero, open.data()) != 0) {
            std::fprintf(stderr,
                         "np-probe: cannot read the CPUs' open bins (%s): the phase's bins lack "
                         "each CPU's last millisecond\n",
                         std::strerror(errno));
            open.clear();
        }
        for (const np_bin_open& o : open) {
            if (o.start_ns != start || o.at >= NP_BINS) continue;
            maps.bins[o.at].tx_wire_bytes += o.bin.tx_wire_bytes;
            maps.bins[o.at].rx_wire_bytes += o.bin.rx_wire_bytes;
        }
    }
    PhaseBins out;
    const auto n = static_cast<size_t>(std::clamp<int64_t>(duration_ms, 0, NP_BINS));
    size_t last = 0;
    for (size_t i = 0; i < n; ++i)
        if (maps.bins[i].tx_wire_bytes || maps.bins[i].rx_wire_bytes) last = i + 1;
    for (size_t i = 0; i < last; ++i) {
        out.tx_wire_bytes.push_back(maps.bins[i].tx_wire_bytes);
        out.rx_wire_bytes.push_back(maps.bins[i].rx_wire_bytes);
    }
    return out;
}

void start_bins(const ProbeMaps& maps) {
    if (!maps.bins) return;
    *maps.bins_start_ns = 0;  // no packet adds to them while they are emptied
    std::memset(static_cast<void*>(maps.bins), 0, sizeof(np_bin) * NP_BINS);
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    *maps.bins_start_ns =
        static_cast<uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<uint64_t>(now.tv_nsec);
}

std::vector<ClaimedStream> prune_idle_streams(const ProbeMaps& maps, const MapTotals& delta,
                                              MapTotals& now) {
    std::vector<ClaimedStream> freed;
    if (maps.streams >= 0) freed = free_idle_slots(maps.streams, delta, now);
    for (auto it = now.stream_drops.begin(); it != now.stream_drops.end();) {
        if (delta.stream_drops.contains(it->first)) {
            ++it;
            continue;
        }
        const auto [port, proto, location, reason, on_iface] = it->first;
        np_stream_drop_key k{location, reason, port, proto, on_iface};
        if (maps.stream_drops >= 0) bpf_map_delete_elem(maps.stream_drops, &k);
        it = now.stream_drops.erase(it);
    }
    return freed;
}

namespace {

// How a drop is named: by the kernel's reason, or (`location` set) by the function that freed it.
DropReasonCount named_drop(uint32_t reason, uint64_t location, const Naming& naming) {
    DropReasonCount r;
    if (location == 0) {
        r.reason = reason == NP_DROP_REASON_SLOTS - 1 ? std::string("OTHER_SUBSYSTEM")
                                                      : naming.btf->drop_reason_name(reason);
        r.unattributed = r.reason == kUnattributedDropReason;
        return r;
    }
    r.function = naming.symbols && !naming.symbols->empty() ? naming.symbols->function_at(location)
                                                            : fmt::format("{:#x}", location);
    // At the full tier only the drops without a reason are counted by site.
    if (naming.tier == ProbeTier::full) {
        r.reason = kUnattributedDropReason;
        r.unattributed = true;
    }
    return r;
}

std::vector<DropReasonCount> largest_first(std::map<std::string, DropReasonCount>&& by_name) {
    std::vector<DropReasonCount> out;
    for (auto& [name, r] : by_name) {
        std::sort(r.where.begin(), r.where.end(), [](const DropLocation& a, const DropLocation& b) {
            return a.packets > b.packets;
        });
        out.push_back(std::move(r));
    }
    std::stable_sort(
        out.begin(), out.end(),
        [](const DropReasonCount& a, const DropReasonCount& b) { return a.packets > b.packets; });
    return out;
}

// The measured flow stream by stream, as far as the tier measures it.
void fill_streams(PhaseTrace& phase, const MapTotals& delta, const Naming& naming) {
    const TierMeasures m = measures(naming.tier);
    std::map<std::pair<uint8_t, uint16_t>, StreamTrace> by_stream;
    const auto stream = [&](uint8_t proto, uint16_t port) -> StreamTrace& {
        StreamTrace& s = by_stream[{proto, port}];
        s.transport = kTraceProtocols[std::min<unsigned>(proto, NP_PROTO_OTHER)];
        s.port = port;
        if (m.xmit && !s.xmit) s.xmit.emplace();
        return s;
    };
    for (const auto& [key, v] : delta.streams) {
        const auto [port, proto, where] = key;
        StreamTrace& s = stream(proto, port);
        const TrafficCounts c{v.packets, v.bytes, v.wire_packets, v.wire_bytes};
        if (where == NP_DIR_TX && m.flows) s.tx += c;
        if (where == NP_DIR_RX && m.flows) s.rx += c;
        if (where == NP_DIR_XMIT && m.xmit) *s.xmit += c;
        if (where == NP_STREAM_RETRANS && m.retransmits) s.retransmits += v.wire_packets;
    }
    std::map<std::pair<uint8_t, uint16_t>, std::map<std::string, DropReasonCount>> drops;
    if (m.drops) {
        for (const auto& [key, d] : delta.stream_drops) {
            const auto [port, proto, location, reason, on_iface] = key;
            stream(proto, port);
            DropReasonCount named = named_drop(reason, location, naming);
            const std::string name = named.reason + "@" + named.function;
            DropReasonCount& r =
                drops[{proto, port}].try_emplace(name, std::move(named)).first->second;
            r.packets += d.packets;
            r.bytes += d.bytes;
            r.skbs += d.skbs;
            r.where.push_back({on_iface ? naming.iface : std::string(),
                               on_iface ? naming.ifindex : 0,
                               kTraceProtocols[std::min<unsigned>(proto, NP_PROTO_OTHER)],
                               kTraceFlows[NP_FLOW_IPERF], d.packets, d.bytes, d.skbs});
        }
    }
    phase.streams.clear();
    for (auto& [key, s] : by_stream) {
        if (auto it = drops.find(key); it != drops.end())
            s.drops = largest_first(std::move(it->second));
        phase.streams.push_back(std::move(s));
    }
}

}  // namespace

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
        add(named_drop(reason, 0, naming), on_data_iface, proto, flow, d);
    }
    for (const auto& [site, d] : delta.sites) {
        // A site's slot is of reason 0: the code address names the drop instead.
        const auto [reason, on_data_iface, proto, flow] = drop_where(site.second);
        add(named_drop(0, site.first, naming), on_data_iface, proto, flow, d);
    }
    phase.drops = largest_first(std::move(by_name));
    fill_streams(phase, delta, naming);
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
