// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Activity of watched threads (issue 46 item 4): waker -> wakee edges and per-thread run and wakeup
 * counts, for the roles the core proposes from activity (src/core/role_proposals.hpp). Works on any
 * kernel with BTF (no sched_ext needed). Watched: a thread whose TGID is in c2c_we_tgids, or whose
 * cgroup id (task_cgroup_id.bpf.h) is in c2c_we_cgroups.
 *
 *  - sched_waking(p) fires in try_to_wake_up in the waker's context (sched_wakeup may fire later on
 *    the wakee's CPU, in whatever runs there), so `current` is the waker. A wakeup from interrupt
 *    context (a device irq, a softirq, an hrtimer: c2c_we_irq_depth) is counted for the wakee but
 *    is nobody's edge: the interrupted thread did not wake it.
 *  - sched_switch(preempt, prev, next): run time and switch-ins.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "claim2core_abi.h"
#include "task_cgroup_id.bpf.h"
#include "wakeup_edges_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set before load: whether c2c_we_cgroups is consulted at all (saves a lookup per event). */
const volatile __u32 c2c_we_use_cgroups = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, C2C_WE_MAX_FILTER);
	__type(key, __u32);
	__type(value, __u8);
} c2c_we_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, C2C_WE_MAX_FILTER);
	__type(key, __u64);
	__type(value, __u8);
} c2c_we_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, C2C_WE_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct c2c_we_thread);
} c2c_we_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, C2C_WE_MAX_EDGES);
	__type(key, struct c2c_we_edge_key);
	__type(value, __u64);
} c2c_we_edges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} c2c_we_drops SEC(".maps");

/*
 * Interrupt nesting per CPU: a wakeup while it is > 0 comes from an interrupt (a device irq, a
 * softirq, an hrtimer callback: the timeouts of nanosleep, futex, poll), not from the thread it
 * interrupted. Kept from the entry/exit tracepoints because the preempt count is a per-CPU
 * variable whose address a kernel without CONFIG_KALLSYMS_ALL does not give BPF (this host's).
 * An exit seen without its entry (attached mid-handler) is not counted below 0.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} c2c_we_irq_depth SEC(".maps");

static __always_inline void irq_enter(void)
{
	__u32 zero = 0, *d = bpf_map_lookup_elem(&c2c_we_irq_depth, &zero);
	if (d)
		*d += 1;
}

static __always_inline void irq_leave(void)
{
	__u32 zero = 0, *d = bpf_map_lookup_elem(&c2c_we_irq_depth, &zero);
	if (d && *d > 0)
		*d -= 1;
}

static __always_inline int in_interrupt_context(void)
{
	__u32 zero = 0, *d = bpf_map_lookup_elem(&c2c_we_irq_depth, &zero);
	return d && *d > 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(c2c_we_irq_in, int irq, struct irqaction *action) { irq_enter(); return 0; }
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(c2c_we_irq_out, int irq, struct irqaction *action, int ret) { irq_leave(); return 0; }
SEC("tp_btf/softirq_entry")
int BPF_PROG(c2c_we_softirq_in, unsigned int vec) { irq_enter(); return 0; }
SEC("tp_btf/softirq_exit")
int BPF_PROG(c2c_we_softirq_out, unsigned int vec) { irq_leave(); return 0; }
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(c2c_we_hrtimer_in, struct hrtimer *t, ktime_t *now) { irq_enter(); return 0; }
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(c2c_we_hrtimer_out, struct hrtimer *t) { irq_leave(); return 0; }

static __always_inline void count_drop(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&c2c_we_drops, &which);
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline int watched(struct task_struct *t)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);
	if (bpf_map_lookup_elem(&c2c_we_tgids, &tgid))
		return 1;
	if (c2c_we_use_cgroups) {
		__u64 cg = c2c_task_cgroup_id(t);
		if (bpf_map_lookup_elem(&c2c_we_cgroups, &cg))
			return 1;
	}
	return 0;
}

/* The thread's record, created on first sight (NULL when the map is full). */
static __always_inline struct c2c_we_thread *thread_of(struct task_struct *t)
{
	__u32 tid = BPF_CORE_READ(t, pid);
	struct c2c_we_thread *r = bpf_map_lookup_elem(&c2c_we_threads, &tid);
	if (r)
		return r;
	struct c2c_we_thread init = {.tgid = BPF_CORE_READ(t, tgid)};
	if (bpf_map_update_elem(&c2c_we_threads, &tid, &init, BPF_NOEXIST) != 0 &&
	    !bpf_map_lookup_elem(&c2c_we_threads, &tid)) {
		count_drop(C2C_WE_DROP_THREAD);
		return NULL;
	}
	return bpf_map_lookup_elem(&c2c_we_threads, &tid);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(c2c_we_on_waking, struct task_struct *p)
{
	if (!watched(p))
		return 0;
	struct c2c_we_thread *wakee = thread_of(p);
	if (!wakee)
		return 0;
	__sync_fetch_and_add(&wakee->wakeups, 1);
	if (in_interrupt_context())
		return 0;
	struct task_struct *cur = bpf_get_current_task_btf();
	if (cur->pid == 0 || cur == p || !watched(cur))
		return 0;
	struct c2c_we_thread *waker = thread_of(cur);
	if (!waker)
		return 0;
	__sync_fetch_and_add(&waker->wakes_given, 1);
	struct c2c_we_edge_key key = {.waker = cur->pid, .wakee = BPF_CORE_READ(p, pid)};
	__u64 *n = bpf_map_lookup_elem(&c2c_we_edges, &key);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return 0;
	}
	__u64 one = 1;
	if (bpf_map_update_elem(&c2c_we_edges, &key, &one, BPF_NOEXIST) != 0) {
		n = bpf_map_lookup_elem(&c2c_we_edges, &key); /* another CPU made it first */
		if (n)
			__sync_fetch_and_add(n, 1);
		else
			count_drop(C2C_WE_DROP_EDGE);
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(c2c_we_on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	if (prev->pid != 0 && watched(prev)) {
		struct c2c_we_thread *r = thread_of(prev);
		/* A thread first seen while it runs has no switch-in: its time so far is not known. */
		if (r && r->last_in_ns != 0 && now > r->last_in_ns)
			r->run_ns += now - r->last_in_ns;
		if (r)
			r->last_in_ns = 0;
	}
	if (next->pid != 0 && watched(next)) {
		struct c2c_we_thread *r = thread_of(next);
		if (r) {
			r->runs += 1;
			r->last_in_ns = now;
		}
	}
	return 0;
}
