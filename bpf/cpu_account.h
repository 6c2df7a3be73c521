/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The probe's CPU account: on each CPU, how long the test's own processes ran, how long the
 * NET_RX and NET_TX softirqs (and the others) and the data NIC's hard IRQs took, and how much of
 * those ran while a tool thread was the CPU's current task (softirqs run on the stack of
 * whatever task was interrupted, so the scheduler's view counts them as that task's). The core
 * that set a test's pace is named from these, not from the host's CPU totals alone.
 *
 * Sampled, not traced: at each tick the CPU's current task and the kernel stack the tick
 * interrupted place that period — a tool's or not, in which softirq or none — so the account
 * costs a stack walk a tick instead of two programs on every task switch and softirq
 * (docs/performance.md). The tick is the kernel's own (np_account_on_tick: its tick's hrtimer,
 * which also charges /proc/stat's busy time a tick at a time), so the account takes no interrupt
 * of its own and places the same ticks /proc/stat counts; work a CPU does from idle between its
 * ticks is in neither, and /proc/stat's unticked time (host_facts.cpp) says how much. Where the
 * tick cannot be used (its hrtimer's function not in /proc/kallsyms, no high-resolution timers,
 * the kernel's HZ not in its config, or CPUs that run without it: nohz_full) a timer of the
 * probe's own does it instead, every NP_ACCOUNT_NS on every CPU (np_account_tick, a cpu-clock
 * perf event), which also samples a CPU's work from idle. The NIC's hard IRQs,
 * which the tick cannot interrupt, are timed at their handlers' entry and exit (a NIC's queues
 * interrupt once per NAPI poll, not per packet).
 *
 * The tick and the tracepoints fire for every task on the host, in any network namespace: the
 * tools map holds only this probe's node's processes, and the softirq and IRQ times are the
 * CPU's, as /proc/stat's are. */
#ifndef NP_CPU_ACCOUNT_H
#define NP_CPU_ACCOUNT_H

#include "probe.h"

/* The account is kept (set by user space before load; off: np-probe --no-cpu-account). */
const volatile bool cpu_account = false;
/* The kernel's tick, set by user space before load (src/probe/cpu_account.hpp, KernelTick; 0
 * where the probe's own timer samples instead): the function its hrtimer runs, its period
 * (1 s / HZ), and the kernel's interrupt entry code, whose frame on a sampled stack comes just
 * before the interrupted code's, as [start, end) from /proc/kallsyms. */
const volatile __u64 tick_fn = 0;
const volatile __u64 tick_ns = 0;
const volatile __u64 tick_entry_start = 0;
const volatile __u64 tick_entry_end = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_cpu_time);
} cpu_time SEC(".maps");

/* When the NIC IRQ this CPU is in began (0: none). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} irq_since SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NP_SOFTIRQ_FNS);
	__type(key, __u32);
	__type(value, struct np_fn_range);
} softirq_fns SEC(".maps");

/* A sampled stack, per CPU: too large for the program's own stack. */
struct np_stack {
	__u64 ip[NP_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct np_stack);
} stack_buf SEC(".maps");

static __always_inline bool current_is_tool(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return tgid && bpf_map_lookup_elem(&tools, &tgid);
}

static __always_inline bool in_range(const struct np_fn_range *r, __u64 ip)
{
	return r->start && ip >= r->start && ip < r->end;
}

/* The softirq vector the interrupted code ran in (NP_SOFTIRQ_*), or -1 for none: the first of
 * the softirq functions found walking out from where the tick landed; NP_SOFTIRQ_DISPATCH when
 * the tick landed in the dispatcher itself. A perf event's stack starts at the interrupted code;
 * the kernel tick's (`from_tick`) at this program, and the interrupted code follows the frame of
 * the interrupt's entry code (the kernel's entry text: asm_sysvec_apic_timer_interrupt's frame on
 * x86). */
