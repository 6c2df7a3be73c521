#pragma once
// The kernel's function symbols (/proc/kallsyms), to name the code that freed a dropped packet
// at the drops-without-reasons tier. Read once, while the probe still holds its privileges:
// without CAP_SYSLOG the addresses read as zero under kptr_restrict.
#include <cstdint>
#include <string>
#include <vector>

namespace np::probe {

class KernelSymbols {
  public:
    // Reads /proc/kallsyms (or `path`); empty when it cannot be read or shows no addresses.
    static KernelSymbols read(const std::string& path = "/proc/kallsyms");
    // The function holding `address` ("udp_queue_rcv_one_skb"), or the address in hex when
    // no symbol covers it.
    std::string function_at(uint64_t address) const;
    bool empty() const { return addresses_.empty(); }

  private:
    std::vector<uint64_t> addresses_;  // ascending
    std::vector<uint32_t> name_at_;    // offset of each address's name in names_
    std::string names_;                // NUL-separated
};

}  // namespace np::probe
