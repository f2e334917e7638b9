/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * claim2core: the sched_ext scheduler that enforces per-task policies written by user space into
 * the pinned HASH map c2c_policy (tid -> struct c2c_policy_value, bpf/claim2core_abi.h).
 *
 * Built against Linux 6.12 (tests/vm/build-kernel.sh): vmlinux.h of that kernel and its
 * tools/sched_ext/include/scx headers, included at build time. 6.12 kfunc names
 * (scx_bpf_dispatch, scx_bpf_consume).
 *
 * Queueing model:
 *   - boosted tasks (C2C_F_BOOST, lease boost_until_ns in the future, CPU budget left) go
 *     straight to the head of the local DSQ of the CPU chosen in select_cpu, preempting what runs
 *     there (SCX_ENQ_PREEMPT: the current task's slice is zeroed and the CPU rescheduled, by IPI
 *     if it is remote). select_cpu takes an idle CPU if there is one, else it steers the wakeup
 *     away from a CPU that already runs a boosted task, to one that runs an unboosted one;
 *   - unboosted latency-critical / comm-progress tasks go to DSQ_HI;
 *   - normal, throughput and unmatched tasks go to DSQ_NORM, ordered by weighted virtual time;
 *   - background tasks go to DSQ_BG.
 * dispatch serves HI > NORM > BG, except that NORM / BG are served first once they have waited
 * longer than their starvation bound (INV-8). A boosted task whose slice runs out keeps its CPU
 * while its lease and budget last (keep_boosted_prev). Global DSQs are safe for any affinity: consume
 * skips tasks that cannot run on the consuming CPU.
 *
 * Invariants enforced here:
 *   INV-2 an entry is used only if its start_ticks equals p->start_boottime / 10 ms; otherwise it
 *         is counted (identity_mismatches) and ignored.
 *   INV-6 a CPU is only ever chosen from p->cpus_ptr; policy CPUs are preferences inside it.
 *   INV-8 boosts are leases (boost_until_ns, CLOCK_BOOTTIME) and each CPU spends at most
 *         BOOST_BUDGET_PCT of every BOOST_WINDOW_NS on boosted tasks.
 */
#include <scx/common.bpf.h>
#include "claim2core_abi.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define DSQ_HI 1
#define DSQ_NORM 2
#define DSQ_BG 3

#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_USEC 1000ull

/* Tunables. Compile-time constants so every value the verifier sees is bounded. */
#define BOOST_WINDOW_NS (100 * NSEC_PER_MSEC)
#define BOOST_BUDGET_PCT 70
#define NORM_STARVE_NS (10 * NSEC_PER_MSEC)
#define BG_STARVE_NS (40 * NSEC_PER_MSEC)
/*
 * A rescued run is short: the bound promises progress, not a share. Long rescued slices would cap
 * a boosted CPU-bound task well below its budget (measured: 50 % with a 3 ms normal and a 10 ms
 * background slice rescued every 10 / 40 ms).
 */
#define RESCUE_SLICE_NS (1 * NSEC_PER_MSEC)
#define SLICE_MIN_NS (100 * NSEC_PER_USEC)
#define SLICE_MAX_NS (100 * NSEC_PER_MSEC)
/* The watchdog must fire well after the starvation bounds, and must stay <= 30 s (6.12 max). */
#define WATCHDOG_MS 5000

/*
 * ---- maps shared with user space (pinned under C2C_PIN_ROOT) -------------------------------
 * One definition with bpf/policy_maps.bpf.c (src/mirror), so either side can create and pin
 * them and the other reuses the pin.
 */
#include "policy_maps.bpf.h"

/* ---- private state ------------------------------------------------------------------------ */
struct task_ctx {
	__u64 runnable_at;        /* when the task last became runnable (0: not waiting) */
	__u64 running_at;         /* when it last started running */
	__u64 charged_at;         /* boost budget charged up to here (tick, stopping) */
	__u64 expired_lease;      /* boost_until_ns already counted as expired */
	__s32 last_cpu;           /* -1 until the task first runs */
	__u8 boosted;             /* current run is charged to the CPU's boost budget */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

struct cpu_ctx {
	__u64 window_start;
	__u64 boosted_ns;    /* boosted run time charged in the current window */
	__u32 curr_boosted;  /* the task running here now is boosted (read by other CPUs) */
	__u32 rescue_next;   /* the next task to run here was taken by a starvation rescue */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

/*
 * Last time each shared DSQ was empty or served: the starvation clock (index = DSQ id).
 * Deliberately not static: clang splits a static array whose elements are only used at constant
 * indices into scalars, and the resulting .bss BTF is rejected by the kernel ("Invalid size").
 */
__u64 dsq_served_at[4];

/*
 * DSQ_NORM is ordered by virtual time: a task is charged its run time divided by its weight
 * (nice), so tasks that sleep a lot (interactive ones) come before CPU hogs. vtime_now is the
 * largest vtime that started running; a task that slept is placed at most one slice before it,
 * so sleeping cannot bank an unbounded head start over the tasks that kept running.
 */
__u64 vtime_now;

static struct c2c_stats *stats(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&c2c_stats, &zero);
}

static struct cpu_ctx *this_cpu_ctx(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&cpu_ctxs, &zero);
}

