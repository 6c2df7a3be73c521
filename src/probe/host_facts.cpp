#include "src/probe/host_facts.hpp"
#include "common/fd.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "common/errors.hpp"
#include "common/link_facts.hpp"
#include "src/probe/qdisc.hpp"

namespace np::probe {
namespace {

// The nstat names the analyzer reasons with (docs/design.md, "Kernel facts"): receive-buffer and
// UDP errors, TCP retransmissions and reordering.
constexpr std::array kNstatNames = {
    "UdpInDatagrams",
    "UdpInErrors",
    "UdpRcvbufErrors",
    "UdpSndbufErrors",
    "TcpOutSegs",
    "TcpRetransSegs",
    "TcpExtTCPLostRetransmit",
    "TcpExtTCPTimeouts",
    "IpExtInOctets",
    "IpExtOutOctets",
    // TCP's reordering: each time the sender's kernel found segments delivered out of order
    // (by SACK, timestamps, or dupacks without SACK), and the duplicates its receivers
    // reported (D-SACK) — retransmits that were not needed.
    "TcpExtTCPSACKReorder",
    "TcpExtTCPTSReorder",
    "TcpExtTCPRenoReorder",
    "TcpExtTCPDSACKRecv",
    // IPv6's UDP counters (/proc/net/snmp6): the IPv4 ones above do not count an IPv6 flow.
    "Udp6InDatagrams",
    "Udp6InErrors",
    "Udp6RcvbufErrors",
    "Udp6SndbufErrors",
};

// `ethtool -S` counters worth keeping: what a driver names drops and misses.
bool is_drop_stat(std::string_view name) {
    for (const char* word : {"drop", "miss", "discard", "no_buf", "nobuf", "fifo", "overrun"})
        if (name.find(word) != std::string_view::npos) return true;
    return false;
}

// An ethtool ioctl on `iface`; false when the driver does not implement the command.
bool ethtool(const std::string& iface, void* cmd) {
    Fd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (s.get() < 0) return false;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, iface.c_str(), IFNAMSIZ - 1);
    ifr.ifr_data = static_cast<char*>(cmd);
    return ioctl(s.get(), SIOCETHTOOL, &ifr) == 0;
}

// The first line of a file, empty when it cannot be read (sysfs refuses some of an iface's files
// while it is down).
std::string read_first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// Whether /sys/class/net/IFACE/ is this network namespace's IFACE: sysfs shows the interfaces of
// the namespace it was mounted in (`ip netns exec` mounts the namespace's own, docs/design.md,
// "Kernel facts"), so a probe entered into a namespace without it would read another
// namespace's interface of the same name, or none.
bool sysfs_shows_this_netns(const std::string& iface, const std::string& dir) {
    const std::string text = read_first_line(dir + "ifindex");
    unsigned sysfs_index = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), sysfs_index);
    return ec == std::errc() && end == text.data() + text.size() && sysfs_index != 0 &&
           sysfs_index == find_iface_index(iface);
}

// /proc/net/snmp and /proc/net/netstat: pairs of lines "Prefix: names..." / "Prefix: values".
void read_proc_pairs(const char* path, std::map<std::string, int64_t>& out) {
    std::ifstream in(path);
    std::string names, values;
    while (std::getline(in, names) && std::getline(in, values)) {
        std::istringstream n(names), v(values);
        std::string prefix, vprefix, name;
        n >> prefix;
        v >> vprefix;
        if (prefix != vprefix || prefix.empty()) continue;
        prefix.pop_back();  // the ':'
        int64_t value = 0;
        while (n >> name && v >> value) {
            const std::string full = prefix + name;
            for (const char* wanted : kNstatNames)
                if (full == wanted) out[full] = value;
        }
    }
}

// /proc/net/snmp6: one "Name value" per line.
void read_proc_lines(const char* path, std::map<std::string, int64_t>& out) {
    std::ifstream in(path);
    std::string name;
    int64_t value = 0;
    while (in >> name >> value)
        for (const char* wanted : kNstatNames)
            if (name == wanted) out[name] = value;
}

int64_t read_softnet_dropped() {
    std::ifstream in("/proc/net/softnet_stat");
    std::string line;
    int64_t dropped = 0;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        std::string processed, drops;
        if (s >> processed >> drops) dropped += std::stoll(drops, nullptr, 16);
    }
    return dropped;
}

