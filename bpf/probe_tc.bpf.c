// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* np-probe's tc-counters tier: only what crossed the data NIC, at the tc clsact hooks, built
 * against the UAPI headers instead of vmlinux.h. With no CO-RE relocation and no tracing program
 * it needs no kernel BTF, so it loads where probe.bpf.c cannot (a 4.x kernel, one built without
 * CONFIG_DEBUG_INFO_BTF). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <stdbool.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "tc_count.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
