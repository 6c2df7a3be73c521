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

/* Filters, set by user space before load so the verifier prunes what is off. */
const volatile __u32 netns_ino = 0;    /* inode of the probe's network namespace */
const volatile __u32 data_ifindex = 0; /* the data iface, inside that namespace */
/* Tracepoint signatures that differ between kernels, read from the running kernel's BTF:
 * kfree_skb gained rx_sk in 6.12, tcp_retransmit_skb gained err in 6.15 (and since then
 * fires for failed attempts too). */
const volatile bool kfree_skb_has_rx_sk = false;
const volatile bool retransmit_has_err = false;

#include "bins.h"
#include "tc_count.h"
#include "cpu_account.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_FLOW_COUNT);
	__type(key, __u32);
	__type(value, struct np_retrans);
} retransmits SEC(".maps");

/* Each retransmitting socket's tcp_sock.total_retrans as last read, by the socket's address:
 * what the kernel counted since is the retransmit's count (np_tcp_retransmit). A socket freed
 * and its address reused reads a smaller total and starts anew; LRU, so closed sockets go. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NP_RETRANS_SOCKETS);
	__type(key, __u64);
	__type(value, __u32);
} retrans_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_DROP_SLOTS);
	__type(key, __u32);
	__type(value, struct np_drop);
} drops SEC(".maps");

/* drops-without-reasons tier: per-CPU counts by the code address that freed the skb. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, NP_DROP_SITES);
	__type(key, struct np_drop_site_key);
	__type(value, struct np_drop);
} drop_sites SEC(".maps");

/* All drops counted, for the time series: one slot, so a sample need not read the array. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drop_count SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, NP_STREAM_DROP_KEYS);
	__type(key, struct np_stream_drop_key);
	__type(value, struct np_drop);
} stream_drops SEC(".maps");

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

/* The socket's stream: its port that is not the iperf port (tc_count.h, port_flow). */
static __always_inline __u16 sock_stream_port(const struct sock *sk)
{
	__u16 sport = sk->__sk_common.skc_num;
	return sport == iperf_port ? bpf_ntohs(sk->__sk_common.skc_dport) : sport;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(np_tcp_retransmit, const struct sock *sk, const struct sk_buff *skb)
{
	struct np_retrans *r;
	struct dst_entry *dst;
	__u32 flow, segs, total, *seen;
	__u64 key = (__u64)sk;
	bool counted = true;

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
	/* What the kernel counted (TcpRetransSegs, tcpi_total_retrans, so iperf3's figure) is the
	 * socket's total_retrans, raised by the segments of each retransmit once it is built and
	 * before it is handed down. Since 6.15 the tracepoint fires for every attempt with its
	 * result, and a failed one may have been counted (the device or qdisc dropped it, a copy
	 * or a route failed after) or not (still queued in the host, no memory, no window): the
	 * growth of the total since this socket's previous event says which, and how many
	 * segments. Reading the skb's segment count instead missed 15 and 19 of ~420 retransmits
	 * iperf3 and TcpRetransSegs agreed on (a tbf queue of a few frames, 2 vCPUs, 6.18). */
	if (retransmit_has_err)
		counted = (int)ctx[2] >= 0;
	total = BPF_CORE_READ((struct tcp_sock *)sk, total_retrans);
	seen = bpf_map_lookup_elem(&retrans_seen, &key);
	if (seen && total >= *seen) {
		segs = total - *seen;
		*seen = total;
	} else {
		/* Its first retransmit seen: the skb's segments, if it was counted. */
		segs = BPF_CORE_READ((struct tcp_skb_cb *)&skb->cb[0], tcp_gso_segs);
		segs = counted ? (segs ? segs : 1) : 0;
		bpf_map_update_elem(&retrans_seen, &key, &total, BPF_ANY);
	}
	if (!segs)
		return 0;
	r->skbs += 1;
	r->segments += segs;
	if (flow == NP_FLOW_IPERF) {
		struct np_stream *s =
		    stream_slot(sock_stream_port(sk), NP_PROTO_TCP, NP_STREAM_RETRANS);
		if (s) {
			s->packets += 1;
			s->wire_packets += segs;
		}
	}
	return 0;
}

/* The first bytes of a dropped packet's network header: the IP header and what follows it,
 * the ports or the ICMP type. */
union np_dropped_head {
	struct {
		struct iphdr ip;
		__u16 ports[4]; /* or an ICMP header's first 8 bytes */
	} v4;
	struct {
		struct ipv6hdr ip;
		__u16 ports[4];
	} v6;
};

/* An IPv4 packet's L4 protocol, and its ports unless it is a later fragment or they cannot be
 * read (*ports 0). False when the IP header itself cannot be read. */
static __always_inline bool read_dropped_v4(unsigned char *l3, union np_dropped_head *h,
					    __u8 *ipproto, __u16 **ports)
{
	if (bpf_probe_read_kernel(&h->v4, sizeof(h->v4), l3))
		return false;
	*ipproto = h->v4.ip.protocol;
	*ports = h->v4.ports;
	if (h->v4.ip.frag_off & bpf_htons(IP_OFFSET))
		*ports = 0;
	else if (h->v4.ip.ihl != 5 &&
		 bpf_probe_read_kernel(h->v4.ports, sizeof(h->v4.ports), l3 + h->v4.ip.ihl * 4))
		*ports = 0;
	return true;
}

/* The same of an IPv6 packet, through its extension headers (tc_count.h) to the ports or ICMP
 * type after them. False when a header cannot be read. */
static __always_inline bool read_dropped_v6(unsigned char *l3, union np_dropped_head *h,
					    __u8 *ipproto, __u16 **ports)
{
	if (bpf_probe_read_kernel(&h->v6, sizeof(h->v6), l3))
		return false;
	*ipproto = h->v6.ip.nexthdr;
	*ports = h->v6.ports;
	if (!np_ipv6_ext_header(*ipproto))
		return true;
	__u32 off = sizeof(h->v6.ip);
#pragma unroll
	for (int i = 0; i < NP_IPV6_EXT_MAX; i++) {
		struct np_ipv6_ext e;
		if (!np_ipv6_ext_header(*ipproto))
			break;
		if (bpf_probe_read_kernel(&e, sizeof(e), l3 + off))
			return false;
		if (*ipproto == NP_IPV6_FRAGMENT && (e.frag_off & bpf_htons(NP_IPV6_FRAG_OFFSET)))
			*ports = 0;
		off += np_ipv6_ext_bytes(*ipproto, &e);
		*ipproto = e.nexthdr;
		if (!*ports)
			break;
	}
	if (*ports && bpf_probe_read_kernel(h->v6.ports, sizeof(h->v6.ports), l3 + off))
		*ports = 0;
	return true;
}

/* Protocol and flow of a dropped skb, from its headers in the kernel buffer (the skb may be
 * anywhere in the stack, so use the saved header offset, not skb->data). One read covers an
 * IPv4 header without options or an IPv6 header, and the ports or ICMP type after it. */
static __always_inline void classify_dropped(const struct sk_buff *skb, struct l4_class *k)
{
	unsigned char *l3 = skb->head + skb->network_header;
	__u16 proto = skb->protocol;
	union np_dropped_head h;
	__u8 ipproto = 0;
	__u16 *ports = 0;

	k->proto = NP_PROTO_OTHER;
	k->flow = NP_FLOW_OTHER;
	if (proto == bpf_htons(ETH_P_ARP)) {
		k->proto = NP_PROTO_ARP;
		return;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		if (!read_dropped_v4(l3, &h, &ipproto, &ports))
			return;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		if (!read_dropped_v6(l3, &h, &ipproto, &ports))
			return;
	} else {
		return;
	}
	if (ipproto == IPPROTO_TCP || ipproto == IPPROTO_UDP) {
		k->proto = ipproto == IPPROTO_TCP ? NP_PROTO_TCP : NP_PROTO_UDP;
		if (ports)
			port_flow(k, ports[0], ports[1]);
	} else if (ipproto == IPPROTO_ICMP || ipproto == IPPROTO_ICMPV6) {
		k->proto = NP_PROTO_ICMP;
		if (ports)
			classify_echo(k, (const __u8 *)ports, ipproto == IPPROTO_ICMPV6);
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
		c->port = sock_stream_port(sk);
	} else if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		c->proto = NP_PROTO_ICMP; /* a ping socket */
		c->flow = NP_FLOW_ICMP_ECHO;
	} else {
		c->proto = NP_PROTO_OTHER;
	}
}