std::map<std::string, int64_t> read_ethtool_drop_stats(const std::string& iface) {
    std::map<std::string, int64_t> out;
    // ethtool_sset_info ends in a flexible array: one u32 per requested set follows it.
    alignas(8) uint8_t sset_buf[sizeof(ethtool_sset_info) + sizeof(uint32_t)] = {};
    auto* sset = reinterpret_cast<ethtool_sset_info*>(sset_buf);
    sset->cmd = ETHTOOL_GSSET_INFO;
    sset->sset_mask = 1ULL << ETH_SS_STATS;
    if (!ethtool(iface, sset) || !(sset->sset_mask & (1ULL << ETH_SS_STATS))) return out;
    const uint32_t n = sset->data[0];
    if (n == 0) return out;
    std::vector<uint8_t> strings(sizeof(ethtool_gstrings) + size_t(n) * ETH_GSTRING_LEN);
    auto* gs = reinterpret_cast<ethtool_gstrings*>(strings.data());
    gs->cmd = ETHTOOL_GSTRINGS;
    gs->string_set = ETH_SS_STATS;
    gs->len = n;
    std::vector<uint8_t> stats(sizeof(ethtool_stats) + size_t(n) * sizeof(uint64_t));
    auto* st = reinterpret_cast<ethtool_stats*>(stats.data());
    st->cmd = ETHTOOL_GSTATS;
    st->n_stats = n;
    if (!ethtool(iface, gs) || !ethtool(iface, st)) return out;
    for (uint32_t i = 0; i < n; ++i) {
        const char* s = reinterpret_cast<const char*>(gs->data + size_t(i) * ETH_GSTRING_LEN);
        std::string name(s, strnlen(s, ETH_GSTRING_LEN));
        if (is_drop_stat(name)) out[name] = static_cast<int64_t>(st->data[i]);
    }
    return out;
}

}  // namespace

uint32_t find_iface_index(const std::string& iface) {
    static const Fd s(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq ifr{};
    if (s.get() < 0 || iface.empty() || iface.size() >= sizeof(ifr.ifr_name)) return 0;
    std::memcpy(ifr.ifr_name, iface.data(), iface.size());
    if (ioctl(s.get(), SIOCGIFINDEX, &ifr) != 0) return 0;
    return static_cast<uint32_t>(ifr.ifr_ifindex);
}

uint32_t iface_index(const std::string& iface) {
    const uint32_t idx = find_iface_index(iface);
    if (idx == 0) {
        throw EnvironmentError(
            fmt::format("interface '{}' does not exist in this network namespace", iface));
    }
    return idx;
}

uint64_t own_netns_inode() {
    struct stat st {};
    if (stat("/proc/self/ns/net", &st) != 0)
        throw EnvironmentError("cannot read /proc/self/ns/net: is /proc mounted?");
    return st.st_ino;
}

std::string kernel_release() {
    utsname u{};
    uname(&u);
    return u.release;
}

std::string node_name() {
    utsname u{};
    uname(&u);
    return u.nodename;
}

LinkFacts read_link_facts(const std::string& iface) {
    const std::string dir = std::string(kSysClassNet) + iface + "/";
    SysfsLinkText text;
    if (sysfs_shows_this_netns(iface, dir)) {
        text.carrier = read_first_line(dir + std::string(sysfs_link::kCarrier));
        text.speed = read_first_line(dir + std::string(sysfs_link::kSpeed));
        text.duplex = read_first_line(dir + std::string(sysfs_link::kDuplex));
        text.mtu = read_first_line(dir + std::string(sysfs_link::kMtu));
        std::error_code ec;
        text.driver_link =
            std::filesystem::read_symlink(dir + std::string(sysfs_link::kDriver), ec).string();
    }
    const LinkState state = parse_link_state(text);
    LinkFacts f;
    f.carrier = state.carrier;
    f.speed_mbps = state.speed_mbps;
    f.duplex = state.duplex;
    f.mtu_bytes = state.mtu_bytes.value_or(0);
    f.driver = state.driver;
    if (const uint32_t ifindex = find_iface_index(iface)) {
        const QdiscState q = read_qdisc_state(ifindex);
        f.qdisc = q.root_kind;
        if (q.rate_bps) f.qdisc_rate_bps = static_cast<int64_t>(*q.rate_bps);
    }
    return f;
}

// /proc/stat's per-CPU lines: cpuN user nice system idle iowait irq softirq steal …, in
// USER_HZ ticks since boot (guest time is already inside user).
std::vector<CpuTime> read_cpu_times() {
    std::vector<CpuTime> out;
    std::ifstream in("/proc/stat");
    const long hz = sysconf(_SC_CLK_TCK);
    const auto ms = [hz](int64_t ticks) { return hz > 0 ? ticks * 1000 / hz : ticks * 10; };
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with("cpu") || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
        std::istringstream fields(line.substr(3));
        int cpu = 0;
        int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
        if (!(fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq))
            continue;
        fields >> steal;  // absent on kernels before 2.6.11
        out.push_back({cpu, ms(user + nice + system + irq + softirq), ms(softirq), ms(irq),
                       ms(idle + iowait), ms(steal), ms(nice)});
    }
    return out;
}

