#include "src/probe/cpu_account.hpp"

#include <bpf/bpf.h>
#include <dirent.h>
#include <sys/utsname.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "probe.h"

namespace np::probe {

namespace {

// A directory's entries that are numbers.
std::vector<int> numbered_entries(const std::string& dir) {
    std::vector<int> out;
    DIR* d = opendir(dir.c_str());
    if (!d) return out;
    while (const dirent* e = readdir(d)) {
        char* end = nullptr;
        const long n = std::strtol(e->d_name, &end, 10);
        if (end != e->d_name && *end == '\0' && n >= 0) out.push_back(static_cast<int>(n));
    }
    closedir(d);
    return out;
}

}  // namespace

std::vector<int> nic_irq_numbers(const std::string& iface) {
    const std::string device = "/sys/class/net/" + iface + "/device";
    std::vector<int> irqs = numbered_entries(device + "/msi_irqs");
    if (!irqs.empty()) return irqs;
    std::ifstream legacy(device + "/irq");
    int irq = 0;
    if (legacy >> irq && irq > 0) irqs.push_back(irq);
    return irqs;
}

void mark_nic_irqs(int map_fd, const std::vector<int>& irqs) {
    if (map_fd < 0) return;
    const uint8_t yes = 1;
    for (const int irq : irqs) bpf_map_update_elem(map_fd, &irq, &yes, BPF_ANY);
}

void mark_tools(int map_fd, const std::vector<int>& pids) {
    if (map_fd < 0) return;
    const uint8_t yes = 1;
    for (const int pid : pids) {
        const uint32_t tgid = static_cast<uint32_t>(pid);
        bpf_map_update_elem(map_fd, &tgid, &yes, BPF_NOEXIST);
    }
}

int config_hz(std::string_view config) {
    static constexpr std::string_view key = "CONFIG_HZ=";
    for (size_t at = 0; at < config.size();) {
        const size_t end = std::min(config.find('\n', at), config.size());
        const std::string_view line = config.substr(at, end - at);
        if (line.starts_with(key)) {
            int hz = 0;
            const auto [p, ec] = std::from_chars(line.data() + key.size(), line.end(), hz);
            return ec == std::errc() && p == line.end() && hz > 0 ? hz : 0;
        }
        at = end + 1;
    }
    return 0;
}

KernelTick kernel_tick(const KernelSymbols& symbols, const TickFacts& facts) {
    std::string_view nohz_full = facts.nohz_full;
    while (!nohz_full.empty() && (nohz_full.back() == '\n' || nohz_full.back() == ' '))
        nohz_full.remove_suffix(1);
    if (!nohz_full.empty() && nohz_full != "(null)") return {};
    // Every CPU's tick run by an hrtimer: ".hres_active    : 1" for each, none at 0.
    size_t high_res = 0;
    for (size_t at = facts.timer_list.find(".hres_active"); at != std::string_view::npos;
         at = facts.timer_list.find(".hres_active", at + 1)) {
        const size_t colon = facts.timer_list.find(':', at);
        if (colon == std::string_view::npos) return {};
        const size_t digit = facts.timer_list.find_first_not_of(' ', colon + 1);
        if (digit == std::string_view::npos || facts.timer_list[digit] != '1') return {};
        ++high_res;
    }
    if (high_res == 0 || facts.hz <= 0) return {};
    KernelTick t;
    t.period_ns = 1'000'000'000ULL / static_cast<uint64_t>(facts.hz);
    if (const auto r = symbols.range("tick_sched_timer")) {
        t.fn = r->first;
    } else if (const auto r6_7 = symbols.range("tick_nohz_highres_handler")) {
        t.fn = r6_7->first;
    } else if (symbols.range("tick_nohz_lowres_handler")) {
        if (const auto r6_9 = symbols.range("tick_nohz_handler")) t.fn = r6_9->first;
    }
    const auto text_start = symbols.range("__entry_text_start");
    const auto text_end = symbols.range("__entry_text_end");
    if (text_start && text_end) {
        t.entry_start = text_start->first;
        t.entry_end = text_end->first;
    } else if (const auto r = symbols.range("asm_sysvec_apic_timer_interrupt")) {
        t.entry_start = r->first;
        t.entry_end = r->second;
    }
    return t.known() ? t : KernelTick{};
}

namespace {

std::string whole_file(const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

// The running kernel's config: /boot/config-RELEASE, else /proc/config.gz; empty when neither.
std::string kernel_config() {
    utsname u{};
    if (uname(&u) == 0) {
        std::string text = whole_file(std::string("/boot/config-") + u.release);
        if (!text.empty()) return text;
    }
    std::string text;
    if (gzFile gz = gzopen("/proc/config.gz", "rb")) {
        char buf[16384];
        int n = 0;
        while ((n = gzread(gz, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
        gzclose(gz);
    }
    return text;
}

}  // namespace

KernelTick kernel_tick(const KernelSymbols& symbols) {
    std::ifstream f("/sys/devices/system/cpu/nohz_full");
    std::string nohz_full;
    std::getline(f, nohz_full);
    const std::string timer_list = whole_file("/proc/timer_list");
    return kernel_tick(symbols, {nohz_full, timer_list, config_hz(kernel_config())});
}

bool mark_softirq_functions(int map_fd, const KernelSymbols& symbols) {
    if (map_fd < 0) return false;
    const std::pair<uint32_t, std::vector<const char*>> wanted[] = {
        {NP_FN_NET_RX, {"net_rx_action"}},
        {NP_FN_NET_TX, {"net_tx_action"}},
        {NP_FN_SOFTIRQS, {"handle_softirqs", "__do_softirq"}}};
    bool any = false;
    for (const auto& [slot, names] : wanted) {
        for (const char* name : names) {
            const auto r = symbols.range(name);
            if (!r) continue;
            const np_fn_range value{r->first, r->second};
            bpf_map_update_elem(map_fd, &slot, &value, BPF_ANY);
            any = true;
            break;
        }
    }
    return any;
}

}  // namespace np::probe