static struct task_ctx *tctx_of(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

/* Task identity as /proc shows it: field 22 of stat, in USER_HZ = 100 ticks (INV-2). */
static __u64 start_ticks_of(const struct task_struct *p)
{
	return p->start_boottime / C2C_NSEC_PER_TICK;
}

/*
 * The policy for p, or NULL. An entry whose (tid, start_ticks) is not this task's belongs to an
 * earlier task that had the same tid (TID reuse): it is counted and ignored (INV-2).
 */
static const struct c2c_policy_value *policy_of(struct task_struct *p)
{
	struct c2c_task_key key = {.tid = (__u32)p->pid};
	struct c2c_policy_value *v = bpf_map_lookup_elem(&c2c_policy, &key);
	struct c2c_stats *st;

	if (!v)
		return NULL;
	if (v->start_ticks != start_ticks_of(p) || v->abi_version != C2C_ABI_VERSION ||
	    v->exec_class >= C2C_NR_CLASSES) {
		st = stats();
		if (st)
			__sync_fetch_and_add(&st->identity_mismatches, 1);
		return NULL;
	}
	return v;
}

static __u32 class_of(const struct c2c_policy_value *v)
{
	return v ? v->exec_class : C2C_CLASS_UNMATCHED;
}

static __u64 slice_of(const struct c2c_policy_value *v)
{
	__u64 s;

	if (v && (v->flags & C2C_F_CUSTOM_SLICE) && v->slice_ns) {
		s = v->slice_ns;
		if (s < SLICE_MIN_NS)
			s = SLICE_MIN_NS;
		if (s > SLICE_MAX_NS)
			s = SLICE_MAX_NS;
		return s;
	}
	switch (class_of(v)) {
	case C2C_CLASS_LATENCY_CRITICAL:
		return C2C_SLICE_LATENCY_CRITICAL_NS;
	case C2C_CLASS_COMM_PROGRESS:
		return C2C_SLICE_COMM_PROGRESS_NS;
	case C2C_CLASS_THROUGHPUT:
		return C2C_SLICE_THROUGHPUT_NS;
	case C2C_CLASS_BACKGROUND:
		return C2C_SLICE_BACKGROUND_NS;
	default:
		return C2C_DEFAULT_SLICE_NS;
	}
}

/*
 * Not inlined: inlined into c2c_tick, clang merges its "boosted_ns = 0" store with the tick's
 * "p->scx.slice = 0" into one instruction, which the verifier rejects ("same insn cannot be used
 * with different pointers").
 */
static __noinline bool budget_left(void)
{
	struct cpu_ctx *cc = this_cpu_ctx();
	__u64 now = bpf_ktime_get_boot_ns();

	if (!cc)
		return false;
	if (now - cc->window_start >= BOOST_WINDOW_NS) {
		cc->window_start = now;
		cc->boosted_ns = 0;
	}
	return cc->boosted_ns < BOOST_WINDOW_NS * BOOST_BUDGET_PCT / 100;
}

/* Whether v grants a boost right now: a live lease (INV-8). Expiry is counted once per lease. */
static bool lease_live(struct task_struct *p, const struct c2c_policy_value *v)
{
	struct task_ctx *tc;
	struct c2c_stats *st;

	if (!v || !(v->flags & C2C_F_BOOST))
		return false;
	if (v->exec_class != C2C_CLASS_LATENCY_CRITICAL && v->exec_class != C2C_CLASS_COMM_PROGRESS)
		return false;
	if (bpf_ktime_get_boot_ns() < v->boost_until_ns)
		return true;
	tc = tctx_of(p);
	if (tc && tc->expired_lease != v->boost_until_ns) {
		tc->expired_lease = v->boost_until_ns;
		st = stats();
		if (st)
			__sync_fetch_and_add(&st->boost_expired, 1);
	}
	return false;
}

static bool mask_has(const __u64 *mask, __s32 cpu)
{
	__u32 c = (__u32)cpu;

	if (c >= C2C_MAX_CPUS)
		return false;
	return (mask[c / 64] >> (c % 64)) & 1;
}

/*
 * Picks a CPU inside p->cpus_ptr that the policy prefers (preferred_cpus, then allowed_cpus):
 * an idle one if any (claimed with test_and_clear), else prev_cpu if it is in the mask, else the
 * first permitted CPU of the mask. Returns -1 if the policy names no CPU the task may use.
 * *idle says whether the CPU was idle. Policy CPUs outside p->cpus_ptr are refused (INV-6).
 */
static __s32 pick_policy_cpu(struct task_struct *p, const __u64 *mask, __s32 prev_cpu, bool *idle)
{
	__u32 nr = scx_bpf_nr_cpu_ids();
	__s32 first = -1, cpu;
	bool rejected = false, prev_ok = false;
	struct c2c_stats *st;

	if (nr > C2C_MAX_CPUS)
		nr = C2C_MAX_CPUS;
	bpf_for(cpu, 0, nr) {
		if (!mask_has(mask, cpu))
			continue;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
			rejected = true;
			continue;
		}
		if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
			*idle = true;
			first = cpu;
			goto out;
		}
		if (cpu == prev_cpu)
			prev_ok = true;
		if (first < 0)
			first = cpu;
	}
	if (prev_ok)
		first = prev_cpu;
