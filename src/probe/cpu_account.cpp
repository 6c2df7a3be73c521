#include "src/probe/cpu_account.hpp"

#include <bpf/bpf.h>
#include <dirent.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
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

KernelTick kernel_tick(const KernelSymbols& symbols, std::string_view nohz_full) {
    while (!nohz_full.empty() && (nohz_full.back() == '\n' || nohz_full.back() == ' '))
        nohz_full.remove_suffix(1);
    if (!nohz_full.empty() && nohz_full != "(null)") return {};
    KernelTick t;
    for (const char* name : {"tick_nohz_handler", "tick_sched_timer"}) {
        if (const auto r = symbols.range(name)) {
            t.fn = r->first;
            break;
        }
    }
    if (const auto r = symbols.range("asm_sysvec_apic_timer_interrupt")) {
        t.entry_start = r->first;
        t.entry_end = r->second;
    }
    return t.known() ? t : KernelTick{};
}

KernelTick kernel_tick(const KernelSymbols& symbols) {
    std::ifstream f("/sys/devices/system/cpu/nohz_full");
    std::string line;
    std::getline(f, line);
    return kernel_tick(symbols, line);
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
