/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What probe.bpf.c and src/probe/ share: map keys, values and the enums that index them.
 * Nothing else belongs here (libbpf-bootstrap's foo.h convention). */
#ifndef NP_PROBE_H
#define NP_PROBE_H

/* Where the traffic map counts: the index of its direction axis. */
enum np_dir {
	NP_DIR_RX = 0,	 /* clsact ingress: what arrived */
	NP_DIR_TX = 1,	 /* clsact egress: what the stack sent, before the qdisc */
	NP_DIR_XMIT = 2, /* handed to the driver after the qdisc: what left the NIC */
	NP_DIR_COUNT = 3,
};

enum np_proto {
	NP_PROTO_TCP = 0,
	NP_PROTO_UDP = 1,
	NP_PROTO_ICMP = 2, /* ICMP and ICMPv6 */
	NP_PROTO_ARP = 3,
	NP_PROTO_OTHER = 4,
	NP_PROTO_COUNT = 5,
};

/* The flows np-explain measures. */
enum np_flow {
	NP_FLOW_OTHER = 0,
	NP_FLOW_IPERF = 1,     /* TCP or UDP to or from the iperf port (rodata) */
	NP_FLOW_ICMP_ECHO = 2, /* ping: echo request and reply, v4 and v6 */
	NP_FLOW_COUNT = 3,
};

/* Frame-size histogram: a frame's size is MAC header .. FCS. Upper bounds
 * of the buckets, inclusive; the last bucket takes everything larger. */
#define NP_FRAME_BUCKETS 8
#define NP_FRAME_BUCKET_BOUNDS                                                                     \
	{                                                                                          \
		64, 127, 255, 511, 1023, 1518, 9022, 0xffffffff                                    \
	}

/* traffic map: one per-CPU slot per (direction, protocol, flow). */
#define NP_TRAFFIC_SLOTS ((int)NP_DIR_COUNT * (int)NP_PROTO_COUNT * (int)NP_FLOW_COUNT)

static inline unsigned int np_traffic_slot(unsigned int dir, unsigned int proto, unsigned int flow)
{
	return (dir * NP_PROTO_COUNT + proto) * NP_FLOW_COUNT + flow;
}

struct np_traffic {
	unsigned long long packets;	 /* skbs as the stack handed them to tc */
	unsigned long long bytes;	 /* skb->len: L2 header .. payload, headers once */
	unsigned long long wire_packets; /* Ethernet frames: gso_segs per skb */
	/* Per frame: its L2 bytes (headers replicated for each segment, padded to 60) plus
	 * 24 = preamble/SFD 8 + FCS 4 + inter-frame gap 12. */
	unsigned long long wire_bytes;
	unsigned long long frames_by_size[NP_FRAME_BUCKETS]; /* see NP_FRAME_BUCKET_BOUNDS */
};

/* streams map: the measured flow split by connection (TCP) or socket (UDP), each named by the
 * port of its end that is not the iperf port: the client's, the same on both nodes. A per-CPU
 * array of slots (an index, not a hash lookup: the per-packet cost of the drops array): a stream
 * is counted in the first of NP_STREAM_PROBES slots from its port modulo their number that it
 * owns or finds free on that CPU; a stream that finds them all taken is not counted by itself
 * (user space sees its streams sum short of the flow). User space frees the slots of streams
 * that ended, at each phase's end.
 * `where`: an enum np_dir, or NP_STREAM_RETRANS for TCP retransmits (packets: skbs,
 * wire_packets: segments, as the retransmits map counts them). */
#define NP_STREAM_RETRANS 3
#define NP_STREAM_WHERE 4
#define NP_STREAM_SLOTS 128 /* a power of two */
#define NP_STREAM_PROBES 4

struct np_stream {
	unsigned long long packets;
	unsigned long long bytes;
	unsigned long long wire_packets;
	unsigned long long wire_bytes;
};

struct np_stream_slot {
	unsigned short port;   /* host order; the stream counted here on this CPU */
	unsigned char proto;   /* enum np_proto: TCP or UDP */
	unsigned char claimed; /* a stream owns the slot (port 0 is the server's listening socket) */
	unsigned int pad;
	struct np_stream where[NP_STREAM_WHERE];
};

/* stream_drops map: the drops of the measured flow by stream, keyed as the drops and drop_sites
 * maps place them: by reason, or (reason 0) by the code address that freed the packet. */
#define NP_STREAM_DROP_KEYS 1024

struct np_stream_drop_key {
	unsigned long long location; /* 0 when a reason names the drop */
	unsigned int reason;	     /* clamped as in the drops map */
	unsigned short port;
	unsigned char proto;
	unsigned char on_data_iface;
};

/* retransmits map: per-CPU slot per flow; the value counts segments, as TcpRetransSegs and
 * tcpi_total_retrans do (a retransmitted GSO skb is several segments). */
struct np_retrans {
	unsigned long long skbs;
	unsigned long long segments;
};

/* retrans_seen map: the sockets whose total_retrans the retransmit program keeps (a test's
 * streams and control connection; more than this at once and the least recent starts anew). */
#define NP_RETRANS_SOCKETS 1024

/* drops map: a per-CPU array slot per (reason, on the data iface or without a device,
 * protocol, flow) — an array, not a hash, so a counted drop costs an index computation instead
 * of hashing a key. Reasons at or above the last slot (drop-reason subsystems such as
 * mac80211 or openvswitch encode theirs from 0x10000) share that slot. */
#define NP_DROP_REASON_SLOTS 512
#define NP_DROP_SLOTS ((int)NP_DROP_REASON_SLOTS * 2 * (int)NP_PROTO_COUNT * (int)NP_FLOW_COUNT)

static inline unsigned int np_drop_slot(unsigned int reason, unsigned int on_data_iface,
					unsigned int proto, unsigned int flow)
{
	return ((reason * 2 + on_data_iface) * NP_PROTO_COUNT + proto) * NP_FLOW_COUNT + flow;
}

struct np_drop {
	unsigned long long packets; /* frames: gso_segs per skb */
	unsigned long long bytes;
	unsigned long long skbs; /* the drops themselves, to set beside a qdisc's own counter */
};

/* drop_sites map (the drops-without-reasons tier): a per-CPU hash keyed by the kernel code
 * address that freed the skb and the drops slot of reason 0 (on the data iface, protocol,
 * flow). Sites beyond the map's size are counted in drop_count only. */
#define NP_DROP_SITES 1024

struct np_drop_site_key {
	unsigned long long location;
	unsigned int slot; /* np_drop_slot(0, on_data_iface, proto, flow) */
	unsigned int pad;
};

/* cpu_time map: where each CPU's time went while the probe counted (cpu_account.h), a per-CPU
 * array of one slot, in ns. Sampled: at each tick (the kernel's, or the probe's own timer's
 * where the kernel's cannot be used: cpu_account.h) the CPU's current task and the kernel stack it was interrupted in say whether a tool ran and whether in
 * a softirq, and which (the softirq_fns map: the functions each vector runs in), and that tick's
 * period is added there. The tools are the test's own processes (src/probe/tool_processes), by process
 * ID, in the tools map; the data NIC's hard IRQs, timed at their handlers' entry and exit, are
 * its queues' IRQ numbers, in the nic_irqs map. User space fills all three. */
#define NP_SOFTIRQS 10 /* NR_SOFTIRQS: HI, TIMER, NET_TX, NET_RX, BLOCK, IRQ_POLL, TASKLET, … */
#define NP_SOFTIRQ_OTHER 0 /* a softirq but NET_TX's or NET_RX's, summed in HI's slot */
/* In the dispatcher itself, between handlers (TIMER's slot): in a VM the timer's interrupt often
 * waits behind another (an IPI that raised NET_RX, RPS's) and lands where the dispatcher turns
 * interrupts back on. User space shares these ticks among the vectors (map_totals.cpp). */
#define NP_SOFTIRQ_DISPATCH 1
#define NP_SOFTIRQ_NET_TX 2
#define NP_SOFTIRQ_NET_RX 3
#define NP_TOOLS 64
#define NP_NIC_IRQS 256

struct np_cpu_time {
	unsigned long long tool_ns;        /* a tool's threads current on the CPU */
	unsigned long long tool_in_irq_ns; /* of tool_ns: softirqs and the NIC's IRQs run meanwhile */
	unsigned long long softirq_ns[NP_SOFTIRQS]; /* by vector (see NP_SOFTIRQ_OTHER) */
	unsigned long long nic_irq_ns;     /* the data NIC's hard IRQ handlers */
	unsigned long long samples;        /* the ticks sampled on this CPU */
};

/* softirq_fns map: the kernel functions whose frames on a sampled stack place it in a softirq —
 * net_rx_action (NET_RX), net_tx_action (NET_TX), and handle_softirqs (or __do_softirq before
 * 6.8: any other vector) — as [start, end) from /proc/kallsyms. */
enum np_softirq_fn {
	NP_FN_NET_RX = 0,
	NP_FN_NET_TX = 1,
	NP_FN_SOFTIRQS = 2,
	NP_SOFTIRQ_FNS = 3,
};

struct np_fn_range {
	unsigned long long start;
	unsigned long long end;
};

/* How many frames of a sampled stack are searched for them. */
#define NP_STACK_DEPTH 96

/* echoes map: each ICMP echo (ping's request and its reply) stamped with the node's monotonic
 * clock where the probe saw it: at the egress hook (before the qdisc), at the driver handoff
 * (after it; the full tiers only) and at the ingress hook. User space takes the map whole at
 * each phase's end and empties it; a pair of nodes' stamps of one echo split its round trip into
 * the stages it spent it in (docs/formats.md, "echoes"). An echo arriving when the map is full
 * is not stamped. Keyed by the echo's identifier and sequence number (as on the wire) and
 * address family; a stamp of 0 was not taken. */
#define NP_ECHOES 1024

enum np_echo_stamp {
	NP_ECHO_REQUEST_TX = 0, /* a request at the egress hook: this node pings */
	NP_ECHO_REQUEST_XMIT = 1,
	NP_ECHO_REQUEST_RX = 2, /* a request at the ingress hook: this node answers */
	NP_ECHO_REPLY_TX = 3,
	NP_ECHO_REPLY_XMIT = 4,
	NP_ECHO_REPLY_RX = 5,
	NP_ECHO_STAMPS = 6,
};

struct np_echo_key {
	unsigned short id;  /* network order, as on the wire */
	unsigned short seq; /* likewise */
	unsigned char v6;
	unsigned char pad[3];
};

struct np_echo {
	unsigned long long ns[NP_ECHO_STAMPS]; /* bpf_ktime_get_ns(); 0: not seen there */
};

/* bins map (bins.h): the measured flow's wire bytes that left the NIC (the driver handoff) and
 * that arrived (the ingress hook), in 1 ms bins from the phase's start by each packet's own time:
 * an mmap-able array that user space reads and empties at each phase's end. A phase longer than
 * the bins has its first NP_BINS ms binned. */
#define NP_BINS 16384
#define NP_BIN_NS 1000000ULL

/* The CPU account's sampling period where it has a timer of its own instead of the kernel's tick
 * (cpu_account.h): as fine as the tick-based CPU times at HZ=250. */
#define NP_ACCOUNT_NS 4000000ULL

struct np_bin {
	unsigned long long tx_wire_bytes;
	unsigned long long rx_wire_bytes;
};

/* bin_open map (per CPU): the bin a CPU's packets are adding to, not yet in the bins map. */
struct np_bin_open {
	unsigned long long start_ns; /* the phase's start it belongs to (bins_start_ns) */
	unsigned int at;             /* its index in the bins */
	unsigned int pad;
	struct np_bin bin;
};

#endif /* NP_PROBE_H */
