#pragma once
// What the probe's CPU account (bpf/cpu_account.h) needs from user space: which processes are
// the test's own, which hard IRQs are the data NIC's, and where the softirq functions lie.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/probe/kernel_symbols.hpp"

namespace np::probe {

// The data iface's IRQ numbers: each MSI/MSI-X vector of its device (a queue each), else its
// one legacy IRQ; none for a virtual iface (veth, a bridge), whose work runs in softirqs.
std::vector<int> nic_irq_numbers(const std::string& iface);

// Marks `irqs` (nic_irq_numbers) in the nic_irqs map, and the test's processes in the tools
// map as they are found: both maps only grow while the probe runs (a PID ends with its test,
// and a reused one would be another test's tool on the same port). -1: the tier has no map.
void mark_nic_irqs(int map_fd, const std::vector<int>& irqs);
void mark_tools(int map_fd, const std::vector<int>& pids);

// Where the kernel's own tick can sample the CPU account (bpf/cpu_account.h): the function its
// hrtimer runs and the interrupt entry it arrives through, from `symbols`. Unknown (0) when either
// is not there (kptr_restrict, another architecture, a tick not run by an hrtimer) or when some
// CPU runs without the tick while busy (`nohz_full`, the content of
// /sys/devices/system/cpu/nohz_full: "(null)" or empty when none does); the probe's own timer
// samples then.
struct KernelTick {
    uint64_t fn = 0;
    uint64_t entry_start = 0;
    uint64_t entry_end = 0;
    bool known() const { return fn != 0 && entry_start < entry_end; }
};
KernelTick kernel_tick(const KernelSymbols& symbols, std::string_view nohz_full);
// The running kernel's (/sys/devices/system/cpu/nohz_full read here).
KernelTick kernel_tick(const KernelSymbols& symbols);

// Writes where net_rx_action, net_tx_action and handle_softirqs (__do_softirq before 6.8) lie
// into the softirq_fns map; false when `symbols` has none of them (kptr_restrict hid the
// addresses): the samples then find no softirq.
bool mark_softirq_functions(int map_fd, const KernelSymbols& symbols);

}  // namespace np::probe
