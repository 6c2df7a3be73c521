// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* np-probe, kernel side: what crossed the data NIC (tc clsact ingress/egress), what TCP
 * retransmitted (tp_btf/tcp_retransmit_skb) and what the kernel dropped, with the reason
 * (tp_btf/kfree_skb). Everything is aggregated in per-CPU maps; user space reads them
 * (src/probe/). There are no per-packet events. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "probe.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TC_ACT_UNSPEC (-1) /* let later filters and the qdisc decide: we only count */
#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define ETH_P_ARP 0x0806
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IP_MF 0x2000
#define IP_OFFSET 0x1FFF
#define ICMP_ECHOREPLY 0
#define ICMP_ECHO 8
#define IPPROTO_ICMPV6 58 /* a #define in uapi, so not in vmlinux.h */
#define ICMPV6_ECHO_REQUEST 128
#define ICMPV6_ECHO_REPLY 129
/* An Ethernet frame is at least 64 bytes with FCS: 60 before it. */
#define MIN_FRAME_NO_FCS 60
/* What a frame costs on the wire beyond MAC header .. payload: preamble+SFD 8, FCS 4 and
 * the inter-frame gap 12 (IEEE 802.3). */
#define WIRE_EXTRA_BYTES 24
#define FCS_BYTES 4
#define VLAN_TAG_BYTES 4

/* Filters, set by user space before load so the verifier prunes what is off. */
const volatile __u32 netns_ino = 0;	/* inode of the probe's network namespace */
const volatile __u32 data_ifindex = 0;	/* the data iface, inside that namespace */
const volatile __u16 iperf_port = 5201; /* host order */
/* Tracepoint signatures that differ between kernels, read from the running kernel's BTF:
 * kfree_skb gained rx_sk in 6.12, tcp_retransmit_skb gained err in 6.15 (and since then
 * fires for failed attempts too). */
const volatile bool kfree_skb_has_rx_sk = false;
const volatile bool retransmit_has_err = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_TRAFFIC_SLOTS);
	__type(key, __u32);
	__type(value, struct np_traffic);
} traffic SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_FLOW_COUNT);
	__type(key, __u32);
	__type(value, struct np_retrans);
} retransmits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_DROP_SLOTS);
	__type(key, __u32);
	__type(value, struct np_drop);
} drops SEC(".maps");

/* All drops counted, for the time series: one slot, so a sample need not read the array. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drop_count SEC(".maps");

struct l4_class {
	__u8 proto;    /* enum np_proto */
	__u8 flow;     /* enum np_flow */
	__u16 hdr_len; /* L2 + L3 + L4 header bytes: what GSO replicates per segment */
};

static __always_inline __u8 port_flow(__u16 sport_be, __u16 dport_be)
{
	const __u16 port = bpf_htons(iperf_port);
	return sport_be == port || dport_be == port ? NP_FLOW_IPERF : NP_FLOW_OTHER;
}

/* Classifies by L4 protocol and measured flow. `l4` points at the L4 header of a
 * first (or only) fragment; the caller has bounds-checked nothing past it. */
static __always_inline void classify_l4(struct l4_class *c, __u8 ipproto, void *l4, void *data_end,
					bool v6)
{
	if (ipproto == IPPROTO_TCP) {
		struct tcphdr *th = l4;
		c->proto = NP_PROTO_TCP;
		if ((void *)(th + 1) > data_end)
			return;
		c->flow = port_flow(th->source, th->dest);
		c->hdr_len += th->doff * 4;
	} else if (ipproto == IPPROTO_UDP) {
		struct udphdr *uh = l4;
		c->proto = NP_PROTO_UDP;
		if ((void *)(uh + 1) > data_end)
			return;
		c->flow = port_flow(uh->source, uh->dest);
		c->hdr_len += sizeof(*uh);
	} else if (ipproto == (v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP)) {
		__u8 *type = l4;
		c->proto = NP_PROTO_ICMP;
		if ((void *)(type + 1) > data_end)
			return;
		if (v6 ? (*type == ICMPV6_ECHO_REQUEST || *type == ICMPV6_ECHO_REPLY)
		       : (*type == ICMP_ECHO || *type == ICMP_ECHOREPLY))
			c->flow = NP_FLOW_ICMP_ECHO;
	}
}

