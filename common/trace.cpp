#include "common/trace.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json_document.hpp"
#include "common/json_field.hpp"
#include "common/version.hpp"

namespace np {

using nlohmann::json;

TrafficCounts& TrafficCounts::operator+=(const TrafficCounts& o) {
    packets += o.packets;
    bytes += o.bytes;
    wire_packets += o.wire_packets;
    wire_bytes += o.wire_bytes;
    return *this;
}

uint64_t PhaseTrace::drops_with_reason(std::string_view reason) const {
    uint64_t n = 0;
    for (const auto& d : drops)
        if (d.reason == reason) n += d.packets;
    return n;
}

std::optional<int64_t> EchoTrace::between(EchoStamp from, EchoStamp to) const {
    const auto a = at(from), b = at(to);
    if (!a || !b) return std::nullopt;
    return *b - *a;
}

const StreamTrace* PhaseTrace::find_stream(std::string_view transport, uint16_t port) const {
    for (const auto& s : streams)
        if (s.transport == transport && s.port == port) return &s;
    return nullptr;
}

uint64_t PhaseTrace::drops_total() const {
    uint64_t n = 0;
    for (const auto& d : drops) n += d.packets;
    return n;
}

const char* to_string(ProbeTier t) {
    switch (t) {
        case ProbeTier::full:
            return "full";
        case ProbeTier::drops_without_reasons:
            return "drops-without-reasons";
        case ProbeTier::tc_counters:
            return "tc-counters";
        case ProbeTier::kernel_counters:
            return "kernel-counters";
    }
    return "full";
}

std::optional<ProbeTier> parse_tier(std::string_view name) {
    for (ProbeTier t : {ProbeTier::full, ProbeTier::drops_without_reasons, ProbeTier::tc_counters,
                        ProbeTier::kernel_counters})
        if (name == to_string(t)) return t;
    return std::nullopt;
}

TierMeasures measures(ProbeTier t) {
    switch (t) {
        case ProbeTier::full:
            return {true, true, true, true, true};
        case ProbeTier::drops_without_reasons:
            return {true, true, true, true, false};
        case ProbeTier::tc_counters:
            return {true, false, false, false, false};
        case ProbeTier::kernel_counters:
            break;
    }
    return {};
}

const PhaseTrace* Trace::find_phase(std::string_view name) const {
    for (const auto& p : phases)
        if (p.name == name) return &p;
    return nullptr;
}

// ---- writing ----

json to_json(const TrafficCounts& c) {
    return {{"packets", c.packets},
            {"bytes", c.bytes},
            {"wire_packets", c.wire_packets},
            {"wire_bytes", c.wire_bytes}};
}

namespace {

json to_json(const DirectionTraffic& d) {
    json j = to_json(d.total);
    json& protocols = j["by_protocol"] = json::object();
    for (const auto& [k, v] : d.by_protocol) protocols[k] = to_json(v);
    json& flows = j["by_flow"] = json::object();
    for (const auto& [k, v] : d.by_flow) flows[k] = to_json(v);
    json& sizes = j["frame_sizes"] = json::array();
    for (const auto& b : d.frame_sizes)
        sizes.push_back({{"max_frame_bytes", b.max_frame_bytes}, {"frames", b.frames}});
    return j;
}

}  // namespace

// The trace's `tcp` keys and the TcpAccount fields they hold, for the writer and the reader.
constexpr std::pair<const char*, int64_t TcpAccount::*> kTcpAccountFields[] = {
    {"local_port", &TcpAccount::local_port},
    {"remote_port", &TcpAccount::remote_port},
    {"bytes_acked", &TcpAccount::bytes_acked},
    {"bytes_received", &TcpAccount::bytes_received},
    {"busy_us", &TcpAccount::busy_us},
    {"rwnd_limited_us", &TcpAccount::rwnd_limited_us},
    {"sndbuf_limited_us", &TcpAccount::sndbuf_limited_us},
    {"snd_cwnd", &TcpAccount::snd_cwnd},
    {"snd_mss", &TcpAccount::snd_mss},
    {"rtt_us", &TcpAccount::rtt_us},
    {"min_rtt_us", &TcpAccount::min_rtt_us},
    {"delivery_rate_bps", &TcpAccount::delivery_rate_bps},
    {"total_retrans", &TcpAccount::total_retrans},
    {"snd_wnd", &TcpAccount::snd_wnd}};

// A CPU's account (CpuAccount), key by key.
constexpr std::pair<const char*, int64_t CpuAccount::*> kCpuAccountFields[] = {
    {"tool_us", &CpuAccount::tool_us},
    {"tool_in_irq_us", &CpuAccount::tool_in_irq_us},
    {"net_tx_us", &CpuAccount::net_tx_us},
    {"net_rx_us", &CpuAccount::net_rx_us},
    {"other_softirq_us", &CpuAccount::other_softirq_us},
    {"nic_irq_us", &CpuAccount::nic_irq_us},
    {"samples", &CpuAccount::samples}};

namespace {

// Drops by reason, as a phase's "by_reason" and a stream's "drops" hold them.
json to_json(const std::vector<DropReasonCount>& drops) {
    json drops_by_reason = json::array();
    for (const auto& d : drops) {
        json where = json::array();
        for (const auto& w : d.where) {
            where.push_back({{"iface", w.iface},
                             {"ifindex", w.ifindex},
                             {"protocol", w.protocol},
                             {"flow", w.flow},
                             {"packets", w.packets},
                             {"bytes", w.bytes},
                             {"skbs", w.skbs}});
        }
        json entry = {{"reason", d.reason},   {"unattributed", d.unattributed},
                      {"packets", d.packets}, {"bytes", d.bytes},
                      {"skbs", d.skbs},       {"where", where}};
        if (!d.function.empty()) entry["function"] = d.function;
        drops_by_reason.push_back(std::move(entry));
    }
    return drops_by_reason;
}

json to_json(const StreamTrace& s) {
    json j = {{"transport", s.transport},     {"port", s.port},
              {"tx", to_json(s.tx)},          {"rx", to_json(s.rx)},
              {"retransmits", s.retransmits}, {"drops", to_json(s.drops)}};
    if (s.xmit) j["xmit"] = to_json(*s.xmit);
    return j;
}

}  // namespace

json to_json(const PhaseTrace& p) {
    uint64_t unattributed = 0;
    for (const auto& d : p.drops)
        if (d.unattributed) unattributed += d.packets;
    json retrans_by_flow = json::object();
    for (const auto& [k, v] : p.retransmits.segments_by_flow) retrans_by_flow[k] = v;
    json j = {{"name", p.name},
              {"start_ms", p.start_ms},
              {"end_ms", p.end_ms},
              {"duration_ms", p.duration_ms()},
              {"tx", to_json(p.tx)},
              {"rx", to_json(p.rx)},
              {"retransmits", {{"segments", p.retransmits.segments}, {"by_flow", retrans_by_flow}}},
              {"drops",
               {{"total_packets", p.drops_total()},
                {"unattributed_packets", unattributed},
                {"by_reason", to_json(p.drops)}}},
              {"kernel_counters",
               {{"nstat", p.nstat},
                {"ethtool", p.ethtool_stats},
                {"softnet_dropped", p.softnet_dropped},
                {"qdisc", p.qdisc_stats}}}};
    if (p.xmit) j["xmit"] = to_json(*p.xmit);
    json cpus = json::array();
    for (const auto& c : p.cpus) {
        json cpu = {
            {"cpu", c.cpu},           {"busy_ms", c.busy_ms},        {"softirq_ms", c.softirq_ms},
            {"irq_ms", c.irq_ms},     {"idle_ms", c.idle_ms},        {"steal_ms", c.steal_ms},
            {"niced_ms", c.niced_ms}, {"unticked_ms", c.unticked_ms}};
        if (const auto& a = c.account) {
            json account = json::object();
            for (const auto& [key, field] : kCpuAccountFields) account[key] = (*a).*field;
            account["sampled_at"] = a->at_kernel_tick ? "kernel_tick" : "probe_timer";
            cpu["account"] = std::move(account);
        }
        cpus.push_back(std::move(cpu));
    }
    j["cpus"] = std::move(cpus);
    j["dev_stats"] = p.dev_stats;
    json processes = json::array();
    for (const auto& pr : p.processes)
        processes.push_back(
            {{"pid", pr.pid},
             {"comm", pr.comm},
             {"watched_ms", pr.watched_ms},
             {"cpu_ms", pr.cpu_ms},
             {"cgroup", pr.cgroup},
             {"quota_cores", pr.quota_cores ? json(*pr.quota_cores) : json(nullptr)},
             {"periods", pr.periods},
             {"throttled_periods", pr.throttled_periods},
             {"throttled_ms", pr.throttled_ms},
             {"cpu_wait_ms", pr.cpu_wait_ms ? json(*pr.cpu_wait_ms) : json(nullptr)}});
    j["processes"] = std::move(processes);
    if (p.tcp) {
        json tcp = json::object();
        for (const auto& [key, field] : kTcpAccountFields) tcp[key] = (*p.tcp).*field;
        tcp["max_pacing_rate_bps"] = p.tcp->max_pacing_rate_bps;
        j["tcp"] = std::move(tcp);
    }
    json streams = json::array();
    for (const auto& st : p.streams) streams.push_back(to_json(st));
    j["streams"] = std::move(streams);
    json echoes = json::array();
    for (const auto& e : p.echoes) echoes.push_back(to_json(e));
    j["echoes"] = std::move(echoes);
    if (p.bins)
        j["bins"] = {{"bin_ms", p.bins->bin_ms},
                     {"tx_wire_bytes", p.bins->tx_wire_bytes},
                     {"rx_wire_bytes", p.bins->rx_wire_bytes}};
    return j;
}

json to_json(const EchoTrace& e) {
    json ns = json::object();
    for (size_t i = 0; i < kEchoStamps; ++i)
        if (e.ns[i]) ns[kEchoStampNames[i]] = *e.ns[i];
    return {{"id", e.id}, {"seq", e.seq}, {"family", e.family}, {"ns", std::move(ns)}};
}

json to_json(const TraceSample& s) {
    return {{"t_ms", s.t_ms},
            {"interval_ms", s.interval_ms},
            {"phase", s.phase},
            {"tx_wire_packets", s.tx_wire_packets},
            {"rx_wire_packets", s.rx_wire_packets},
            {"tx_wire_bytes", s.tx_wire_bytes},
            {"rx_wire_bytes", s.rx_wire_bytes},
            {"retransmits", s.retransmits},
            {"drops", s.drops}};
}

json to_json(const Trace& t) {
    json phases = json::array();
    for (const auto& p : t.phases) phases.push_back(to_json(p));
    json samples = json::array();
    for (const auto& s : t.samples) samples.push_back(to_json(s));
    json cost = json::array();
    for (const auto& c : t.probe_cost) {
        const auto timed = [&](auto v) { return c.timed ? json(v) : json(nullptr); };
        cost.push_back({{"program", c.program},
                        {"run_cnt", timed(c.run_cnt)},
                        {"recursion_misses", c.recursion_misses},
                        {"run_time_ns", timed(c.run_time_ns)},
                        {"ns_per_run", timed(c.ns_per_run())}});
    }
    json link = {
        {"carrier", t.link.carrier},
        {"speed_mbps", t.link.speed_mbps ? json(*t.link.speed_mbps) : json(nullptr)},
        {"duplex", t.link.duplex},
        {"mtu_bytes", t.link.mtu_bytes},
        {"driver", t.link.driver},
        {"qdisc", t.link.qdisc},
        {"qdisc_rate_bps", t.link.qdisc_rate_bps ? json(*t.link.qdisc_rate_bps) : json(nullptr)}};
    return {{"schema", t.schema},
            {"generator", generator("np-probe")},
            {"node", t.node},
            {"role", t.role},
            {"iface", t.iface},
            {"ifindex", t.ifindex},
            {"netns_inode", t.netns_inode},
            {"kernel", t.kernel},
            {"tier", to_string(t.tier)},
            {"tier_why", t.tier_why},
            {"link", link},
            {"iperf_port", t.iperf_port},
            {"sample_interval_ms", t.sample_interval_ms},
            {"started_at", t.started_at},
            {"duration_ms", t.duration_ms},
            {"phases", phases},
            {"samples", samples},
            {"probe_cost", cost}};
}

// ---- reading ----

namespace {

TrafficCounts read_counts(const JsonField& n) {
    TrafficCounts c;
    c.packets = n.at("packets").u64();
    c.bytes = n.at("bytes").u64();
    c.wire_packets = n.at("wire_packets").u64();
    c.wire_bytes = n.at("wire_bytes").u64();
    return c;
}

DirectionTraffic read_direction(const JsonField& n) {
    DirectionTraffic d;
    d.total = read_counts(n);
    const JsonField protocols = n.at("by_protocol");
    for (const auto& k : protocols.keys()) d.by_protocol[k] = read_counts(protocols.at(k));
    const JsonField flows = n.at("by_flow");
    for (const auto& k : flows.keys()) d.by_flow[k] = read_counts(flows.at(k));
    const JsonField sizes = n.at("frame_sizes");
    for (size_t i = 0; i < sizes.array_size(); ++i) {
        d.frame_sizes.push_back(
            {sizes.at(i).at("max_frame_bytes").u64(), sizes.at(i).at("frames").u64()});
    }
    return d;
}

std::map<std::string, int64_t> read_counter_map(const JsonField& n) {
    std::map<std::string, int64_t> m;
    for (const auto& k : n.keys()) m[k] = n.at(k).i64();
    return m;
}

std::vector<DropReasonCount> read_drops(const JsonField& reasons) {
    std::vector<DropReasonCount> drops;
    for (size_t i = 0; i < reasons.array_size(); ++i) {
        const JsonField d = reasons.at(i);
        DropReasonCount c;
        c.reason = d.at("reason").str();
        c.function = d.optional_str("function").value_or("");
        if (c.reason.empty() && c.function.empty())
            d.at("reason").fail("is empty and no function names the drop");
        c.unattributed = d.at("unattributed").boolean();
        c.packets = d.at("packets").u64();
        c.bytes = d.at("bytes").u64();
        if (const auto skbs = d.find("skbs"))
            c.skbs = skbs->u64();  // absent before probes counted them
        const JsonField where = d.at("where");
        for (size_t w = 0; w < where.array_size(); ++w) {
            const JsonField l = where.at(w);
            const auto skbs = l.find("skbs");
            c.where.push_back({l.at("iface").str(), static_cast<uint32_t>(l.at("ifindex").u64()),
                               l.at("protocol").str(), l.at("flow").str(), l.at("packets").u64(),
                               l.at("bytes").u64(), skbs ? skbs->u64() : 0});
        }
        drops.push_back(std::move(c));
    }
    return drops;
}

std::optional<TrafficCounts> read_optional_counts(const JsonField& n, const char* key) {
    if (const auto c = n.find(key)) return read_counts(*c);
    return std::nullopt;
}

std::vector<StreamTrace> read_streams(const JsonField& streams) {
    std::vector<StreamTrace> out;
    for (size_t i = 0; i < streams.array_size(); ++i) {
        const JsonField j = streams.at(i);
        StreamTrace s;
        s.transport = j.at("transport").str();
        if (s.transport != "tcp" && s.transport != "udp")
            j.at("transport").fail("is not tcp or udp");
        const uint64_t port = j.at("port").u64();
        if (port > 65535) j.at("port").fail("is not a port (0 to 65535)");
        s.port = static_cast<uint16_t>(port);
        s.tx = read_counts(j.at("tx"));
        s.rx = read_counts(j.at("rx"));
        s.xmit = read_optional_counts(j, "xmit");
        s.retransmits = j.at("retransmits").u64();
        s.drops = read_drops(j.at("drops"));
        out.push_back(std::move(s));
    }
    return out;
}

// The phase's ICMP echoes: each names its echo and has at least one stamp, none negative.
std::vector<EchoTrace> read_echoes(const JsonField& echoes) {
    if (echoes.array_size() > kMaxPhaseEchoes)
        echoes.fail("holds more than " + std::to_string(kMaxPhaseEchoes) + " echoes");
    std::vector<EchoTrace> out;
    for (size_t i = 0; i < echoes.array_size(); ++i) {
        const JsonField j = echoes.at(i);
        EchoTrace e;
        for (const auto& [key, field] :
             {std::pair{"id", &EchoTrace::id}, {"seq", &EchoTrace::seq}}) {
            const uint64_t v = j.at(key).u64();
            if (v > 65535) j.at(key).fail("is not 0 to 65535");
            e.*field = static_cast<uint16_t>(v);
        }
        const uint64_t family = j.at("family").u64();
        if (family != 4 && family != 6) j.at("family").fail("is not 4 or 6");
        e.family = static_cast<int>(family);
        const JsonField ns = j.at("ns");
        for (const auto& key : ns.keys()) {
            const auto* name = std::find_if(std::begin(kEchoStampNames), std::end(kEchoStampNames),
                                            [&](const char* n) { return key == n; });
            if (name == std::end(kEchoStampNames))
                ns.at(key).fail(
                    "is not a stamp (request_tx, request_xmit, request_rx, "
                    "reply_tx, reply_xmit or reply_rx)");
            const int64_t v = ns.at(key).i64();
            if (v < 0) ns.at(key).fail("is negative");
            e.ns[static_cast<size_t>(name - std::begin(kEchoStampNames))] = v;
        }
        if (std::none_of(e.ns.begin(), e.ns.end(), [](const auto& v) { return v.has_value(); }))
            ns.fail("has no stamp");
        out.push_back(e);
    }
    return out;
}

// The flow's bins: 1 ms each, two arrays of the same length, no longer than the probe keeps.
PhaseBins read_bins(const JsonField& b) {
    PhaseBins out;
    out.bin_ms = b.at("bin_ms").i64();
    if (out.bin_ms != 1) b.at("bin_ms").fail("is not 1");
    for (const auto& [key, into] : {std::pair{"tx_wire_bytes", &out.tx_wire_bytes},
                                    std::pair{"rx_wire_bytes", &out.rx_wire_bytes}}) {
        const JsonField a = b.at(key);
        if (a.array_size() > kMaxPhaseBins)
            a.fail("holds more than " + std::to_string(kMaxPhaseBins) + " bins");
        for (size_t i = 0; i < a.array_size(); ++i) into->push_back(a.at(i).u64());
    }
    if (out.tx_wire_bytes.size() != out.rx_wire_bytes.size())
        b.at("rx_wire_bytes").fail("is not as long as tx_wire_bytes");
    return out;
}

// The probe's account of a CPU (absent before probes kept one): counts, never negative, and the
// tool's time interrupted never more than its time.
CpuAccount read_cpu_account(const JsonField& a) {
    CpuAccount out;
    for (const auto& [key, field] : kCpuAccountFields) {
        const auto v = a.find(key);
        if (!v && std::string_view(key) == "samples") continue;  // a traced account's
        out.*field = a.at(key).i64();
        if (out.*field < 0) a.at(key).fail("is negative");
    }
    if (out.tool_in_irq_us > out.tool_us) a.at("tool_in_irq_us").fail("is more than tool_us");
    if (const auto at = a.find("sampled_at")) {
        const std::string s = at->str();
        if (s != "kernel_tick" && s != "probe_timer")
            at->fail("is neither \"kernel_tick\" nor \"probe_timer\"");
        out.at_kernel_tick = s == "kernel_tick";
    }
    return out;
}

// Each CPU's time over the phase.
std::vector<CpuTime> read_cpus(const JsonField& cpus) {
    std::vector<CpuTime> out;
    for (size_t i = 0; i < cpus.array_size(); ++i) {
        const JsonField c = cpus.at(i);
        // Absent before probes counted them apart.
        const auto niced = c.find("niced_ms"), unticked = c.find("unticked_ms");
        out.push_back({static_cast<int>(c.at("cpu").u64()), c.at("busy_ms").i64(),
                       c.at("softirq_ms").i64(), c.at("irq_ms").i64(), c.at("idle_ms").i64(),
                       c.at("steal_ms").i64(), niced ? niced->i64() : 0});
        if (unticked) {
            out.back().unticked_ms = unticked->i64();
            // Not negative, and not more than a year: a phase is the length of a test.
            if (out.back().unticked_ms < 0 || out.back().unticked_ms > 365LL * 86400 * 1000)
                unticked->fail("must be 0 .. a year in ms");
        }
        if (const auto a = c.find("account")) out.back().account = read_cpu_account(*a);
    }
    return out;
}

// One of the test's processes over the phase: its CPU time, and its cgroup's quota and throttling.
ProcessCpu read_process(const JsonField& r) {
    ProcessCpu pr;
    pr.pid = r.at("pid").i64();
    pr.comm = r.at("comm").str();
    pr.watched_ms = r.at("watched_ms").i64();
    pr.cpu_ms = r.at("cpu_ms").i64();
    pr.cgroup = r.at("cgroup").str();
    if (const auto q = r.find("quota_cores")) {
        pr.quota_cores = q->number();
        if (*pr.quota_cores <= 0) q->fail("is not a positive number of cores");
    }
    pr.periods = r.at("periods").i64();
    pr.throttled_periods = r.at("throttled_periods").i64();
    pr.throttled_ms = r.at("throttled_ms").i64();
    if (const auto w = r.find("cpu_wait_ms")) {
        pr.cpu_wait_ms = w->i64();
        if (*pr.cpu_wait_ms < 0) w->fail("is a negative time");
    }
    if (pr.watched_ms < 0 || pr.cpu_ms < 0 || pr.throttled_ms < 0) r.fail("has a negative time");
    if (pr.throttled_periods > pr.periods) r.at("throttled_periods").fail("is more than periods");
    return pr;
}

// The sender's TCP time account over the phase (tcp_info's chrono counters).
TcpAccount read_tcp_account(const JsonField& tcp) {
    TcpAccount a;
    for (const auto& [key, field] : kTcpAccountFields) {
        a.*field = tcp.at(key).i64();
        if (a.*field < 0) tcp.at(key).fail("is negative");
    }
    if (const auto cap = tcp.find("max_pacing_rate_bps")) {  // absent before it was read
        a.max_pacing_rate_bps = cap->i64();
        if (a.max_pacing_rate_bps < 0) cap->fail("is negative");
    }
    if (a.rwnd_limited_us + a.sndbuf_limited_us > a.busy_us)
        tcp.at("busy_us").fail("is less than the time limited by the window and buffer");
    return a;
}

PhaseTrace read_phase(const JsonField& n) {
    PhaseTrace p;
    p.name = n.at("name").str();
    p.start_ms = n.at("start_ms").i64();
    p.end_ms = n.at("end_ms").i64();
    if (p.end_ms < p.start_ms) n.at("end_ms").fail("is before start_ms");
    p.tx = read_direction(n.at("tx"));
    p.rx = read_direction(n.at("rx"));
    if (const auto xmit = n.find("xmit")) p.xmit = read_direction(*xmit);
    const JsonField r = n.at("retransmits");
    p.retransmits.segments = r.at("segments").u64();
    const JsonField by_flow = r.at("by_flow");
    for (const auto& k : by_flow.keys()) p.retransmits.segments_by_flow[k] = by_flow.at(k).u64();
    p.drops = read_drops(n.at("drops").at("by_reason"));
    const JsonField k = n.at("kernel_counters");
    p.nstat = read_counter_map(k.at("nstat"));
    p.ethtool_stats = read_counter_map(k.at("ethtool"));
    p.softnet_dropped = k.at("softnet_dropped").i64();
    if (const auto qdisc = k.find("qdisc")) p.qdisc_stats = read_counter_map(*qdisc);
    if (const auto cpus = n.find("cpus")) p.cpus = read_cpus(*cpus);
    if (const auto dev = n.find("dev_stats")) p.dev_stats = read_counter_map(*dev);
    if (const auto processes = n.find("processes")) {  // absent before probes watched the tool
        for (size_t i = 0; i < processes->array_size(); ++i)
            p.processes.push_back(read_process(processes->at(i)));
    }
    if (const auto tcp = n.find("tcp"))  // absent before probes read tcp_info
        p.tcp = read_tcp_account(*tcp);
    if (const auto streams = n.find("streams")) p.streams = read_streams(*streams);
    if (const auto echoes = n.find("echoes")) p.echoes = read_echoes(*echoes);
    if (const auto bins = n.find("bins")) p.bins = read_bins(*bins);
    return p;
}

}  // namespace

Trace parse_trace(const json& doc) {
    const JsonField root(doc, "");
    Trace t;
    t.schema = root.at("schema").str();
    if (t.schema != kTraceSchema)
        root.at("schema").fail("is '" + t.schema + "', expected '" + kTraceSchema + "'");
    t.node = root.at("node").str();
    t.role = root.at("role").str();
    t.iface = root.at("iface").str();
    t.ifindex = static_cast<uint32_t>(root.at("ifindex").u64());
    t.netns_inode = root.at("netns_inode").u64();
    t.kernel = root.at("kernel").str();
    if (const auto tier = root.optional_str("tier")) {
        const auto parsed = parse_tier(*tier);
        if (!parsed) root.at("tier").fail("is '" + *tier + "', expected " + kTierNames);
        t.tier = *parsed;
        t.tier_why = root.optional_str("tier_why").value_or("");
    }
    const JsonField link = root.at("link");
    t.link.carrier = link.at("carrier").boolean();
    if (!link.at("speed_mbps").is_null()) t.link.speed_mbps = link.at("speed_mbps").i64();
    t.link.duplex = link.at("duplex").str();
    t.link.mtu_bytes = static_cast<int>(link.at("mtu_bytes").i64());
    t.link.driver = link.at("driver").str();
    // Written by probes since the qdisc facts were added; absent in older traces.
    t.link.qdisc = link.optional_str("qdisc").value_or("");
    if (const auto rate = link.find("qdisc_rate_bps")) t.link.qdisc_rate_bps = rate->i64();
    t.iperf_port = static_cast<uint16_t>(root.at("iperf_port").u64());
    t.sample_interval_ms = root.at("sample_interval_ms").i64();
    t.started_at = root.at("started_at").str();
    t.duration_ms = root.at("duration_ms").i64();
    const JsonField phases = root.at("phases");
    for (size_t i = 0; i < phases.array_size(); ++i) t.phases.push_back(read_phase(phases.at(i)));
    const JsonField samples = root.at("samples");
    for (size_t i = 0; i < samples.array_size(); ++i) {
        const JsonField s = samples.at(i);
        t.samples.push_back({s.at("t_ms").i64(), s.at("interval_ms").i64(), s.at("phase").str(),
                             s.at("tx_wire_packets").u64(), s.at("rx_wire_packets").u64(),
                             s.at("tx_wire_bytes").u64(), s.at("rx_wire_bytes").u64(),
                             s.at("retransmits").u64(), s.at("drops").u64()});
    }
    const JsonField cost = root.at("probe_cost");
    for (size_t i = 0; i < cost.array_size(); ++i) {
        const JsonField c = cost.at(i);
        const auto misses = c.find("recursion_misses");
        const bool timed = !c.at("run_cnt").is_null();
        t.probe_cost.push_back({c.at("program").str(), timed ? c.at("run_cnt").u64() : 0,
                                timed ? c.at("run_time_ns").u64() : 0, misses ? misses->u64() : 0,
                                timed});
    }
    return t;
}

Trace parse_trace_text(std::string_view text) {
    return parse_trace(parse_json_document(text, "trace"));
}

}  // namespace np