/* Whether a freed skb is one of ours (on the data iface, or a socket-level drop in the probe's
 * namespace) and, if so, its class and whether it had the device. */
static __always_inline bool classify_freed(struct sk_buff *skb, const struct sock *sk,
					   struct l4_class *c, __u32 *on_iface)
{
	struct net_device *dev;
	__u32 ns = 0;

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
			return false;
	} else if (!sk || sock_netns(sk) != netns_ino) {
		return false;
	}
	*on_iface = ns != 0;
	/* A full socket names protocol and ports with direct loads; copying the headers out of
	 * the packet (bpf_probe_read_kernel) costs several times more. Request and timewait
	 * sockets share only sock_common, so they go the packet way. */
	c->proto = NP_PROTO_OTHER;
	c->flow = NP_FLOW_OTHER;
	c->hdr_len = 0;
	c->port = 0;
	if (sk &&
	    !((1 << sk->__sk_common.skc_state) & ((1 << TCP_TIME_WAIT) | (1 << TCP_NEW_SYN_RECV))))
		classify_sock(sk, c);
	/* Not an iperf socket: the packet's own headers may still be the flow's (a segment the
	 * kernel answers from its control socket). */
	if (c->flow != NP_FLOW_IPERF)
		classify_dropped(skb, c);
	return true;
}

