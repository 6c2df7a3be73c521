#pragma once
// Where the running program is, so an installed np-explain finds what was installed with it
// (np-probe beside it, the testbed script in ../share/np-explain) and a build-tree one finds
// the build tree's.
#include <filesystem>
#include <system_error>

namespace np {

// The directory of this executable (/proc/self/exe); empty when /proc is not mounted.
inline std::filesystem::path executable_dir() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : self.parent_path();
}

}  // namespace np
