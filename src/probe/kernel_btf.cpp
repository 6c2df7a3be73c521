#include "src/probe/kernel_btf.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <memory>
#include <string_view>

namespace np::probe {
namespace {

struct BtfFree {
    void operator()(btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<btf, BtfFree>;

// Parameter count of a tracepoint's BTF typedef btf_trace_NAME (the first is the probe's
// context pointer), or -1 when the kernel has no such tracepoint.
int tracepoint_params(const btf* b, const char* name) {
    const int id =
        btf__find_by_name_kind(b, fmt::format("btf_trace_{}", name).c_str(), BTF_KIND_TYPEDEF);
    if (id < 0) return -1;
    const btf_type* t = btf__type_by_id(b, btf__type_by_id(b, id)->type);  // pointer
    if (!t || !btf_is_ptr(t)) return -1;
    t = btf__type_by_id(b, t->type);
    if (!t || !btf_is_func_proto(t)) return -1;
    return btf_vlen(t);
}

}  // namespace

std::string KernelBtf::drop_reason_name(uint32_t reason) const {
    auto it = drop_reasons.find(reason);
    return it != drop_reasons.end() ? it->second : fmt::format("REASON_{:#x}", reason);
}

std::optional<KernelBtf> read_kernel_btf() {
    BtfPtr b(btf__load_vmlinux_btf());
    if (!b) return std::nullopt;
    KernelBtf k;
    if (const int enum_id = btf__find_by_name_kind(b.get(), "skb_drop_reason", BTF_KIND_ENUM);
        enum_id >= 0) {
        const btf_type* e = btf__type_by_id(b.get(), enum_id);
        const struct btf_enum* values = btf_enum(e);  // the function hides the struct's name
        constexpr std::string_view prefix = "SKB_DROP_REASON_";
        for (int i = 0; i < btf_vlen(e); ++i) {
            std::string_view name = btf__name_by_offset(b.get(), values[i].name_off);
            if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
            k.drop_reasons[static_cast<uint32_t>(values[i].val)] = std::string(name);
        }
    }
    // kfree_skb(ctx, skb, location[, reason[, rx_sk]]); tcp_retransmit_skb(ctx, sk, skb[, err])
    const int kfree = tracepoint_params(b.get(), "kfree_skb");
    k.has_kfree_skb = kfree >= 3;
    k.kfree_skb_has_reason = kfree >= 4 && !k.drop_reasons.empty();
    k.kfree_skb_has_rx_sk = kfree >= 5;
    const int retrans = tracepoint_params(b.get(), "tcp_retransmit_skb");
    k.has_tcp_retransmit_skb = retrans >= 3;
    k.retransmit_has_err = retrans >= 4;
    k.has_net_dev_start_xmit = tracepoint_params(b.get(), "net_dev_start_xmit") >= 3;
    return k;
}

}  // namespace np::probe