/* The frames a freed skb stands for: a GSO skb (a TCP burst the qdisc dropped whole, a GRO
 * aggregate the socket refused) is gso_segs frames on the wire, as the tc hooks count it. */
static __always_inline __u32 freed_frames(const struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = (struct skb_shared_info *)(skb->head + skb->end);
	__u16 gso_segs = 0;

	bpf_probe_read_kernel(&gso_segs, sizeof(gso_segs), &shinfo->gso_segs);
	return gso_segs > 1 ? gso_segs : 1;
}

static __always_inline void count_drop_total(__u32 frames)
{
	__u32 zero = 0;
	__u64 *total = bpf_map_lookup_elem(&drop_count, &zero);

	if (total)
		*total += frames;
}

/* A drop counted by the address of the code that freed it (drop_sites), with its frames. */
/* One skb of `frames` frames and `len` bytes freed, into a drops slot (none: the map is full). */
static __always_inline void add_drop(struct np_drop *d, __u32 frames, __u32 len)
{
	if (!d)
		return;
	d->packets += frames;
	d->bytes += len;
	d->skbs += 1;
}

/* A drop of the measured flow, by its stream: keyed by reason, or by `location` (reason 0). */
static __always_inline void count_stream_drop(const struct sk_buff *skb, __u64 location,
					      __u32 reason, __u32 on_iface,
					      const struct l4_class *c, __u32 frames)
{
	struct np_stream_drop_key key = {};
	struct np_drop *d, zero = {};

	if (c->flow != NP_FLOW_IPERF)
		return;
	key.location = location;
	key.reason = reason;
	key.port = c->port;
	key.proto = c->proto;
	key.on_data_iface = on_iface;
	d = bpf_map_lookup_elem(&stream_drops, &key);
	if (!d) {
		bpf_map_update_elem(&stream_drops, &key, &zero, BPF_NOEXIST);
		d = bpf_map_lookup_elem(&stream_drops, &key);
	}
	add_drop(d, frames, skb->len);
}

