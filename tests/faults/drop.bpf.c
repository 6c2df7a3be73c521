// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Fault injection for the ground-truth fault suite (tests/faults/): drops about one in twenty
 * UDP datagrams to or from the iperf port 5201, at a chosen point of the receiving node — tc
 * ingress (after np-probe's own filter: the kernel names the drop TC_INGRESS) or XDP (before any
 * hook: only the veth's xdp_drops counter sees it). TCP and everything else pass. And, on a hop
 * between the nodes (a switch port's tc egress), drop_tc_hop: about one in a hundred of the
 * test's data-sized packets, TCP segments and UDP datagrams alike — random loss on the path.
 * Over IPv4 and IPv6 alike (the fault suite runs in both families). */
#include "vmlinux.h"

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define IPERF_PORT 5201
#define ONE_IN 20
#define MIN_DATA_LEN 64 /* UDP header + payload */

/* The L4 header of an IPv4 packet without options or an IPv6 packet without extension headers
 * (what the test's traffic is), and its protocol in *proto; NULL for anything else. */
static __always_inline void *l4_header(void *data, void *data_end, __u8 *proto)
{
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return NULL;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > data_end || ip->ihl != 5)
			return NULL;
		*proto = ip->protocol;
		return ip + 1;
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > data_end)
			return NULL;
		*proto = ip6->nexthdr;
		return ip6 + 1;
	}
	return NULL;
}

/* Whether the frame in [data, data_end) is a UDP datagram of the iperf flow picked to drop. */
static __always_inline bool pick(void *data, void *data_end)
{
	__u8 proto = 0;
	struct udphdr *udp = l4_header(data, data_end, &proto);

	if (!udp || proto != IPPROTO_UDP || (void *)(udp + 1) > data_end)
		return false;
	if (udp->dest != bpf_htons(IPERF_PORT) && udp->source != bpf_htons(IPERF_PORT))
		return false;
	/* Only the test's data: iperf3 opens a UDP test with 4-byte datagrams each way, and
	 * losing one of those fails the run instead of making the loss it is there to make. */
	if (bpf_ntohs(udp->len) < MIN_DATA_LEN)
		return false;
	return bpf_get_prandom_u32() % ONE_IN == 0;
}

/* A data-sized packet (a full segment or datagram, never an ACK or iperf3's hello) of the iperf
 * port, TCP or UDP, picked one in ONE_IN_HOP. */
#define ONE_IN_HOP 100
#define MIN_HOP_LEN 1000
static __always_inline bool pick_on_hop(void *data, void *data_end, __u32 len)
{
	__u8 proto = 0;
	__be16 *ports = l4_header(data, data_end, &proto);

	if (!ports || (proto != IPPROTO_UDP && proto != IPPROTO_TCP) ||
	    (void *)(ports + 2) > data_end)
		return false;
	if (ports[0] != bpf_htons(IPERF_PORT) && ports[1] != bpf_htons(IPERF_PORT))
		return false;
	if (len < MIN_HOP_LEN)
		return false;
	return bpf_get_prandom_u32() % ONE_IN_HOP == 0;
}

SEC("classifier/hop")
int drop_tc_hop(struct __sk_buff *skb)
{
	return pick_on_hop((void *)(long)skb->data, (void *)(long)skb->data_end, skb->len)
		   ? TC_ACT_SHOT
		   : TC_ACT_OK;
}

SEC("tc")
int drop_tc(struct __sk_buff *skb)
{
	return pick((void *)(long)skb->data, (void *)(long)skb->data_end) ? TC_ACT_SHOT : TC_ACT_OK;
}

SEC("xdp")
int drop_xdp(struct xdp_md *ctx)
{
	return pick((void *)(long)ctx->data, (void *)(long)ctx->data_end) ? XDP_DROP : XDP_PASS;
}

/* Reordering on a hop (the switch's port towards the receiver, under an htb root "1:" whose
 * filter is attached with classid 1:1): one in ONE_IN_HOLD of the test's data-sized packets goes
 * to class 1:20, the rest of them to 1:10, everything else (ACKs, iperf3's control connection,
 * ARP) to htb's direct queue. 1:10 is shaped so that the bursts the client's NIC lets through
 * queue there; 1:20 is not, so its packets overtake the ones queued ahead of them in 1:10. cls_bpf
 * takes the class's major number from the filter's classid and the minor from tc_classid. */
#define ONE_IN_HOLD 50
#define CLASS_MAIN 0x10
#define CLASS_OVERTAKE 0x20
SEC("classifier/reorder")
int reorder_tc_hop(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	__u8 proto = 0;
	__be16 *ports = l4_header(data, data_end, &proto);

	skb->tc_classid = 0;
	if (!ports || (proto != IPPROTO_UDP && proto != IPPROTO_TCP) ||
	    (void *)(ports + 2) > data_end)
		return TC_ACT_OK;
	if (ports[0] != bpf_htons(IPERF_PORT) && ports[1] != bpf_htons(IPERF_PORT))
		return TC_ACT_OK;
	if (skb->len < MIN_HOP_LEN)
		return TC_ACT_OK;
	skb->tc_classid =
		bpf_get_prandom_u32() % ONE_IN_HOLD == 0 ? CLASS_OVERTAKE : CLASS_MAIN;
	return TC_ACT_OK;
}