out:
	if (rejected) {
		st = stats();
		if (st)
			__sync_fetch_and_add(&st->cpumask_rejections, 1);
	}
	return first;
}

/* Whether cpu runs a boosted task right now (racy by design: a placement hint only). */
static bool cpu_runs_boosted(__s32 cpu)
{
	__u32 zero = 0;
	struct cpu_ctx *cc = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, (__u32)cpu);

	return cc && cc->curr_boosted;
}

/*
 * For a boosted wakeup that found no idle CPU: cpu if it runs an unboosted task (preempting that
 * costs nobody a boost), else the first CPU of p->cpus_ptr -- policy CPUs first -- that does.
 * Every candidate is tested against p->cpus_ptr (INV-6).
 */
static __s32 pick_preemptible_cpu(struct task_struct *p, const struct c2c_policy_value *v, __s32 cpu)
{
	__u32 nr = scx_bpf_nr_cpu_ids();
	__s32 c, fallback = -1;

	if (cpu >= 0 && !cpu_runs_boosted(cpu))
		return cpu;
	if (nr > C2C_MAX_CPUS)
		nr = C2C_MAX_CPUS;
	bpf_for(c, 0, nr) {
		if (!bpf_cpumask_test_cpu(c, p->cpus_ptr) || cpu_runs_boosted(c))
			continue;
		if (v && (v->flags & C2C_F_ALLOWED_CPUS) && mask_has(v->allowed_cpus, c))
			return c;
		if (fallback < 0)
			fallback = c;
	}
	return fallback >= 0 ? fallback : cpu;
}

static __u64 norm_vtime(struct task_struct *p)
{
	__u64 floor = vtime_now > C2C_DEFAULT_SLICE_NS ? vtime_now - C2C_DEFAULT_SLICE_NS : 0;

	if (p->scx.dsq_vtime < floor)
		p->scx.dsq_vtime = floor;
	return p->scx.dsq_vtime;
}

static void count_dispatch(__u32 cls)
{
	struct c2c_stats *st = stats();

	if (st && cls < C2C_NR_CLASSES)
		__sync_fetch_and_add(&st->dispatched[cls], 1);
}

s32 BPF_STRUCT_OPS(c2c_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	const struct c2c_policy_value *v = policy_of(p);
	bool idle = false;
	s32 cpu = -1;

	if (v && (v->flags & C2C_F_PREFERRED_CPUS))
		cpu = pick_policy_cpu(p, v->preferred_cpus, prev_cpu, &idle);
	if (!idle && v && (v->flags & C2C_F_ALLOWED_CPUS)) {
		bool idle2 = false;
		s32 c2 = pick_policy_cpu(p, v->allowed_cpus, prev_cpu, &idle2);

		if (idle2 || cpu < 0) {
			cpu = c2;
			idle = idle2;
		}
	}
	if (cpu < 0)
		cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &idle);

	/* An idle CPU runs the task right away; boosted tasks are handled in enqueue (preempt). */
	if (!lease_live(p, v)) {
		if (idle) {
			count_dispatch(class_of(v));
			scx_bpf_dispatch(p, SCX_DSQ_LOCAL, slice_of(v), 0);
		}
		return cpu;
	}
	if (!idle)
		cpu = pick_preemptible_cpu(p, v, cpu);
	return cpu;
}

