/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What crossed the data NIC, counted at the tc clsact hooks: the traffic map and the two tc
 * programs. Shared by probe.bpf.c (with vmlinux.h, so header reads are CO-RE relocated) and
 * probe_tc.bpf.c (with the UAPI headers: no CO-RE, so it loads on kernels without BTF). The
 * including file provides the header structs (ethhdr, iphdr, ipv6hdr, tcphdr, udphdr), the
 * IPPROTO_* values, __sk_buff and the libbpf helpers. */
#ifndef NP_TC_COUNT_H
#define NP_TC_COUNT_H

#include "probe.h"

#ifndef TC_ACT_UNSPEC
#define TC_ACT_UNSPEC (-1) /* let later filters and the qdisc decide: we only count */
#endif
#ifndef ETH_HLEN
#define ETH_HLEN 14
#endif
#ifndef ETH_P_IP
#define ETH_P_IP 0x0800
#endif
#ifndef ETH_P_ARP
#define ETH_P_ARP 0x0806
#endif
#ifndef ETH_P_IPV6
#define ETH_P_IPV6 0x86DD
#endif
#ifndef ETH_P_8021Q
#define ETH_P_8021Q 0x8100
#endif
#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif
#ifndef IP_MF
#define IP_MF 0x2000
#endif
#ifndef IP_OFFSET
#define IP_OFFSET 0x1FFF
#endif
#ifndef ICMP_ECHOREPLY
#define ICMP_ECHOREPLY 0
#endif
#ifndef ICMP_ECHO
#define ICMP_ECHO 8
#endif
#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58 /* a #define in uapi, so not in vmlinux.h */
#endif
#ifndef ICMPV6_ECHO_REQUEST
#define ICMPV6_ECHO_REQUEST 128
#endif
#ifndef ICMPV6_ECHO_REPLY
#define ICMPV6_ECHO_REPLY 129
#endif
/* IPv6 extension headers (RFC 8200, 4.; AH: RFC 4302) that may stand between the fixed header
 * and the L4 header. The uapi's IPPROTO_HOPOPTS … are #defines, so not in vmlinux.h. */
#define NP_IPV6_HOPOPTS 0
#define NP_IPV6_ROUTING 43
#define NP_IPV6_FRAGMENT 44
#define NP_IPV6_AH 51
#define NP_IPV6_DSTOPTS 60
/* How many a packet's headers are walked through; a packet with more counts as other. */
#define NP_IPV6_EXT_MAX 4
/* The fragment offset in a fragment header's third and fourth bytes (the low 3 bits are flags). */
#define NP_IPV6_FRAG_OFFSET 0xFFF8

/* The first four bytes of any extension header: its next header, its length, and in a fragment
 * header the offset and flags. */
struct np_ipv6_ext {
	__u8 nexthdr;
	__u8 len;
	__be16 frag_off;
};

static __always_inline bool np_ipv6_ext_header(__u8 nexthdr)
{
	return nexthdr == NP_IPV6_HOPOPTS || nexthdr == NP_IPV6_ROUTING ||
	       nexthdr == NP_IPV6_FRAGMENT || nexthdr == NP_IPV6_AH || nexthdr == NP_IPV6_DSTOPTS;
}

/* An extension header's length in bytes: a fragment header is 8, AH counts 4-byte words less
 * two, the others 8-byte words less one. */
static __always_inline __u32 np_ipv6_ext_bytes(__u8 nexthdr, const struct np_ipv6_ext *e)
{
	if (nexthdr == NP_IPV6_FRAGMENT)
		return 8;
	if (nexthdr == NP_IPV6_AH)
		return ((__u32)e->len + 2) * 4;
	return ((__u32)e->len + 1) * 8;
}

/* An Ethernet frame is at least 64 bytes with FCS: 60 before it. */
#ifndef MIN_FRAME_NO_FCS
#define MIN_FRAME_NO_FCS 60
#endif
/* What a frame costs on the wire beyond MAC header .. payload: preamble+SFD 8, FCS 4 and
 * the inter-frame gap 12 (IEEE 802.3). */
#ifndef WIRE_EXTRA_BYTES
#define WIRE_EXTRA_BYTES 24
#endif
#ifndef FCS_BYTES
#define FCS_BYTES 4
#endif
#ifndef VLAN_TAG_BYTES
#define VLAN_TAG_BYTES 4
#endif

/* An 802.1Q/802.1ad tag as it follows the MAC addresses (the kernel's vlan_hdr is not UAPI). */
struct np_vlan_hdr {
	__be16 tci;
	__be16 encapsulated_proto;
};

