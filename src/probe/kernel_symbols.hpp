#pragma once
// The kernel's function symbols (/proc/kallsyms), to name the code that freed a dropped packet
// at the drops-without-reasons tier, and to find the softirq functions the CPU account's samples
// look for on a stack (bpf/cpu_account.h). Read once, while the probe still holds its privileges:
// without CAP_SYSLOG the addresses read as zero under kptr_restrict.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace np::probe {

class KernelSymbols {
  public:
    // Reads /proc/kallsyms (or `path`); empty when it cannot be read or shows no addresses.
    static KernelSymbols read(const std::string& path = "/proc/kallsyms");
    // The function holding `address` ("udp_queue_rcv_one_skb"), or the address in hex when
    // no symbol covers it.
    std::string function_at(uint64_t address) const;
    // Where the function `name` lies: [start, end), end the next symbol's address; empty when no
    // function of that name is known (or it is the last).
    std::optional<std::pair<uint64_t, uint64_t>> range(std::string_view name) const;
    bool empty() const { return addresses_.empty(); }

  private:
    std::vector<uint64_t> addresses_;  // ascending
    std::vector<uint32_t> name_at_;    // offset of each address's name in names_
    std::string names_;                // NUL-separated
};

}  // namespace np::probe
