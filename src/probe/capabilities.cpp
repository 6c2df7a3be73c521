#include "src/probe/capabilities.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "common/errors.hpp"

namespace np::probe {
namespace {

using CapMask = uint64_t;  // bit N is capability N, as /proc/PID/status shows the sets

constexpr CapMask bit(int cap) {
    return CapMask{1} << cap;
}

struct CapSets {
    CapMask effective = 0;
    CapMask permitted = 0;
    CapMask inheritable = 0;
};

[[noreturn]] void refused(const char* step) {
    throw EnvironmentError(fmt::format("cannot drop capabilities after attaching: {}: {}", step,
                                       std::strerror(errno)));
}

CapSets get_sets() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capget, &header, data) != 0) refused("capget");
    const auto join = [&](uint32_t __user_cap_data_struct::*set) {
        return CapMask{data[0].*set} | CapMask{data[1].*set} << 32;
    };
    return {join(&__user_cap_data_struct::effective), join(&__user_cap_data_struct::permitted),
            join(&__user_cap_data_struct::inheritable)};
}

// The kernel lowers the ambient set with these (to what stays permitted and inheritable).
void set_sets(const CapSets& s) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; ++i) {
        data[i].effective = static_cast<uint32_t>(s.effective >> (32 * i));
        data[i].permitted = static_cast<uint32_t>(s.permitted >> (32 * i));
        data[i].inheritable = static_cast<uint32_t>(s.inheritable >> (32 * i));
    }
    if (syscall(SYS_capset, &header, data) != 0) refused("capset");
}

std::vector<std::string> names_of(CapMask m) {
    static const std::pair<int, const char*> keepable[] = {{CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE"},
                                                           {CAP_NET_ADMIN, "CAP_NET_ADMIN"},
                                                           {CAP_SYS_ADMIN, "CAP_SYS_ADMIN"},
                                                           {CAP_BPF, "CAP_BPF"}};
    std::vector<std::string> names;
    for (const auto& [cap, name] : keepable)
        if (m & bit(cap)) names.emplace_back(name);
    return names;
}

// Whether files can be created and removed in `dir` with the effective set as it is now
// (AT_EACCESS: access() would judge root by its permitted set). Only EACCES says no: a missing
// or read-only directory is not helped by CAP_DAC_OVERRIDE.
bool may_write_in(const std::string& dir) {
    return faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) == 0 || errno != EACCES;
}

}  // namespace

std::vector<std::string> drop_capabilities(const NeedsAfterAttach& needs) {
    const CapSets start = get_sets();
    CapMask keep = bit(CAP_NET_ADMIN) & start.permitted;
    // Each need is tried with only what is kept so far in effect. The permitted set still
    // holds everything, so the trial is undone below.
    const auto in_effect_only = [&](CapMask m) {
        set_sets({m, start.permitted, start.inheritable});
    };
    in_effect_only(keep);
    if (!needs.read_a_map()) {
        keep |= (start.permitted & bit(CAP_BPF)) ? bit(CAP_BPF)
                                                 : (start.permitted & bit(CAP_SYS_ADMIN));
        in_effect_only(keep);
    }
    for (const std::string& dir : needs.dirs) {
        if (!may_write_in(dir)) {
            keep |= start.permitted & bit(CAP_DAC_OVERRIDE);
            break;
        }
    }
    // Dropping from the bounding set takes CAP_SETPCAP in effect. Without it (file
    // capabilities instead of root) the bounding set stays, and no_new_privs keeps an exec
    // from gaining anything beyond the permitted set.
    set_sets(start);
    if (start.effective & bit(CAP_SETPCAP)) {
        for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap)
            if (!(keep & bit(cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
                refused("PR_CAPBSET_DROP");
    }
    set_sets({keep, keep, 0});
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) refused("PR_SET_NO_NEW_PRIVS");
    if (!needs.read_a_map()) {
        throw EnvironmentError(
            fmt::format("cannot read its own BPF maps after dropping capabilities (kept: {}): {}",
                        fmt::join(names_of(keep), ", "), std::strerror(errno)));
    }
    return names_of(keep);
}

}  // namespace np::probe