void BPF_STRUCT_OPS(c2c_enqueue, struct task_struct *p, u64 enq_flags)
{
	const struct c2c_policy_value *v = policy_of(p);
	__u32 cls = class_of(v);
	__u64 slice = slice_of(v);
	struct task_ctx *tc = tctx_of(p);
	struct c2c_stats *st;

	if (tc)
		tc->boosted = 0;
	count_dispatch(cls);

	if (lease_live(p, v)) {
		if (budget_left()) {
			/*
			 * Local DSQ of the CPU select_cpu returned (always inside p->cpus_ptr), ahead
			 * of whatever runs there now. Bounded by the lease and the CPU's boost budget
			 * (INV-8).
			 */
			if (tc)
				tc->boosted = 1;
			scx_bpf_dispatch(p, SCX_DSQ_LOCAL, slice, enq_flags | SCX_ENQ_PREEMPT | SCX_ENQ_HEAD);
			return;
		}
		/* The CPU spent its boost budget: served unboosted, in its class (INV-8). */
		st = stats();
		if (st)
			__sync_fetch_and_add(&st->boost_budget_exhausted, 1);
	}
	switch (cls) {
	case C2C_CLASS_LATENCY_CRITICAL:
	case C2C_CLASS_COMM_PROGRESS:
		scx_bpf_dispatch(p, DSQ_HI, slice, enq_flags);
		break;
	case C2C_CLASS_BACKGROUND:
		scx_bpf_dispatch(p, DSQ_BG, slice, enq_flags);
		break;
	default:
		scx_bpf_dispatch_vtime(p, DSQ_NORM, slice, norm_vtime(p), enq_flags);
		break;
	}
}

/* Serves dsq if it has waited longer than bound: the anti-starvation path (INV-8). */
static bool rescue(__u64 dsq, __u64 bound, __u64 now)
{
	struct cpu_ctx *cc;
	struct c2c_stats *st;
	__u64 served;

	if (dsq >= 4)
		return false;
	if (scx_bpf_dsq_nr_queued(dsq) <= 0) {
		dsq_served_at[dsq] = now;
		return false;
	}
	served = dsq_served_at[dsq];
	if (now - served <= bound || !scx_bpf_consume(dsq))
		return false;
	dsq_served_at[dsq] = now;
	/* dispatch runs only on an empty local DSQ, so the consumed task is the next to run here */
	cc = this_cpu_ctx();
	if (cc)
		cc->rescue_next = 1;
	st = stats();
	if (st)
		__sync_fetch_and_add(&st->starvation_rescues, 1);
	return true;
}

static bool serve(__u64 dsq, __u64 now)
{
	if (dsq >= 4 || !scx_bpf_consume(dsq))
		return false;
	dsq_served_at[dsq] = now;
	return true;
}

/*
 * Whether prev, a boosted task whose slice just ran out and which is still runnable, keeps its
 * CPU for another slice. Without this the core takes the next task from the shared DSQs before
 * prev is enqueued again, so a boosted task that outran its slice (on a slow or preempted vCPU a
 * short burst can) would wait a whole slice of a background task. Kept only while its lease and
 * the CPU's boost budget last: the tick ends the run when the budget is spent (INV-8).
 */
static bool keep_boosted_prev(struct task_struct *prev)
{
	const struct c2c_policy_value *v;
	struct task_ctx *tc;

	if (!prev || !(prev->scx.flags & SCX_TASK_QUEUED))
		return false;
	tc = tctx_of(prev);
	if (!tc || !tc->boosted)
		return false;
	v = policy_of(prev);
	if (!lease_live(prev, v) || !budget_left())
		return false;
	prev->scx.slice = slice_of(v);
	return true;
}

void BPF_STRUCT_OPS(c2c_dispatch, s32 cpu, struct task_struct *prev)
{
	__u64 now = bpf_ktime_get_boot_ns();

	/* Starvation rescue first, so that keeping prev can never starve anyone (INV-8). */
	if (rescue(DSQ_NORM, NORM_STARVE_NS, now) || rescue(DSQ_BG, BG_STARVE_NS, now))
		return;
	if (keep_boosted_prev(prev))
		return;
	if (serve(DSQ_HI, now) || serve(DSQ_NORM, now))
		return;
	serve(DSQ_BG, now);
}

void BPF_STRUCT_OPS(c2c_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tc = tctx_of(p);

	if (tc)
		tc->runnable_at = bpf_ktime_get_boot_ns();
}

