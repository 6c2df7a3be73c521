#pragma once
// Facts about the running kernel read from its BTF (/sys/kernel/btf/vmlinux): the names of
// enum skb_drop_reason, and the signatures of the tracepoints the probe attaches to.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace np::probe {

struct KernelBtf {
    // Value -> name without the SKB_DROP_REASON_ prefix (SKB_CONSUMED and the like keep
    // their full name). Values of drop-reason subsystems above the core enum are absent.
    std::map<uint32_t, std::string> drop_reasons;
    bool has_kfree_skb = false;           // tracepoint skb:kfree_skb (skb, location), >= 5.5
    bool kfree_skb_has_reason = false;    // ... with its reason argument (>= 5.17)
    bool kfree_skb_has_rx_sk = false;     // ... and its rx_sk argument (>= 6.12)
    bool has_tcp_retransmit_skb = false;  // tracepoint tcp:tcp_retransmit_skb
    bool retransmit_has_err = false;      // ... with its err argument (>= 6.15)
    bool has_net_dev_start_xmit = false;  // tracepoint net:net_dev_start_xmit

    std::string drop_reason_name(uint32_t reason) const;
};

// Empty when the kernel exposes no BTF (/sys/kernel/btf/vmlinux): no tp_btf program loads then.
std::optional<KernelBtf> read_kernel_btf();

}  // namespace np::probe
