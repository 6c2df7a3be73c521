#include "src/probe/tiers.hpp"

#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

namespace np::probe {

NodeFeatures probe_features() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    NodeFeatures f;
    if (syscall(SYS_capget, &header, data) == 0) {
        const auto has = [&](int cap) { return (data[cap / 32].effective >> (cap % 32)) & 1U; };
        const bool sys_admin = has(CAP_SYS_ADMIN);
        f.may_load_bpf = has(CAP_BPF) || sys_admin;
        f.may_trace = has(CAP_PERFMON) || sys_admin;
        f.may_change_tc = has(CAP_NET_ADMIN);
    }
    if (f.may_load_bpf) f.btf = read_kernel_btf();
    return f;
}

TierChoice best_tier(const NodeFeatures& f, std::optional<ProbeTier> at_most) {
    TierChoice c{ProbeTier::full, ""};
    const auto lower = [&](ProbeTier t, std::string why) {
        if (at_least(c.tier, t) && c.tier != t) c = {t, std::move(why)};
    };
    std::vector<std::string> missing, no_hook;
    // The verifier refuses the tc programs' packet access without CAP_PERFMON as well.
    if (!f.may_load_bpf) missing.push_back("CAP_BPF");
    if (!f.may_trace) missing.push_back("CAP_PERFMON");
    if (!f.may_change_tc) missing.push_back("CAP_NET_ADMIN");
    if (f.btf) {
        if (!f.btf->has_kfree_skb) no_hook.push_back("kfree_skb");
        if (!f.btf->has_tcp_retransmit_skb) no_hook.push_back("tcp_retransmit_skb");
        if (!f.btf->has_net_dev_start_xmit) no_hook.push_back("net_dev_start_xmit");
    }
    if (!missing.empty()) {
        lower(ProbeTier::kernel_counters,
              fmt::format("{} missing: no BPF program may be loaded", fmt::join(missing, ", ")));
    } else if (!f.btf) {
        lower(ProbeTier::tc_counters,
              "the kernel exposes no BTF (/sys/kernel/btf/vmlinux): no tracing programs");
    } else if (!no_hook.empty()) {
        lower(ProbeTier::tc_counters,
              fmt::format("the kernel's BTF has no tracepoint {}", fmt::join(no_hook, ", ")));
    } else if (!f.btf->kfree_skb_has_reason) {
        lower(ProbeTier::drops_without_reasons,
              "the kernel's kfree_skb tracepoint has no drop reason (Linux < 5.17)");
    }
    if (at_most && !at_least(*at_most, c.tier)) {
        c = {*at_most, fmt::format("--max-tier {} (this node allows {})", to_string(*at_most),
                                   to_string(c.tier))};
    }
    return c;
}

ProbeTier tier_below(ProbeTier t) {
    switch (t) {
        case ProbeTier::full:
            return ProbeTier::drops_without_reasons;
        case ProbeTier::drops_without_reasons:
            return ProbeTier::tc_counters;
        case ProbeTier::tc_counters:
        case ProbeTier::kernel_counters:
            break;
    }
    return ProbeTier::kernel_counters;
}

}  // namespace np::probe
