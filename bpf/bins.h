/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The measured flow in 1 ms bins (probe.h, "bins map"), from each of its packets' own time: where
 * the flow's wire bytes are counted at the driver handoff and the ingress hook (tc_count.h,
 * count_frames), they are also added to the bin of now. A CPU keeps its current bin open in a
 * per-CPU entry and adds it to the shared bins when one of its packets falls in a later bin, so a
 * packet costs a clock read and a per-CPU add, and the shared bins an atomic add per CPU and
 * millisecond; user space adds what is still open at the phase's end (map_totals.cpp, take_bins).
 *
 * No timer: a timer interrupt every millisecond cost far more than these clock reads where an
 * interrupt is an exit to the hypervisor (docs/performance.md, "The bins from the packets").
 * Included by probe.bpf.c before tc_count.h. */
#ifndef NP_BINS_H
#define NP_BINS_H

#include "probe.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, NP_BINS);
	__type(key, __u32);
	__type(value, struct np_bin);
} bins SEC(".maps");

/* This CPU's open bin. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_bin_open);
} bin_open SEC(".maps");

/* The phase's start on the monotonic clock (bpf_ktime_get_ns's, CLOCK_MONOTONIC in user space);
 * 0 while user space takes and empties the bins between phases. */
volatile __u64 bins_start_ns = 0;

/* Adds `wire_bytes` of the measured flow counted at `dir` (enum np_dir) to the bin of now. */
static __always_inline void bin_flow(__u32 dir, __u64 wire_bytes)
{
	const __u64 start = bins_start_ns;
	struct np_bin_open *open;
	struct np_bin *b;
	__u32 zero = 0, at, prev;
	__u64 now;

	if ((dir != NP_DIR_XMIT && dir != NP_DIR_RX) || !start)
		return;
	now = bpf_ktime_get_ns();
	if (now < start || (now - start) / NP_BIN_NS >= NP_BINS)
		return;
	at = (__u32)((now - start) / NP_BIN_NS);
	open = bpf_map_lookup_elem(&bin_open, &zero);
	if (!open)
		return;
	if (open->start_ns != start || open->at != at) {
		/* A bin of an earlier phase was taken by user space at that phase's end. */
		prev = open->at;
		if (open->start_ns == start && (b = bpf_map_lookup_elem(&bins, &prev))) {
			__sync_fetch_and_add(&b->tx_wire_bytes, open->bin.tx_wire_bytes);
			__sync_fetch_and_add(&b->rx_wire_bytes, open->bin.rx_wire_bytes);
		}
		open->start_ns = start;
		open->at = at;
		open->bin.tx_wire_bytes = 0;
		open->bin.rx_wire_bytes = 0;
	}
	if (dir == NP_DIR_XMIT)
		open->bin.tx_wire_bytes += wire_bytes;
	else
		open->bin.rx_wire_bytes += wire_bytes;
}

#define NP_BIN_FLOW(dir, wire_bytes) bin_flow(dir, wire_bytes)

#endif /* NP_BINS_H */