/* The measured flow's wire bytes into its 1 ms bins, where the including file keeps them (it
 * defines this first: bins.h); the tc-counters tier has none. */
#ifndef NP_BIN_FLOW
#define NP_BIN_FLOW(dir, wire_bytes) ((void)0)
#endif

/* The measured flow's port, set by user space before load (host order). */
const volatile __u16 iperf_port = 5201;
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_TRAFFIC_SLOTS);
	__type(key, __u32);
	__type(value, struct np_traffic);
} traffic SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NP_STREAM_SLOTS);
	__type(key, __u32);
	__type(value, struct np_stream_slot);
} streams SEC(".maps");

/* Stream slots claimed so far, on any CPU: user space looks for new TCP connections in the
 * kernel's socket tables when this grows, instead of walking them on a timer
 * (src/probe/tcp_sockets.hpp). */
volatile __u64 streams_claimed = 0;
/* Set when a packet of the measured flow found no slot for its stream (every slot it may take
 * held by others on that CPU): only then does user space walk the socket tables now and then for
 * a stream the slots cannot name. User space clears it when it reads it. */
volatile __u32 streams_unslotted = 0;

struct l4_class {
	__u8 proto;    /* enum np_proto */
	__u8 flow;     /* enum np_flow */
	__u16 hdr_len; /* L2 + L3 + L4 header bytes: what GSO replicates per segment */
	__u16 port;    /* the measured flow's stream: its port that is not the iperf port */
	/* An ICMP echo (flow NP_FLOW_ICMP_ECHO) whose identifier and sequence number were read:
	 * 1 a request, 2 a reply; 0 otherwise. */
	__u8 echo;
	__u8 v6;
	struct np_echo_key echo_key;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NP_ECHOES);
	__type(key, struct np_echo_key);
	__type(value, struct np_echo);
} echoes SEC(".maps");

/* Stamps an ICMP echo where it was seen (`dir`, an enum np_dir), once: a packet seen twice there
 * keeps its first stamp. Costs nothing for any other packet. */
static __always_inline void stamp_echo(const struct l4_class *c, __u32 dir)
{
	struct np_echo *e;
	__u32 at;

	if (!c->echo)
		return;
	at = (c->echo == 2 ? NP_ECHO_REPLY_TX : NP_ECHO_REQUEST_TX) +
	     (dir == NP_DIR_TX ? 0 : dir == NP_DIR_XMIT ? 1 : 2);
	e = bpf_map_lookup_elem(&echoes, &c->echo_key);
	if (!e) {
		struct np_echo zero = {};
		bpf_map_update_elem(&echoes, &c->echo_key, &zero, BPF_NOEXIST);
		e = bpf_map_lookup_elem(&echoes, &c->echo_key);
		if (!e)
			return; /* the map is full */
	}
	if (at < NP_ECHO_STAMPS && !e->ns[at])
		e->ns[at] = bpf_ktime_get_ns();
}

/* Names an ICMP echo from its type and its header's identifier and sequence number (`icmp`: its
 * first 8 bytes, already read). */
static __always_inline void classify_echo(struct l4_class *c, const __u8 *icmp, bool v6)
{
	const __u8 type = icmp[0];

	if (v6 ? (type == ICMPV6_ECHO_REQUEST || type == ICMPV6_ECHO_REPLY)
	       : (type == ICMP_ECHO || type == ICMP_ECHOREPLY)) {
		c->flow = NP_FLOW_ICMP_ECHO;
		c->echo = type == (v6 ? ICMPV6_ECHO_REPLY : ICMP_ECHOREPLY) ? 2 : 1;
		c->echo_key.id = *(const __u16 *)(icmp + 4);
		c->echo_key.seq = *(const __u16 *)(icmp + 6);
		c->echo_key.v6 = v6;
	}
}

/* Names the flow by its ports and, for the measured flow, the stream by the other port. */
static __always_inline void port_flow(struct l4_class *c, __u16 sport_be, __u16 dport_be)
{
	const __u16 port = bpf_htons(iperf_port);

	c->flow = sport_be == port || dport_be == port ? NP_FLOW_IPERF : NP_FLOW_OTHER;
	c->port = bpf_ntohs(sport_be == port ? dport_be : sport_be);
}

/* One stream's counts at `where` on this CPU: the first of its slots it owns or finds free here
 * (claimed on its first packet); none when other streams hold them all (it is still in the
 * flow's counts, and streams_unslotted says so). The first slot is almost always the stream's
 * own. */