std::map<std::string, int64_t> read_dev_stats(const std::string& iface) {
    // The 16 columns after "IFACE:", by their kernel names (struct rtnl_link_stats64); the
    // compressed and multicast columns are left out.
    static const char* const columns[16] = {"rx_bytes",       "rx_packets",     "rx_errors",
                                            "rx_dropped",     "rx_fifo_errors", "rx_frame_errors",
                                            nullptr,          nullptr,          "tx_bytes",
                                            "tx_packets",     "tx_errors",      "tx_dropped",
                                            "tx_fifo_errors", "collisions",     "tx_carrier_errors",
                                            nullptr};
    static const Fd fd(open("/proc/net/dev", O_RDONLY | O_CLOEXEC));
    std::map<std::string, int64_t> out;
    std::string text;
    std::array<char, 4096> buf{};
    for (off_t at = 0;;) {
        const ssize_t n = fd.get() < 0 ? -1 : pread(fd.get(), buf.data(), buf.size(), at);
        if (n <= 0) break;
        text.append(buf.data(), static_cast<size_t>(n));
        at += n;
    }
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        const size_t start = line.find_first_not_of(' ');
        if (line.compare(start, colon - start, iface) != 0 || colon - start != iface.size())
            continue;
        std::istringstream fields(line.substr(colon + 1));
        for (const char* name : columns) {
            int64_t v = 0;
            if (!(fields >> v)) break;
            if (name) out[name] = v;
        }
        break;
    }
    return out;
}

KernelCounters read_kernel_counters(const std::string& iface) {
    KernelCounters c;
    read_proc_pairs("/proc/net/snmp", c.nstat);
    read_proc_pairs("/proc/net/netstat", c.nstat);
    read_proc_lines("/proc/net/snmp6", c.nstat);
    c.ethtool_stats = read_ethtool_drop_stats(iface);
    c.softnet_dropped = read_softnet_dropped();
    if (const uint32_t ifindex = find_iface_index(iface)) {
        const QdiscState q = read_qdisc_state(ifindex);
        c.qdisc = q.counters;
        c.qdisc_queued = q.queued_packets;
    }
    c.cpus = read_cpu_times();
    c.cpus_read_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
    c.dev_stats = read_dev_stats(iface);
    // How often the link lost its carrier (sysfs, since Linux 4.16): a flap between two
    // readings shows here though the link is up at both.
    const std::string down =
        read_first_line(std::string(kSysClassNet) + iface + "/carrier_down_count");
    int64_t n = 0;
    if (!down.empty() &&
        std::from_chars(down.data(), down.data() + down.size(), n).ec == std::errc())
        c.dev_stats["carrier_down_count"] = n;
    return c;
}

KernelCounters counter_delta(const KernelCounters& a, const KernelCounters& b) {
    auto diff = [](const std::map<std::string, int64_t>& x,
                   const std::map<std::string, int64_t>& y) {
        std::map<std::string, int64_t> d;
        for (const auto& [k, v] : y) {
            auto it = x.find(k);
            d[k] = v - (it != x.end() ? it->second : 0);
        }
        return d;
    };
    std::vector<CpuTime> cpus;
    const int64_t elapsed_ms = b.cpus_read_ms - a.cpus_read_ms;
    // What the readings' own error can leave unplaced: eight columns each truncated to 10 ms
    // (USER_HZ), and the tick's sampling of busy time, which grows with the phase.
    const int64_t rounding_ms = std::max<int64_t>(80, elapsed_ms / 50);
    for (const auto& now : b.cpus) {
        // A CPU that was not online at the phase's start has no time of the phase to give: its
        // counters run since boot.
        const auto then = std::find_if(a.cpus.begin(), a.cpus.end(),
                                       [&](const CpuTime& c) { return c.cpu == now.cpu; });
        if (then == a.cpus.end()) continue;
        const CpuTime& t = *then;
        CpuTime d{now.cpu,
                  now.busy_ms - t.busy_ms,
                  now.softirq_ms - t.softirq_ms,
                  now.irq_ms - t.irq_ms,
                  now.idle_ms - t.idle_ms,
                  now.steal_ms - t.steal_ms,
                  now.niced_ms - t.niced_ms};
        // Beyond the rounding only, and never where a column ran backwards (a kernel that
        // resets a CPU's idle clock when it goes offline): then nothing of the gap is known.
        // A CPU taken offline and back within the phase shows that time here too.
        const int64_t gap = elapsed_ms - (d.busy_ms + d.idle_ms + d.steal_ms);
        if (gap > rounding_ms && d.busy_ms >= 0 && d.idle_ms >= 0 && d.steal_ms >= 0)
            d.unticked_ms = std::min(gap, elapsed_ms);
        cpus.push_back(d);
    }
    return {diff(a.nstat, b.nstat),
            diff(a.ethtool_stats, b.ethtool_stats),
            b.softnet_dropped - a.softnet_dropped,
            diff(a.qdisc, b.qdisc),
            b.qdisc_queued,
            std::move(cpus),
            b.cpus_read_ms,
            diff(a.dev_stats, b.dev_stats)};
}

}  // namespace np::probe