static void record_latency(__u64 ns)
{
	struct c2c_stats *st = stats();
	__u64 us = ns / NSEC_PER_USEC;
	__u32 b = 0;

	if (!st)
		return;
	/* bucket i holds [2^i, 2^(i+1)) us; 0 holds < 2 us */
	while (us > 1 && b < C2C_LAT_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	__sync_fetch_and_add(&st->latency_hist[b], 1);
}

void BPF_STRUCT_OPS(c2c_running, struct task_struct *p)
{
	struct task_ctx *tc = tctx_of(p);
	s32 cpu = bpf_get_smp_processor_id();
	__u64 now = bpf_ktime_get_boot_ns();
	struct cpu_ctx *cc = this_cpu_ctx();
	struct c2c_stats *st;

	if (cc) {
		cc->curr_boosted = tc && tc->boosted;
		if (cc->rescue_next) {
			cc->rescue_next = 0;
			if (p->scx.slice > RESCUE_SLICE_NS)
				p->scx.slice = RESCUE_SLICE_NS;
		}
	}
	/* Racy max across CPUs on purpose: vtime_now only bounds how far back a sleeper lands. */
	if (p->scx.dsq_vtime > vtime_now)
		vtime_now = p->scx.dsq_vtime;
	if (!tc)
		return;
	if (tc->runnable_at) {
		record_latency(now - tc->runnable_at);
		tc->runnable_at = 0;
	}
	if (tc->last_cpu >= 0 && tc->last_cpu != cpu) {
		st = stats();
		if (st)
			__sync_fetch_and_add(&st->migrations, 1);
	}
	tc->last_cpu = cpu;
	tc->running_at = now;
	tc->charged_at = now;
}

void BPF_STRUCT_OPS(c2c_tick, struct task_struct *p)
{
	struct task_ctx *tc = tctx_of(p);
	struct cpu_ctx *cc = this_cpu_ctx();
	__u64 now = bpf_ktime_get_boot_ns();

	if (!tc || !cc || !tc->boosted)
		return;
	/* Charge as we go so a long boosted run cannot overdraw the window's budget (INV-8). */
	cc->boosted_ns += now - tc->charged_at;
	tc->charged_at = now;
	if (!budget_left())
		p->scx.slice = 0;
}

void BPF_STRUCT_OPS(c2c_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tc = tctx_of(p);
	struct cpu_ctx *cc = this_cpu_ctx();
	__u64 now = bpf_ktime_get_boot_ns();

	if (cc)
		cc->curr_boosted = 0;
	if (!tc)
		return;
	if (tc->boosted && cc)
		cc->boosted_ns += now - tc->charged_at;
	/* weight 100 is nice 0: a nice-0 task's vtime advances at the speed of the clock. */
	if (p->scx.weight)
		p->scx.dsq_vtime += (now - tc->running_at) * 100 / p->scx.weight;
	tc->boosted = 0;
	/* Still runnable (slice over or preempted): it waits again from now. */
	if (runnable)
		tc->runnable_at = now;
}

s32 BPF_STRUCT_OPS(c2c_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	/*
	 * Nothing identity-related is cached here: on the fork path p->start_boottime is still
	 * the parent's, so the identity is always read from p at lookup time.
	 */
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!tc)
		return -ENOMEM;
	tc->last_cpu = -1;
	return 0;
}

/*
 * No exit_task: it may run after the tid was reused, and the policy map belongs to user space
 * (the daemon removes entries whose (tid, start_ticks) is gone). Task storage frees itself.
 */

s32 BPF_STRUCT_OPS_SLEEPABLE(c2c_init)
{
	__u64 now = bpf_ktime_get_boot_ns();
	s32 ret;

	dsq_served_at[DSQ_NORM] = now;
	dsq_served_at[DSQ_BG] = now;
	ret = scx_bpf_create_dsq(DSQ_HI, -1);
	if (ret)
		return ret;
	ret = scx_bpf_create_dsq(DSQ_NORM, -1);
	if (ret)
		return ret;
	return scx_bpf_create_dsq(DSQ_BG, -1);
}

void BPF_STRUCT_OPS(c2c_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(claim2core_ops,
	       .select_cpu = (void *)c2c_select_cpu,
	       .enqueue = (void *)c2c_enqueue,
	       .dispatch = (void *)c2c_dispatch,
	       .runnable = (void *)c2c_runnable,
	       .running = (void *)c2c_running,
	       .tick = (void *)c2c_tick,
	       .stopping = (void *)c2c_stopping,
	       .init_task = (void *)c2c_init_task,
	       .init = (void *)c2c_init,
	       .exit = (void *)c2c_exit,
	       .timeout_ms = WATCHDOG_MS,
	       .name = "claim2core");