static __always_inline int sampled_softirq(void *ctx, bool from_tick)
{
	__u32 zero = 0, rx = NP_FN_NET_RX, tx = NP_FN_NET_TX, any = NP_FN_SOFTIRQS, frames;
	struct np_stack *s = bpf_map_lookup_elem(&stack_buf, &zero);
	const struct np_fn_range *r_rx = bpf_map_lookup_elem(&softirq_fns, &rx);
	const struct np_fn_range *r_tx = bpf_map_lookup_elem(&softirq_fns, &tx);
	const struct np_fn_range *r_any = bpf_map_lookup_elem(&softirq_fns, &any);
	__u64 prev = 0; /* the frame before, nearer the tick */
	int vec = -1;
	long bytes;

	/* The lookups checked once, and one way out of the walk: tested at every frame, with a
	 * return from inside it, they had the verifier go through 44,919 instructions to load each
	 * of the account's two programs, 28,412 now (docs/performance.md, "The probe's start"). */
	if (!s || !r_rx || !r_tx || !r_any)
		return -1;
	bytes = bpf_get_stack(ctx, s->ip, sizeof(s->ip), 0);
	if (bytes <= 0)
		return -1;
	frames = (__u32)bytes / sizeof(__u64);
	for (__u32 i = 0; i < NP_STACK_DEPTH && i < frames; i++) {
		const __u64 ip = s->ip[i];

		if (in_range(r_rx, ip)) {
			vec = NP_SOFTIRQ_NET_RX;
		} else if (in_range(r_tx, ip)) {
			vec = NP_SOFTIRQ_NET_TX;
		} else if (in_range(r_any, ip)) {
			const bool interrupted = from_tick
						     ? prev >= tick_entry_start && prev < tick_entry_end
						     : i == 0;
			vec = interrupted ? NP_SOFTIRQ_DISPATCH : NP_SOFTIRQ_OTHER;
		}
		if (vec >= 0)
			break;
		prev = ip;
	}
	return vec;
}

/* One tick: this CPU's last `period_ns` placed by what it was doing. */
static __always_inline void account_sample(void *ctx, __u64 period_ns, bool from_tick)
{
	__u32 zero = 0;
	struct np_cpu_time *t = bpf_map_lookup_elem(&cpu_time, &zero);
	bool tool;
	int vec;

	if (!t)
		return;
	t->samples++;
	tool = current_is_tool();
	vec = sampled_softirq(ctx, from_tick);
	if (tool)
		t->tool_ns += period_ns;
	if (vec >= 0 && vec < NP_SOFTIRQS) {
		t->softirq_ns[vec] += period_ns;
		if (tool)
			t->tool_in_irq_ns += period_ns;
	}
}

/* The kernel's tick on this CPU: one of its hrtimers expiring, the tick's among them. */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(np_account_on_tick, struct hrtimer *timer, ktime_t *now)
{
	if (!tick_fn || (__u64)timer->function != tick_fn)
		return 0;
	account_sample(ctx, tick_ns, true);
	return 0;
}

/* The probe's own timer, where the kernel's tick cannot be used. */
SEC("perf_event")
int np_account_tick(struct bpf_perf_event_data *ctx)
{
	account_sample(ctx, NP_ACCOUNT_NS, false);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(np_irq_entry, int irq, struct irqaction *action)
{
	__u32 zero = 0;
	__u64 *since;

	if (!bpf_map_lookup_elem(&nic_irqs, &irq))
		return 0;
	since = bpf_map_lookup_elem(&irq_since, &zero);
	if (since)
		*since = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(np_irq_exit, int irq, struct irqaction *action, int ret)
{
	__u32 zero = 0;
	__u64 *since = bpf_map_lookup_elem(&irq_since, &zero);
	struct np_cpu_time *t = bpf_map_lookup_elem(&cpu_time, &zero);
	__u64 d;

	if (!since || !t || !*since)
		return 0;
	d = bpf_ktime_get_ns() - *since;
	*since = 0;
	t->nic_irq_ns += d;
	if (current_is_tool())
		t->tool_in_irq_ns += d;
	return 0;
}

#endif /* NP_CPU_ACCOUNT_H */