static __always_inline struct np_stream *stream_slot(__u16 port, __u8 proto, __u8 where)
{
#pragma unroll
	for (__u32 i = 0; i < NP_STREAM_PROBES; i++) {
		__u32 index = (port + i) & (NP_STREAM_SLOTS - 1);
		struct np_stream_slot *s = bpf_map_lookup_elem(&streams, &index);

		if (!s)
			return 0;
		if (!s->claimed) {
			s->port = port;
			s->proto = proto;
			s->claimed = 1;
			__sync_fetch_and_add(&streams_claimed, 1);
		} else if (s->port != port || s->proto != proto) {
			continue;
		}
		return &s->where[where & (NP_STREAM_WHERE - 1)];
	}
	if (!streams_unslotted)
		streams_unslotted = 1;
	return 0;
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
		port_flow(c, th->source, th->dest);
		c->hdr_len += th->doff * 4;
	} else if (ipproto == IPPROTO_UDP) {
		struct udphdr *uh = l4;
		c->proto = NP_PROTO_UDP;
		if ((void *)(uh + 1) > data_end)
			return;
		port_flow(c, uh->source, uh->dest);
		c->hdr_len += sizeof(*uh);
	} else if (ipproto == (v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP)) {
		__u8 *icmp = l4;
		c->proto = NP_PROTO_ICMP;
		if ((void *)(icmp + 8) > data_end) /* type, code, checksum, identifier, sequence */
			return;
		classify_echo(c, icmp, v6);
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
		struct np_vlan_hdr *vh = data + off;
		if ((void *)(vh + 1) > data_end)
			return;
		h_proto = vh->encapsulated_proto;
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
		void *l4 = ip6 + 1;
		__u8 nexthdr;
		if ((void *)(ip6 + 1) > data_end)
			return;
		nexthdr = ip6->nexthdr;
		c->hdr_len += sizeof(*ip6);
		/* Through the extension headers to the L4 header. A non-first fragment has none:
		 * it counts under its protocol but no flow, as an IPv4 one does. */
#pragma unroll
		for (int i = 0; i < NP_IPV6_EXT_MAX; i++) {
			struct np_ipv6_ext *e = l4;
			__u32 len;
			if (!np_ipv6_ext_header(nexthdr))
				break;
			if ((void *)(e + 1) > data_end)
				return;
			len = np_ipv6_ext_bytes(nexthdr, e);
			c->hdr_len += len;
			if (nexthdr == NP_IPV6_FRAGMENT &&
			    (e->frag_off & bpf_htons(NP_IPV6_FRAG_OFFSET))) {
				classify_l4(c, e->nexthdr, data_end, data_end, true);
				return;
			}
			nexthdr = e->nexthdr;
			l4 += len;
		}
		classify_l4(c, nexthdr, l4, data_end, true);
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
static __always_inline void count_frames(__u32 dir, const struct l4_class *c, __u32 len, __u32 segs,
					 __u32 gso_size, __u32 tag)
{
	struct np_traffic *t;
	struct np_stream *s;
	__u32 slot, full, last;
	__u64 wire_bytes;

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
		wire_bytes = last + WIRE_EXTRA_BYTES;
		t->frames_by_size[frame_bucket(last + FCS_BYTES) & (NP_FRAME_BUCKETS - 1)] += 1;
	} else {
		full = frame_l2_bytes(c->hdr_len + gso_size + tag);
		last = frame_l2_bytes(len - (segs - 1) * gso_size + tag);
		wire_bytes =
		    (__u64)(segs - 1) * (full + WIRE_EXTRA_BYTES) + last + WIRE_EXTRA_BYTES;
		t->frames_by_size[frame_bucket(full + FCS_BYTES) & (NP_FRAME_BUCKETS - 1)] +=
		    segs - 1;
		t->frames_by_size[frame_bucket(last + FCS_BYTES) & (NP_FRAME_BUCKETS - 1)] += 1;
	}
	t->wire_bytes += wire_bytes;
	if (c->flow != NP_FLOW_IPERF)
		return;
	NP_BIN_FLOW(dir, wire_bytes);
	s = stream_slot(c->port, c->proto, dir);
	if (!s)
		return;
	s->packets += 1;
	s->bytes += len;
	s->wire_packets += segs;
	s->wire_bytes += wire_bytes;
}

static __always_inline int count_skb(struct __sk_buff *skb, __u32 dir)
{
	struct l4_class c = {
	    .proto = NP_PROTO_OTHER, .flow = NP_FLOW_OTHER, .hdr_len = 0, .port = 0};

	classify_frame(skb, &c);
	stamp_echo(&c, dir);
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

#endif /* NP_TC_COUNT_H */