/* Parses from the MAC header (tc sees it on ingress too: cls_bpf pushes it back). */
static __always_inline void classify_frame(struct __sk_buff *skb, struct l4_class *c)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	__u16 h_proto;
	__u32 off = ETH_HLEN;

	if ((void *)(eth + 1) > data_end)
		return;
	h_proto = eth->h_proto;
	if (h_proto == bpf_htons(ETH_P_8021Q) || h_proto == bpf_htons(ETH_P_8021AD)) {
		struct vlan_hdr *vh = data + off;
		if ((void *)(vh + 1) > data_end)
			return;
		h_proto = vh->h_vlan_encapsulated_proto;
		off += sizeof(*vh);
	}
	c->hdr_len = off;
	if (h_proto == bpf_htons(ETH_P_ARP)) {
		c->proto = NP_PROTO_ARP;
	} else if (h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = data + off;
		if ((void *)(iph + 1) > data_end)
			return;
		c->hdr_len += iph->ihl * 4;
		/* A non-first fragment has no L4 header: it counts under its protocol but no
		 * flow (see README, "trace"). */
		if (iph->frag_off & bpf_htons(IP_OFFSET)) {
			classify_l4(c, iph->protocol, data_end, data_end, false);
			return;
		}
		classify_l4(c, iph->protocol, (void *)iph + iph->ihl * 4, data_end, false);
	} else if (h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data + off;
		if ((void *)(ip6 + 1) > data_end)
			return;
		c->hdr_len += sizeof(*ip6);
		classify_l4(c, ip6->nexthdr, ip6 + 1, data_end, true);
	}
}

static __always_inline __u32 frame_bucket(__u32 frame_bytes)
{
	/* The bounds user space reads the histogram with (probe.h), folded into constants. */
	const __u32 bounds[NP_FRAME_BUCKETS] = NP_FRAME_BUCKET_BOUNDS;

#pragma unroll
	for (__u32 i = 0; i < NP_FRAME_BUCKETS - 1; i++)
		if (frame_bytes <= bounds[i])
			return i;
	return NP_FRAME_BUCKETS - 1;
}

static __always_inline __u32 frame_l2_bytes(__u32 bytes)
{
	return bytes < MIN_FRAME_NO_FCS ? MIN_FRAME_NO_FCS : bytes;
}

/* Counts one skb of `len` bytes (MAC header .. payload) that is `segs` frames on the wire:
 * a GSO (egress) or GRO (ingress) skb leaves as / arrived as gso_segs frames, each with its own
 * copy of the `hdr_len` header bytes; all but the last carry gso_size bytes. */
static __always_inline void count_frames(__u32 dir, const struct l4_class *c, __u32 len,
					 __u32 segs, __u32 gso_size, __u32 tag)
{
	struct np_traffic *t;
	__u32 slot, full, last;

	slot = np_traffic_slot(dir, c->proto, c->flow);
	t = bpf_map_lookup_elem(&traffic, &slot);
	if (!t)
		return;
	segs = segs > 1 ? segs : 1;
	t->packets += 1;
	t->bytes += len;
	t->wire_packets += segs;
	if (segs == 1) {
		last = frame_l2_bytes(len + tag);
		t->wire_bytes += last + WIRE_EXTRA_BYTES;
		t->frames_by_size[frame_bucket(last + FCS_BYTES) & (NP_FRAME_BUCKETS - 1)] += 1;
		return;
	}
	full = frame_l2_bytes(c->hdr_len + gso_size + tag);
	last = frame_l2_bytes(len - (segs - 1) * gso_size + tag);
	t->wire_bytes += (__u64)(segs - 1) * (full + WIRE_EXTRA_BYTES) + last + WIRE_EXTRA_BYTES;
	t->frames_by_size[frame_bucket(full + FCS_BYTES) & (NP_FRAME_BUCKETS - 1)] += segs - 1;
	t->frames_by_size[frame_bucket(last + FCS_BYTES) & (NP_FRAME_BUCKETS - 1)] += 1;
}

static __always_inline int count_skb(struct __sk_buff *skb, __u32 dir)
{
	struct l4_class c = {.proto = NP_PROTO_OTHER, .flow = NP_FLOW_OTHER, .hdr_len = 0};

	classify_frame(skb, &c);
	/* an offloaded VLAN tag is not in len */
	count_frames(dir, &c, skb->len, skb->gso_segs, skb->gso_size,
		     skb->vlan_present ? VLAN_TAG_BYTES : 0);
	return TC_ACT_UNSPEC;
}

SEC("tc")
int np_tc_ingress(struct __sk_buff *skb)
{
	return count_skb(skb, NP_DIR_RX);
}

SEC("tc")
int np_tc_egress(struct __sk_buff *skb)
{
	return count_skb(skb, NP_DIR_TX);
}

/* tp_btf arguments are BTF-typed pointers: plain dereferences compile to fault-safe direct
 * loads (no helper call), relocated by CO-RE. */
static __always_inline __u32 sock_netns(const struct sock *sk)
{
	return sk->__sk_common.skc_net.net->ns.inum;
}

