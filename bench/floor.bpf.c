// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Empty programs at np-probe's hooks. Their run_time_ns/run_cnt is what BPF run-time
 * statistics report for doing nothing (the two clock reads around the program, and on a
 * virtual machine the cost of its clock), the floor to subtract from np-probe's figures. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tc")
int floor_tc_ingress(struct __sk_buff *skb)
{
	return -1; /* TC_ACT_UNSPEC */
}

SEC("tc")
int floor_tc_egress(struct __sk_buff *skb)
{
	return -1;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(floor_kfree_skb, struct sk_buff *skb)
{
	return 0;
}
