/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The measured flow in 1 ms bins (probe.h, "bins map"), without a cost per packet: a 1 ms timer
 * (a cpu-clock perf event, src/probe/kernel_objects.hpp, CpuTimers) runs np_bin_tick, which adds
 * what the flow's counters in the traffic map (tc_count.h) grew by since its last tick to the bin
 * of now, so a bin's edges are as sharp as the timer (microseconds), not the packets' own times.
 *
 * Where the kernel lets a program read another CPU's per-CPU values (5.19), the timer runs on one
 * CPU and sums every CPU's counters: a timer interrupt a millisecond on one CPU, not on all of
 * them (in a VM each is an exit to the hypervisor: docs/performance.md). Elsewhere every CPU has
 * the timer and adds its own counters' growth, and its tick also samples the CPU account
 * (cpu_account.h), which has a slower timer of its own otherwise. Included by probe.bpf.c after
 * tc_count.h and cpu_account.h. */
#ifndef NP_BINS_H
#define NP_BINS_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, NP_BINS);
	__type(key, __u32);
	__type(value, struct np_bin);
} bins SEC(".maps");

/* This CPU's counts at its last tick. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_bin);
} bin_seen SEC(".maps");

/* Set by user space before load: one timer for every CPU's counters (the CPUs possible, at most
 * NP_BIN_CPUS), or a timer on every CPU. */
const volatile bool bins_one_timer = false;
const volatile __u32 bins_cpus = 1;

/* The phase's start on the monotonic clock (bpf_ktime_get_ns's, CLOCK_MONOTONIC in user space);
 * 0 while user space empties the bins between phases. */
volatile __u64 bins_start_ns = 0;

/* The measured flow's wire bytes at one point (TCP and UDP): this CPU's, or every CPU's summed
 * where one timer serves them all. */
static __always_inline __u64 flow_wire_bytes(__u32 dir)
{
	__u64 sum = 0;

#pragma unroll
	for (__u32 proto = NP_PROTO_TCP; proto <= NP_PROTO_UDP; proto++) {
		__u32 slot = np_traffic_slot(dir, proto, NP_FLOW_IPERF);
		struct np_traffic *t;

		if (!bins_one_timer) {
			t = bpf_map_lookup_elem(&traffic, &slot);
			if (t)
				sum += t->wire_bytes;
			continue;
		}
		for (__u32 cpu = 0; cpu < NP_BIN_CPUS && cpu < bins_cpus; cpu++) {
			t = bpf_map_lookup_percpu_elem(&traffic, &slot, cpu);
			if (t)
				sum += t->wire_bytes;
		}
	}
	return sum;
}

SEC("perf_event")
int np_bin_tick(struct bpf_perf_event_data *ctx)
{
	const __u64 tx = flow_wire_bytes(NP_DIR_XMIT), rx = flow_wire_bytes(NP_DIR_RX);
	const __u64 start = bins_start_ns;
	__u32 zero = 0, at;
	struct np_bin *seen = bpf_map_lookup_elem(&bin_seen, &zero), *b;
	__u64 now, dtx, drx;

	if (cpu_account && !bins_one_timer)
		account_sample(ctx, NP_BIN_NS);
	if (!seen)
		return 0;
	dtx = tx - seen->tx_wire_bytes;
	drx = rx - seen->rx_wire_bytes;
	seen->tx_wire_bytes = tx;
	seen->rx_wire_bytes = rx;
	now = bpf_ktime_get_ns();
	if (!start || now < start || (dtx == 0 && drx == 0))
		return 0;
	if ((now - start) / NP_BIN_NS >= NP_BINS)
		return 0;
	at = (__u32)((now - start) / NP_BIN_NS);
	b = bpf_map_lookup_elem(&bins, &at);
	if (!b)
		return 0;
	__sync_fetch_and_add(&b->tx_wire_bytes, dtx);
	__sync_fetch_and_add(&b->rx_wire_bytes, drx);
	return 0;
}

/* The CPU account's own timer, on every CPU, where the bins tick on one. */
SEC("perf_event")
int np_account_tick(struct bpf_perf_event_data *ctx)
{
	account_sample(ctx, NP_ACCOUNT_NS);
	return 0;
}

#endif /* NP_BINS_H */