/* The flow of a socket: the iperf port on either end. */
static __always_inline __u8 sock_flow(const struct sock *sk)
{
	__u16 sport = sk->__sk_common.skc_num; /* host order */
	__u16 dport = sk->__sk_common.skc_dport;
	return sport == iperf_port || dport == bpf_htons(iperf_port) ? NP_FLOW_IPERF
								     : NP_FLOW_OTHER;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(np_tcp_retransmit, const struct sock *sk, const struct sk_buff *skb)
{
	struct np_retrans *r;
	struct dst_entry *dst;
	__u32 flow, segs;

	if (retransmit_has_err) {
		int err = (int)ctx[2];
		if (err)
			return 0;
	}
	if (sock_netns(sk) != netns_ino)
		return 0;
	/* The device is known when the socket has a cached route: count only retransmits
	 * that leave through the data iface. */
	dst = sk->sk_dst_cache;
	if (dst && (__u32)dst->dev->ifindex != data_ifindex)
		return 0;
	flow = sock_flow(sk);
	r = bpf_map_lookup_elem(&retransmits, &flow);
	if (!r)
		return 0;
	/* tcp_skb_pcount(): the segments this skb stands for. */
	segs = BPF_CORE_READ((struct tcp_skb_cb *)&skb->cb[0], tcp_gso_segs);
	r->skbs += 1;
	r->segments += segs ? segs : 1;
	return 0;
}

/* Protocol and flow of a dropped skb, from its headers in the kernel buffer (the skb may be
 * anywhere in the stack, so use the saved header offset, not skb->data). One read covers an
 * IPv4 header without options or an IPv6 header, and the ports or ICMP type after it. */
static __always_inline void classify_dropped(const struct sk_buff *skb, struct l4_class *k)
{
	unsigned char *l3 = skb->head + skb->network_header;
	__u16 proto = skb->protocol;
	union {
		struct {
			struct iphdr ip;
			__u16 ports[2];
		} v4;
		struct {
			struct ipv6hdr ip;
			__u16 ports[2];
		} v6;
	} h;
	__u8 ipproto;
	__u16 *ports;

	k->proto = NP_PROTO_OTHER;
	k->flow = NP_FLOW_OTHER;
	if (proto == bpf_htons(ETH_P_ARP)) {
		k->proto = NP_PROTO_ARP;
		return;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		if (bpf_probe_read_kernel(&h.v4, sizeof(h.v4), l3))
			return;
		ipproto = h.v4.ip.protocol;
		ports = h.v4.ports;
		if (h.v4.ip.frag_off & bpf_htons(IP_OFFSET))
			ports = 0;
		else if (h.v4.ip.ihl != 5 && bpf_probe_read_kernel(h.v4.ports, sizeof(h.v4.ports),
								   l3 + h.v4.ip.ihl * 4))
			ports = 0;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		if (bpf_probe_read_kernel(&h.v6, sizeof(h.v6), l3))
			return;
		ipproto = h.v6.ip.nexthdr;
		ports = h.v6.ports;
	} else {
		return;
	}
	if (ipproto == IPPROTO_TCP || ipproto == IPPROTO_UDP) {
		k->proto = ipproto == IPPROTO_TCP ? NP_PROTO_TCP : NP_PROTO_UDP;
		if (ports)
			k->flow = port_flow(ports[0], ports[1]);
	} else if (ipproto == IPPROTO_ICMP || ipproto == IPPROTO_ICMPV6) {
		__u8 type = ports ? *(__u8 *)ports : 0xff;
		k->proto = NP_PROTO_ICMP;
		if (type == ICMP_ECHO || type == ICMP_ECHOREPLY || type == ICMPV6_ECHO_REQUEST ||
		    type == ICMPV6_ECHO_REPLY)
			k->flow = NP_FLOW_ICMP_ECHO;
	}
}

/* Protocol and flow of a drop from its socket: direct loads, no copy of packet bytes. */
static __always_inline void classify_sock(const struct sock *sk, struct l4_class *c)
{
	__u16 proto = BPF_CORE_READ_BITFIELD(sk, sk_protocol); /* a bitfield before 5.6 */

	c->flow = NP_FLOW_OTHER;
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		c->proto = proto == IPPROTO_TCP ? NP_PROTO_TCP : NP_PROTO_UDP;
		c->flow = sock_flow(sk);
	} else if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		c->proto = NP_PROTO_ICMP; /* a ping socket */
		c->flow = NP_FLOW_ICMP_ECHO;
	} else {
		c->proto = NP_PROTO_OTHER;
	}
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(np_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason)
{
	struct l4_class c;
	struct np_drop *d;
	struct net_device *dev;
	const struct sock *sk = NULL;
	__u32 ns = 0, slot;
	__u64 *total;

	/* Not drops: a consumed skb, or one freed before any reason applied. */
	if (reason <= SKB_CONSUMED)
		return 0;
	if (kfree_skb_has_rx_sk)
		sk = (const struct sock *)ctx[3]; /* BTF-typed by the verifier */
	if (!sk)
		sk = skb->sk;
	/* The device's namespace first: socket-less drops (qdisc, backlog, no socket) of other
	 * namespaces would pass a socket-only filter. UDP reuses skb->dev as dev_scratch once
	 * queued, so an unreadable device (ns 0) falls back to the socket. */
	dev = skb->dev;
	if (dev)
		ns = dev->nd_net.net->ns.inum;
	if (ns) {
		if (ns != netns_ino || (__u32)dev->ifindex != data_ifindex)
			return 0;
	} else if (!sk || sock_netns(sk) != netns_ino) {
		return 0;
	}
	/* A full socket names protocol and ports with direct loads; copying the headers out of
	 * the packet (bpf_probe_read_kernel) costs several times more. Request and timewait
	 * sockets share only sock_common, so they go the packet way. */
	c.proto = NP_PROTO_OTHER;
	c.flow = NP_FLOW_OTHER;
	c.hdr_len = 0;
	if (sk &&
	    !((1 << sk->__sk_common.skc_state) & ((1 << TCP_TIME_WAIT) | (1 << TCP_NEW_SYN_RECV))))
		classify_sock(sk, &c);
	/* Not an iperf socket: the packet's own headers may still be the flow's (a segment the
	 * kernel answers from its control socket). */
	if (c.flow != NP_FLOW_IPERF)
		classify_dropped(skb, &c);
	slot = np_drop_slot(reason < NP_DROP_REASON_SLOTS ? reason : NP_DROP_REASON_SLOTS - 1,
			    ns != 0, c.proto, c.flow);
	d = bpf_map_lookup_elem(&drops, &slot);
	if (!d)
		return 0;
	d->packets += 1;
	d->bytes += skb->len;
	slot = 0;
	total = bpf_map_lookup_elem(&drop_count, &slot);
	if (total)
		*total += 1;
	return 0;
}

