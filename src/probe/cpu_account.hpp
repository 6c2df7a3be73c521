#pragma once
// What the probe's CPU account (bpf/cpu_account.h) needs from user space: which processes are
// the test's own and which hard IRQs are the data NIC's.
#include <string>
#include <vector>

namespace np::probe {

// The data iface's IRQ numbers: each MSI/MSI-X vector of its device (a queue each), else its
// one legacy IRQ; none for a virtual iface (veth, a bridge), whose work runs in softirqs.
std::vector<int> nic_irq_numbers(const std::string& iface);

// Marks `irqs` (nic_irq_numbers) in the nic_irqs map, and the test's processes in the tools
// map as they are found: both maps only grow while the probe runs (a PID ends with its test,
// and a reused one would be another test's tool on the same port). -1: the tier has no map.
void mark_nic_irqs(int map_fd, const std::vector<int>& irqs);
void mark_tools(int map_fd, const std::vector<int>& pids);

}  // namespace np::probe
