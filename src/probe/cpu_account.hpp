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
// hrtimer runs, its period, and the kernel's interrupt entry code. The tick's function by kernel:
// tick_sched_timer until 6.6, tick_nohz_highres_handler in 6.7 and 6.8, tick_nohz_handler since
// 6.9 (which before named the low-resolution handler, so it is taken only beside
// tick_nohz_lowres_handler). The entry code is [__entry_text_start, __entry_text_end), else
// asm_sysvec_apic_timer_interrupt's range.
struct KernelTick {
    uint64_t fn = 0;
    uint64_t period_ns = 0;
    uint64_t entry_start = 0;
    uint64_t entry_end = 0;
    bool known() const { return fn != 0 && period_ns != 0 && entry_start < entry_end; }
};
// What else the tick needs to be the account's: `nohz_full`, the content of
// /sys/devices/system/cpu/nohz_full ("(null)" or empty when no CPU runs busy without a tick);
// `timer_list`, /proc/timer_list's, where every CPU's .hres_active must be 1 (an hrtimer runs the
// tick); `hz`, the kernel's CONFIG_HZ (0: unknown). Unknown (all 0) where any is missing: the
// probe's own timer samples then.
struct TickFacts {
    std::string_view nohz_full;
    std::string_view timer_list;
    int hz = 0;
};
KernelTick kernel_tick(const KernelSymbols& symbols, const TickFacts& facts);
// The running kernel's facts, read here (its config from /boot/config-RELEASE or
// /proc/config.gz).
KernelTick kernel_tick(const KernelSymbols& symbols);
// CONFIG_HZ from a kernel config's text; 0 when it has none.
int config_hz(std::string_view config);

// Writes where net_rx_action, net_tx_action and handle_softirqs (__do_softirq before 6.8) lie
// into the softirq_fns map; false when `symbols` has none of them (kptr_restrict hid the
// addresses): the samples then find no softirq.
bool mark_softirq_functions(int map_fd, const KernelSymbols& symbols);

}  // namespace np::probe
