#include "common/process_stats.hpp"

#include <charconv>

namespace np {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        out.push_back(text.substr(0, nl));
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return out;
}

bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && blank(line[i])) ++i;
        const size_t start = i;
        while (i < line.size() && !blank(line[i])) ++i;
        if (i > start) out.push_back(line.substr(start, i - start));
    }
    return out;
}

template <typename T>
std::optional<T> number(std::string_view s, int base = 10) {
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

// "0100007F:1451" or a tcp6 address: the port after the colon, in hex.
std::optional<uint16_t> port_of(std::string_view address) {
    const size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    return number<uint16_t>(address.substr(colon + 1), 16);
}

}  // namespace

std::vector<uint64_t> socket_inodes_on_port(std::string_view table, uint16_t port) {
    std::vector<uint64_t> out;
    for (const auto line : lines_of(table)) {
        const auto f = fields_of(line);
        // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
        if (f.size() < 10 || f[0] == "sl") continue;
        const auto local = port_of(f[1]), remote = port_of(f[2]);
        const auto inode = number<uint64_t>(f[9]);
        if (inode && *inode != 0 && (local == port || remote == port)) out.push_back(*inode);
    }
    return out;
}

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
    // "PID (COMM) STATE PPID …": COMM may hold spaces and parentheses; it ends at the last ')'.
    const size_t open = text.find('('), close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
        return std::nullopt;
    const auto f = fields_of(text.substr(close + 1));
    // After COMM: state(0) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    // utime(11) stime(12) cutime cstime priority nice num_threads itrealvalue starttime(19).
    if (f.size() < 20) return std::nullopt;
    const auto utime = number<int64_t>(f[11]), stime = number<int64_t>(f[12]);
    const auto start = number<uint64_t>(f[19]);
    if (!utime || !stime || !start) return std::nullopt;
    return ProcStat{std::string(text.substr(open + 1, close - open - 1)), *utime + *stime, *start,
                    f[0] == "Z" || f[0] == "X" || f[0] == "x"};
}

std::optional<SchedStat> parse_schedstat(std::string_view text) {
    const auto lines = lines_of(text);
    const auto f = fields_of(lines.empty() ? text : lines[0]);
    if (f.size() != 3) return std::nullopt;
    const auto on_cpu = number<int64_t>(f[0]), wait = number<int64_t>(f[1]);
    if (!on_cpu || !wait || !number<int64_t>(f[2]) || *on_cpu < 0 || *wait < 0) return std::nullopt;
    return SchedStat{*on_cpu, *wait};
}

void ThreadWaits::add(int tid, const SchedStat& reading) {
    auto [it, fresh] = threads_.try_emplace(tid, reading);
    if (fresh) return;
    if (reading.on_cpu_ns < it->second.on_cpu_ns) {  // another thread under a reused ID
        ended_.on_cpu_ns += it->second.on_cpu_ns;
        ended_.wait_ns += it->second.wait_ns;
    }
    it->second = reading;
}

std::optional<int64_t> ThreadWaits::wait_ns() const {
    SchedStat all = ended_;
    for (const auto& [tid, s] : threads_) {
        all.on_cpu_ns += s.on_cpu_ns;
        all.wait_ns += s.wait_ns;
    }
    if (all.on_cpu_ns <= 0) return std::nullopt;
    return all.wait_ns;
}

CgroupPaths parse_proc_cgroup(std::string_view text) {
    CgroupPaths p;
    for (const auto line : lines_of(text)) {
        const size_t a = line.find(':'),
                     b = a == std::string_view::npos ? a : line.find(':', a + 1);
        if (b == std::string_view::npos) continue;
        const std::string_view controllers = line.substr(a + 1, b - a - 1);
        const std::string path(line.substr(b + 1));
        if (line.substr(0, a) == "0" && controllers.empty()) {
            p.unified = path;
            continue;
        }
        std::string_view rest = controllers;
        while (!rest.empty()) {
            const size_t comma = rest.find(',');
            if (rest.substr(0, comma) == "cpu") p.cpu_v1 = path;
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    return p;
}

CgroupMounts parse_cgroup_mounts(std::string_view mountinfo) {
    CgroupMounts m;
    for (const auto line : lines_of(mountinfo)) {
        // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPER_OPTIONS
        const auto f = fields_of(line);
        size_t dash = 6;
        while (dash < f.size() && f[dash] != "-") ++dash;
        if (f.size() < 5 || dash + 1 >= f.size()) continue;
        const std::string_view type = f[dash + 1];
        const std::string_view super = dash + 3 < f.size() ? f[dash + 3] : std::string_view();
        if (type == "cgroup2" && m.unified.empty()) {
            m.unified = f[4];
            m.unified_root = f[3];
        } else if (type == "cgroup" && m.cpu_v1.empty()) {
            std::string_view rest = super;
            while (!rest.empty()) {
                const size_t comma = rest.find(',');
                if (rest.substr(0, comma) == "cpu") {
                    m.cpu_v1 = f[4];
                    m.cpu_v1_root = f[3];
                }
                if (comma == std::string_view::npos) break;
                rest.remove_prefix(comma + 1);
            }
        }
    }
    return m;
}

std::string cgroup_dir(const std::string& mount, const std::string& root, const std::string& path) {
    if (mount.empty() || path.empty() || path[0] != '/') return "";
    if (root == "/") return path == "/" ? mount : mount + path;
    if (path == root) return mount;
    if (!path.starts_with(root + "/")) return "";
    return mount + path.substr(root.size());
}

CgroupCpuStat parse_cpu_stat(std::string_view text) {
    CgroupCpuStat s;
    for (const auto line : lines_of(text)) {
        const auto f = fields_of(line);
        if (f.size() != 2) continue;
        const auto v = number<int64_t>(f[1]);
        if (!v) continue;
        if (f[0] == "nr_periods") {
            s.periods = *v;
            s.has_bandwidth = true;
        } else if (f[0] == "nr_throttled") {
            s.throttled_periods = *v;
        } else if (f[0] == "throttled_usec") {  // v2
            s.throttled_us = *v;
        } else if (f[0] == "throttled_time") {  // v1, in ns
            s.throttled_us = *v / 1000;
        }
    }
    return s;
}

std::optional<double> parse_cpu_max(std::string_view text) {
    const auto lines = lines_of(text);
    const auto f = fields_of(lines.empty() ? text : lines[0]);
    if (f.size() != 2 || f[0] == "max") return std::nullopt;
    const auto quota = number<int64_t>(f[0]), period = number<int64_t>(f[1]);
    if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
    return double(*quota) / double(*period);
}

std::optional<double> parse_cfs_quota(std::string_view quota_us, std::string_view period_us) {
    const auto q = fields_of(quota_us), p = fields_of(period_us);
    if (q.size() != 1 || p.size() != 1) return std::nullopt;
    const auto quota = number<int64_t>(q[0]), period = number<int64_t>(p[0]);
    if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
    return double(*quota) / double(*period);
}

}  // namespace np