/* What left the NIC: the driver is handed the skb after the qdisc (net_dev_start_xmit fires in
 * xmit_one just before ndo_start_xmit), so qdisc drops are never counted as sent. tc egress
 * (NP_DIR_TX) saw the same skbs before the qdisc; the difference is what the queue dropped. */
SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(np_dev_xmit, const struct sk_buff *skb, const struct net_device *dev)
{
	struct l4_class c = {.proto = NP_PROTO_OTHER, .flow = NP_FLOW_OTHER, .hdr_len = 0};
	const struct sock *sk;
	struct skb_shared_info *shinfo;
	__u16 gso_segs = 0, gso_size = 0;
	__u8 doff = 0;

	if ((__u32)dev->ifindex != data_ifindex || dev->nd_net.net->ns.inum != netns_ino)
		return 0;
	/* An iperf socket names the flow with direct loads; anything else is read from its
	 * headers, as tc does: ARP, ICMP, and what the kernel sends on a flow's behalf from its own
	 * control socket (a RST or ACK carries the flow's ports, the socket does not). */
	sk = skb->sk;
	if (sk &&
	    !((1 << sk->__sk_common.skc_state) & ((1 << TCP_TIME_WAIT) | (1 << TCP_NEW_SYN_RECV))) &&
	    (sk->sk_protocol == IPPROTO_TCP || sk->sk_protocol == IPPROTO_UDP))
		classify_sock(sk, &c);
	if (c.flow != NP_FLOW_IPERF)
		classify_dropped(skb, &c);
	shinfo = (struct skb_shared_info *)(skb->head + skb->end);
	bpf_probe_read_kernel(&gso_segs, sizeof(gso_segs), &shinfo->gso_segs);
	bpf_probe_read_kernel(&gso_size, sizeof(gso_size), &shinfo->gso_size);
	if (gso_segs > 1) {
		/* Headers replicated per segment: MAC .. transport, plus the L4 header. */
		c.hdr_len = skb->transport_header - skb->mac_header;
		if (c.proto == NP_PROTO_TCP) {
			bpf_probe_read_kernel(&doff, 1, skb->head + skb->transport_header + 12);
			c.hdr_len += (doff >> 4) * 4;
		} else {
			c.hdr_len += 8;
		}
	}
	/* At the driver skb->data is the MAC header, so len counts it as tc does. */
	count_frames(NP_DIR_XMIT, &c, skb->len, gso_segs, gso_size,
		     skb->vlan_all ? VLAN_TAG_BYTES : 0);
	return 0;
}
