/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The probe's CPU account: on each CPU, how long the test's own processes ran, how long each
 * softirq vector and the data NIC's hard IRQs took, and how much of those ran while a tool
 * thread was the CPU's current task (softirqs run on the stack of whatever task was
 * interrupted, so the scheduler's view counts them as that task's). The core that set a test's
 * pace is named from these, not from the host's CPU totals alone.
 *
 * The tracepoints fire for every task on the host, in any network namespace: the tools map
 * holds only this probe's node's processes, and the softirq and IRQ times are the CPU's, as
 * /proc/stat's are. */
#ifndef NP_CPU_ACCOUNT_H
#define NP_CPU_ACCOUNT_H

#include "probe.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_cpu_time);
} cpu_time SEC(".maps");

/* Where each CPU is: since when its current task ran and whether it is a tool's, and the start
 * of the softirq or NIC IRQ it is in (0: none). */
struct np_cpu_state {
	__u64 since;
	__u64 softirq_since;
	__u64 irq_since;
	__u32 tool;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_cpu_state);
} cpu_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NP_TOOLS);
	__type(key, __u32); /* process ID (a task's tgid) */
	__type(value, __u8);
} tools SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NP_NIC_IRQS);
	__type(key, __s32); /* IRQ number */
	__type(value, __u8);
} nic_irqs SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(np_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0, tgid = next->tgid;
	struct np_cpu_state *st = bpf_map_lookup_elem(&cpu_state, &zero);
	struct np_cpu_time *t = bpf_map_lookup_elem(&cpu_time, &zero);
	__u64 now = bpf_ktime_get_ns();

	if (!st || !t)
		return 0;
	/* The CPU's first switch after attaching only starts the clock. */
	if (st->tool && st->since)
		t->tool_ns += now - st->since;
	st->tool = bpf_map_lookup_elem(&tools, &tgid) != 0;
	st->since = now;
	if (st->tool)
		t->tool_switches++;
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(np_softirq_entry, unsigned int vec_nr)
{
	__u32 zero = 0;
	struct np_cpu_state *st = bpf_map_lookup_elem(&cpu_state, &zero);

	if (st)
		st->softirq_since = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(np_softirq_exit, unsigned int vec_nr)
{
	__u32 zero = 0;
	struct np_cpu_state *st = bpf_map_lookup_elem(&cpu_state, &zero);
	struct np_cpu_time *t = bpf_map_lookup_elem(&cpu_time, &zero);
	__u64 d;

	if (!st || !t || !st->softirq_since)
		return 0;
	d = bpf_ktime_get_ns() - st->softirq_since;
	st->softirq_since = 0;
	if (vec_nr < NP_SOFTIRQS)
		t->softirq_ns[vec_nr] += d;
	if (st->tool)
		t->tool_in_irq_ns += d;
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(np_irq_entry, int irq, struct irqaction *action)
{
	__u32 zero = 0;
	struct np_cpu_state *st;

	if (!bpf_map_lookup_elem(&nic_irqs, &irq))
		return 0;
	st = bpf_map_lookup_elem(&cpu_state, &zero);
	if (st)
		st->irq_since = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(np_irq_exit, int irq, struct irqaction *action, int ret)
{
	__u32 zero = 0;
	struct np_cpu_state *st = bpf_map_lookup_elem(&cpu_state, &zero);
	struct np_cpu_time *t = bpf_map_lookup_elem(&cpu_time, &zero);
	__u64 d;

	if (!st || !t || !st->irq_since)
		return 0;
	d = bpf_ktime_get_ns() - st->irq_since;
	st->irq_since = 0;
	t->nic_irq_ns += d;
	/* Inside a softirq the tool's share already holds the whole softirq. */
	if (st->tool && !st->softirq_since)
		t->tool_in_irq_ns += d;
	return 0;
}

#endif /* NP_CPU_ACCOUNT_H */