static __always_inline void count_site(const struct sk_buff *skb, void *location, __u32 on_iface,
				       const struct l4_class *c, __u32 frames)
{
	struct np_drop_site_key key = {};
	struct np_drop *d, zero = {};

	key.location = (__u64)location;
	key.slot = np_drop_slot(0, on_iface, c->proto, c->flow);
	d = bpf_map_lookup_elem(&drop_sites, &key);
	if (!d) {
		/* Full (more sites than slots): the drop is still in the total. */
		bpf_map_update_elem(&drop_sites, &key, &zero, BPF_NOEXIST);
		d = bpf_map_lookup_elem(&drop_sites, &key);
	}
	add_drop(d, frames, skb->len);
	count_stream_drop(skb, key.location, 0, on_iface, c, frames);
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(np_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason)
{
	struct l4_class c;
	struct np_drop *d;
	const struct sock *sk = NULL;
	__u32 on_iface = 0, slot, frames;

	/* Not drops: a consumed skb, or one freed before any reason applied. Their values are the
	 * running kernel's (CO-RE), not vmlinux.h's: both enumerators came after the first drop
	 * reasons, which numbered from NOT_SPECIFIED = 0 while consume_skb had a tracepoint of its
	 * own, and a kernel without them has nothing to skip. */
	if (bpf_core_enum_value_exists(enum skb_drop_reason, SKB_CONSUMED)) {
		if (reason <= bpf_core_enum_value(enum skb_drop_reason, SKB_CONSUMED))
			return 0;
	} else if (bpf_core_enum_value_exists(enum skb_drop_reason, SKB_NOT_DROPPED_YET)) {
		if (reason == bpf_core_enum_value(enum skb_drop_reason, SKB_NOT_DROPPED_YET))
			return 0;
	}
	if (kfree_skb_has_rx_sk)
		sk = (const struct sock *)ctx[3]; /* BTF-typed by the verifier */
	if (!classify_freed(skb, sk, &c, &on_iface))
		return 0;
	frames = freed_frames(skb);
	/* A drop the kernel gave no reason (a plain kfree_skb) is placed as before reasons were:
	 * by the function that freed it, which user space names from /proc/kallsyms. */
	if (reason == bpf_core_enum_value(enum skb_drop_reason, SKB_DROP_REASON_NOT_SPECIFIED)) {
		count_site(skb, location, on_iface, &c, frames);
		count_drop_total(frames);
		return 0;
	}
	reason = reason < NP_DROP_REASON_SLOTS ? reason : NP_DROP_REASON_SLOTS - 1;
	slot = np_drop_slot(reason, on_iface, c.proto, c.flow);
	d = bpf_map_lookup_elem(&drops, &slot);
	add_drop(d, frames, skb->len);
	count_stream_drop(skb, 0, reason, on_iface, &c, frames);
	count_drop_total(frames);
	return 0;
}

/* The drops-without-reasons tier: kfree_skb as kernels before 5.17 declare it, (skb, location).
 * Each drop is counted by the address of the code that freed it, as dropwatch and bcc's
 * tcpdrop did; user space names the function from /proc/kallsyms. Loaded instead of
 * np_kfree_skb, never beside it. */
SEC("tp_btf/kfree_skb")
int BPF_PROG(np_kfree_skb_site, struct sk_buff *skb, void *location)
{
	struct l4_class c;
	__u32 on_iface = 0, frames;

	if (!classify_freed(skb, NULL, &c, &on_iface))
		return 0;
	frames = freed_frames(skb);
	count_site(skb, location, on_iface, &c, frames);
	count_drop_total(frames);
	return 0;
}

/* What left the NIC: the driver is handed the skb after the qdisc (net_dev_start_xmit fires in
 * xmit_one just before ndo_start_xmit), so qdisc drops are never counted as sent. tc egress
 * (NP_DIR_TX) saw the same skbs before the qdisc; the difference is what the queue dropped. */
SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(np_dev_xmit, const struct sk_buff *skb, const struct net_device *dev)
{
	struct l4_class c = {
	    .proto = NP_PROTO_OTHER, .flow = NP_FLOW_OTHER, .hdr_len = 0, .port = 0};
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
	    !((1 << sk->__sk_common.skc_state) &
	      ((1 << TCP_TIME_WAIT) | (1 << TCP_NEW_SYN_RECV))) &&
	    (sk->sk_protocol == IPPROTO_TCP || sk->sk_protocol == IPPROTO_UDP))
		classify_sock(sk, &c);
	if (c.flow != NP_FLOW_IPERF)
		classify_dropped(skb, &c);
	shinfo = (struct skb_shared_info *)(skb->head + skb->end);
	/* gso_size and gso_segs side by side (as in every kernel so far): one copy, not two. */
	if (bpf_core_field_offset(struct skb_shared_info, gso_segs) ==
	    bpf_core_field_offset(struct skb_shared_info, gso_size) + sizeof(gso_size)) {
		__u16 gso[2] = {};

		bpf_probe_read_kernel(gso, sizeof(gso), &shinfo->gso_size);
		gso_size = gso[0];
		gso_segs = gso[1];
	} else {
		bpf_probe_read_kernel(&gso_segs, sizeof(gso_segs), &shinfo->gso_segs);
		bpf_probe_read_kernel(&gso_size, sizeof(gso_size), &shinfo->gso_size);
	}
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
	stamp_echo(&c, NP_DIR_XMIT);
	/* At the driver skb->data is the MAC header, so len counts it as tc does. */
	count_frames(NP_DIR_XMIT, &c, skb->len, gso_segs, gso_size,
		     skb->vlan_all ? VLAN_TAG_BYTES : 0);
	return 0;
}
