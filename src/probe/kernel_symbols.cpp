#include "src/probe/kernel_symbols.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace np::probe {

KernelSymbols KernelSymbols::read(const std::string& path) {
    KernelSymbols s;
    FILE* f = std::fopen(path.c_str(), "re");
    if (!f) return s;
    std::vector<std::pair<uint64_t, uint32_t>> found;
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
        unsigned long long address = 0;
        char type = 0;
        char name[256];
        if (std::sscanf(line, "%llx %c %255s", &address, &type, name) != 3) continue;
        if (address == 0 || (type != 't' && type != 'T')) continue;
        found.emplace_back(address, static_cast<uint32_t>(s.names_.size()));
        s.names_.append(name).push_back('\0');
    }
    std::fclose(f);
    std::sort(found.begin(), found.end());
    for (const auto& [address, at] : found) {
        s.addresses_.push_back(address);
        s.name_at_.push_back(at);
    }
    return s;
}

std::string KernelSymbols::function_at(uint64_t address) const {
    const auto it = std::upper_bound(addresses_.begin(), addresses_.end(), address);
    if (it == addresses_.begin()) return fmt::format("{:#x}", address);
    return names_.c_str() + name_at_[static_cast<size_t>(it - addresses_.begin() - 1)];
}

std::optional<std::pair<uint64_t, uint64_t>> KernelSymbols::range(std::string_view name) const {
    for (size_t i = 0; i + 1 < addresses_.size(); ++i)
        if (name == names_.c_str() + name_at_[i])
            return std::pair{addresses_[i], addresses_[i + 1]};
    return std::nullopt;
}

}  // namespace np::probe
