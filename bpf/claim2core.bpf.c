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
 * longer than their starvation bound (INV-8). A task whose policy has CPU masks ("placed") is
 * taken from a shared DSQ by a preferred CPU at once, by another CPU of allowed only once it
 * waited C2C_PREFER_SPILL_NS, never by one outside allowed (consume_here, c2c_may_run_on); a
 * wakeup takes an idle preferred CPU, not an idle CPU elsewhere (c2c_choose_placed); enqueue
 * kicks an idle preferred CPU and the tick kicks an idle CPU of allowed for a task past the
 * bound. A boosted task whose slice runs out keeps its CPU while its lease and budget last
 * (keep_boosted_prev). Global DSQs are safe for any affinity: consume_here skips tasks that
 * cannot run on the consuming CPU.
 *
 * Invariants enforced here:
 *   INV-2 an entry is used only if its start_ticks equals p->start_boottime / 10 ms; otherwise it
 *         is counted (identity_mismatches) and ignored.
 *   INV-6 a CPU is only ever chosen from p->cpus_ptr; a placed task runs inside its policy's
 *         allowed CPUs, on preferred ones unless they stayed busy past the bound.
 *   INV-8 boosts are leases (boost_until_ns, CLOCK_BOOTTIME) and each CPU spends at most
 *         C2C_BOOST_BUDGET_PCT of every C2C_BOOST_WINDOW_NS on boosted tasks.
 * The decisions themselves (identity, masks, CPU choice, lease, budget, starvation, slice) are
 * the pure functions of c2c_guards.h, proved with Frama-C/WP and unit-tested on the host; this
 * file reads the kernel state they need, passes it in and acts on the answer.
 */
#include <scx/common.bpf.h>
#include "claim2core_abi.h"
#include "c2c_guards.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define DSQ_HI C2C_DSQ_HI
#define DSQ_NORM C2C_DSQ_NORM
#define DSQ_BG C2C_DSQ_BG

#define NSEC_PER_USEC C2C_NSEC_PER_USEC

/* The tunables (boost window and budget, starvation bounds, slices) are in c2c_guards.h. */
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
	/*
	 * The policy's masks (c2c_policy_masks) as of the last select_cpu / enqueue, when it has
	 * CPU masks (placed): the dispatch path's preference check (c2c_may_run_on) reads them for
	 * queued tasks without another map lookup per task.
	 */
	__u64 allowed[C2C_CPUMASK_WORDS];
	__u64 preferred[C2C_CPUMASK_WORDS];
	__u64 wait_from;          /* when it began waiting in a shared DSQ (the spill bound's clock) */
	__u64 runnable_at;        /* when the task last became runnable (0: not waiting) */
	__u64 running_at;         /* when it last started running */
	__u64 charged_at;         /* boost budget charged up to here (tick, stopping) */
	__u64 expired_lease;      /* boost_until_ns already counted as expired */
	__s32 last_cpu;           /* -1 until the task first runs */
	__u32 last_node;          /* NUMA node of last_cpu (the counters' numa_migrations) */
	__u8 placed;              /* allowed / preferred above are the policy's */
	__u8 run_preferred;       /* the current run is on a CPU of preferred */
	__u8 boosted;             /* current run is charged to the CPU's boost budget */
	__u8 cpumask_changed;     /* affinity changed since it last ran inside its cpumask (oracle) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

/*
 * The per-task counters of the experiment (tests/vm/README.md): pinned by the loader at
 * <pin root>/c2c_task_cnt, looked up from user space by pidfd. Created in init_task, so the hot
 * path only looks it up.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct c2c_task_counters);
} c2c_task_cnt SEC(".maps");

static struct c2c_task_counters *counters_of(struct task_struct *p)
{
	return bpf_task_storage_get(&c2c_task_cnt, p, 0, 0);
}

struct cpu_ctx {
	struct c2c_budget budget; /* boosted run time charged in the current window */
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
	if (!c2c_entry_usable(v, p->start_boottime)) {
		st = stats();
		if (st)
			__sync_fetch_and_add(&st->identity_mismatches, 1);
		return NULL;
	}
	return v;
}

/*
 * ---- the run-time oracle (tests/vm/README.md) ---------------------------------------------
 * Re-checks, from the kernel's own state and apart from c2c_guards.h, what the guards promise,
 * and counts every breach into c2c_stats.oracle_*; each must stay 0. A boosted task reaches its
 * CPU through the local DSQ head within microseconds, so a run that is still boosted a whole
 * C2C_ORACLE_LEASE_GRACE_NS after its lease ended was boosted by a broken lease check, not by a
 * late wakeup (a host stall of the guest is far shorter than this).
 */
#define C2C_ORACLE_LEASE_GRACE_NS (500ull * C2C_NSEC_PER_MSEC)

#define ORACLE_COUNT(field)                                  \
	do {                                                 \
		struct c2c_stats *st_ = stats();             \
		if (st_)                                     \
			__sync_fetch_and_add(&st_->field, 1); \
	} while (0)

/* INV-6: a CPU the scheduler chose for p is one p->cpus_ptr permits. */
static void oracle_check_cpu(struct task_struct *p, __s32 cpu)
{
	if (cpu >= 0 && !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		ORACLE_COUNT(oracle_cpu_outside);
}

/*
 * p runs on cpu now (running, tick): the CPU is permitted (INV-6); a boosted run belongs to the
 * task its entry names, in this ABI version and a known class (INV-2), and is within its lease
 * (INV-8). An entry removed since the boost was granted proves nothing either way.
 * A task whose affinity just changed is put back on its old CPU, now outside its cpumask, until
 * the kernel's migration stopper moves it (set_next_task after set_cpus_allowed): not a
 * violation, so that run is exempt (c2c_set_cpumask) until the task runs inside its mask again.
 */
static void oracle_check_run(struct task_struct *p, struct task_ctx *tc, __s32 cpu, __u64 now)
{
	struct c2c_task_key key = {.tid = (__u32)p->pid};
	const struct c2c_policy_value *v;

	if (!tc)
		return;
	if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		tc->cpumask_changed = 0;
	else if (!tc->cpumask_changed)
		ORACLE_COUNT(oracle_cpu_outside);
	if (!tc->boosted)
		return;
	v = bpf_map_lookup_elem(&c2c_policy, &key);
	if (!v)
		return;
	if (v->start_ticks != p->start_boottime / C2C_NSEC_PER_TICK || v->abi_version != C2C_ABI_VERSION ||
	    v->exec_class >= C2C_NR_CLASSES)
		ORACLE_COUNT(oracle_stale_identity);
	else if (now > v->boost_until_ns && now - v->boost_until_ns > C2C_ORACLE_LEASE_GRACE_NS)
		ORACLE_COUNT(oracle_past_lease);
}

static __u32 class_of(const struct c2c_policy_value *v)
{
	return v ? v->exec_class : C2C_CLASS_UNMATCHED;
}

static __u64 slice_of(const struct c2c_policy_value *v)
{
	return c2c_slice(v);
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
	c2c_budget_roll(&cc->budget, now);
	return c2c_budget_left(&cc->budget);
}

/* Whether v grants a boost right now: a live lease (INV-8). Expiry is counted once per lease. */
static bool lease_live(struct task_struct *p, const struct c2c_policy_value *v)
{
	struct task_ctx *tc;
	struct c2c_stats *st;

	if (!v || !c2c_boost_requested(v))
		return false;
	if (c2c_lease_live(v, bpf_ktime_get_boot_ns()))
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

static __u32 nr_cpus(void)
{
	__u32 nr = scx_bpf_nr_cpu_ids();

	return nr > C2C_MAX_CPUS ? C2C_MAX_CPUS : nr;
}

/* Sets cpu in mask (0 <= cpu < C2C_MAX_CPUS, which bpf_for over nr_cpus() guarantees). */
static void mask_set(__u64 *mask, __s32 cpu)
{
	__u32 c = (__u32)cpu;

	if (c < C2C_MAX_CPUS)
		mask[c / 64] |= 1ull << (c % 64);
}

/* The task's own cpumask (p->cpus_ptr: affinity and cpuset) as C2C_CPUMASK_WORDS words. */
static void task_mask_of(struct task_struct *p, __u64 *mask)
{
	__s32 cpu;

	bpf_for(cpu, 0, nr_cpus()) {
		if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			mask_set(mask, cpu);
	}
}

/* The CPUs idle right now (a snapshot: the choice is claimed with test_and_clear afterwards). */
static void idle_mask_of(__u64 *mask)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();
	__s32 cpu;

	bpf_for(cpu, 0, nr_cpus()) {
		if (bpf_cpumask_test_cpu(cpu, idle))
			mask_set(mask, cpu);
	}
	scx_bpf_put_idle_cpumask(idle);
}

/* Whether cpu runs a boosted task right now (racy by design: a placement hint only). */
static bool cpu_runs_boosted(__s32 cpu)
{
	__u32 zero = 0;
	struct cpu_ctx *cc = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, (__u32)cpu);

	return cc && cc->curr_boosted;
}

/* The CPUs that run a boosted task right now. */
static void boosted_mask_of(__u64 *mask)
{
	__s32 cpu;

	bpf_for(cpu, 0, nr_cpus()) {
		if (cpu_runs_boosted(cpu))
			mask_set(mask, cpu);
	}
}

/*
 * Cuts the policy's masks to p->cpus_ptr (c2c_policy_masks: preferred ⊆ allowed ⊆ task, INV-6)
 * and keeps them in tc for the dispatch path; policy CPUs outside the task's mask are counted
 * (cpumask_rejections). False (tc not placed) when the policy names no CPU the task may use: then
 * the task is scheduled as if its entry had no masks, never left waiting for an empty allowed.
 */
static bool place_task(const struct c2c_policy_value *v, const __u64 *task, struct task_ctx *tc)
{
	struct c2c_stats *st;
	__u32 i;

	tc->placed = 0;
	if (!(v->flags & (C2C_F_PREFERRED_CPUS | C2C_F_ALLOWED_CPUS)))
		return false;
	if (c2c_policy_masks(v, task, tc->allowed, tc->preferred)) {
		st = stats();
		if (st)
			__sync_fetch_and_add(&st->cpumask_rejections, 1);
	}
	for (i = 0; i < C2C_CPUMASK_WORDS; i++)
		if (tc->allowed[i])
			break;
	if (i == C2C_CPUMASK_WORDS)
		return false;
	/*
	 * No preferred CPU left inside the task's mask (e.g. the cgroup shrank): prefer all of
	 * allowed, as the core does when a preference matches nothing, so nobody waits for a
	 * preferred CPU that cannot come.
	 */
	for (i = 0; i < C2C_CPUMASK_WORDS; i++)
		if (tc->preferred[i])
			break;
	if (i == C2C_CPUMASK_WORDS)
		c2c_mask_and(tc->preferred, tc->allowed, tc->allowed);
	tc->placed = 1;
	return true;
}

/*
 * The policy's CPU choice for a placed task at wakeup (c2c_choose_placed): an idle CPU of
 * preferred, claimed with test_and_clear, else a preferred CPU to queue for (a wakeup has not
 * waited, so an idle CPU elsewhere in allowed is not taken: the preference's bound starts now).
 * *idle says whether the CPU was claimed idle.
 */
static __s32 pick_policy_cpu(const struct task_ctx *tc, __s32 prev_cpu, bool *idle)
{
	__u64 idle_cpus[C2C_CPUMASK_WORDS] = {};
	__s32 cpu;

	idle_mask_of(idle_cpus);
	cpu = c2c_choose_placed(tc->allowed, tc->preferred, idle_cpus, prev_cpu, nr_cpus(), 0, idle);
	/* Lost the race for the idle CPU: still a CPU of the mask, just not an idle one. */
	if (*idle && !scx_bpf_test_and_clear_cpu_idle(cpu))
		*idle = false;
	return cpu;
}

/*
 * For a boosted wakeup that found no idle CPU: cpu if it runs an unboosted task, else the first
 * CPU of envelope -- first ones first -- that does (c2c_choose_preemptible, INV-6). A placed
 * task passes (allowed, preferred), so a boosted task leaves its preferred CPUs only when each of
 * them runs another boosted task, and never leaves allowed; others pass (p->cpus_ptr, none).
 */
static __s32 pick_preemptible_cpu(const __u64 *envelope, const __u64 *first, __s32 cpu)
{
	__u64 boosted[C2C_CPUMASK_WORDS] = {};

	boosted_mask_of(boosted);
	return c2c_choose_preemptible(envelope, first, boosted, cpu, nr_cpus());
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
	struct task_ctx *tc = tctx_of(p);
	__u64 task[C2C_CPUMASK_WORDS] = {}, none[C2C_CPUMASK_WORDS] = {};
	bool idle = false, placed = false;
	s32 cpu = -1;

	if (tc)
		tc->placed = 0;
	if (v)
		task_mask_of(p, task);
	if (v && tc && place_task(v, task, tc)) {
		placed = true;
		cpu = pick_policy_cpu(tc, prev_cpu, &idle);
		oracle_check_cpu(p, cpu);
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
	if (!idle) {
		s32 c = placed ? pick_preemptible_cpu(tc->allowed, tc->preferred, cpu)
			       : pick_preemptible_cpu(task, none, cpu);

		if (c != cpu)
			oracle_check_cpu(p, c);
		cpu = c;
	}
	return cpu;
}

/*
 * Last time a placed task was queued in a shared DSQ: the tick looks for a placed task past its
 * spill bound only within C2C_SPILL_SCAN_WINDOW_NS of it, so a node without preferences pays
 * one load per tick.
 */
__u64 placed_enqueued_at;
#define C2C_SPILL_SCAN_WINDOW_NS (1000ull * C2C_NSEC_PER_MSEC)
#define C2C_SPILL_SCAN_MAX 8 /* queued tasks the tick looks at per DSQ */
#define C2C_CONSUME_SCAN_MAX 64 /* queued tasks dispatch looks at per DSQ */

/*
 * A placed task went to a shared DSQ: wakes an idle preferred CPU to take it (an idle CPU does
 * not look at the shared DSQs by itself; the CPU select_cpu chose is busy or was not asked).
 */
static void kick_preferred(const struct task_ctx *tc)
{
	__u64 idle_cpus[C2C_CPUMASK_WORDS] = {};
	bool idle = false;
	__s32 cpu;

	placed_enqueued_at = bpf_ktime_get_boot_ns();
	idle_mask_of(idle_cpus);
	cpu = c2c_choose_cpu(tc->preferred, idle_cpus, -1, nr_cpus(), &idle);
	if (idle && scx_bpf_test_and_clear_cpu_idle(cpu))
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

void BPF_STRUCT_OPS(c2c_enqueue, struct task_struct *p, u64 enq_flags)
{
	const struct c2c_policy_value *v = policy_of(p);
	__u32 cls = class_of(v);
	__u64 slice = slice_of(v);
	struct task_ctx *tc = tctx_of(p);
	__u64 task[C2C_CPUMASK_WORDS] = {};
	struct c2c_stats *st;

	if (tc) {
		tc->boosted = 0;
		tc->placed = 0;
		tc->wait_from = tc->runnable_at ? tc->runnable_at : bpf_ktime_get_boot_ns();
		if (v) {
			task_mask_of(p, task);
			place_task(v, task, tc);
		}
	}
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
	if (tc && tc->placed)
		kick_preferred(tc);
}

/*
 * Moves to this CPU's local DSQ the first task of dsq that may run here: its cpumask has the CPU
 * and, for a placed task, c2c_may_run_on allows it (a preferred CPU at once, another CPU of
 * allowed once it waited C2C_PREFER_SPILL_NS, none outside allowed: INV-6). Replaces
 * scx_bpf_consume, which takes the first task the cpumask permits.
 */
static bool consume_here(__u64 dsq, __u64 now)
{
	s32 cpu = bpf_get_smp_processor_id();
	struct task_struct *p;
	__u32 scanned = 0;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		struct task_ctx *tc;

		if (++scanned > C2C_CONSUME_SCAN_MAX)
			break;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		tc = tctx_of(p);
		if (tc && tc->placed &&
		    !c2c_may_run_on(tc->allowed, tc->preferred, cpu, now > tc->wait_from ? now - tc->wait_from : 0))
			continue;
		if (scx_bpf_dispatch_from_dsq(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return false;
}

/* Consumes from dsq as a starvation rescue: the next task to run here gets a short slice. */
static bool rescue_consume(__u32 dsq, __u64 now)
{
	struct cpu_ctx *cc;
	struct c2c_stats *st;

	if (dsq >= 4 || !consume_here(dsq, now))
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

/*
 * The anti-starvation path (INV-8): serves the queue c2c_rescue_dsq names (DSQ_NORM, then
 * DSQ_BG, once past its bound). An empty queue restarts its clock. If no task of the starved
 * DSQ_NORM can run here, DSQ_BG is still considered.
 */
static bool rescue(__u64 now)
{
	__s32 nq = scx_bpf_dsq_nr_queued(DSQ_NORM), bq = scx_bpf_dsq_nr_queued(DSQ_BG);
	__u32 d;

	if (nq <= 0)
		dsq_served_at[DSQ_NORM] = now;
	if (bq <= 0)
		dsq_served_at[DSQ_BG] = now;
	d = c2c_rescue_dsq(nq, dsq_served_at[DSQ_NORM], bq, dsq_served_at[DSQ_BG], now);
	if (d == C2C_DSQ_NONE)
		return false;
	if (rescue_consume(d, now))
		return true;
	if (d != DSQ_NORM)
		return false;
	d = c2c_rescue_dsq(0, 0, bq, dsq_served_at[DSQ_BG], now);
	return d != C2C_DSQ_NONE && rescue_consume(d, now);
}

static bool serve(__u64 dsq, __u64 now)
{
	if (dsq >= 4 || !consume_here(dsq, now))
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
	if (rescue(now))
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

/* The per-task counters at the start of a run on cpu (tc->last_cpu is still the previous run's). */
static void count_run(struct task_struct *p, struct task_ctx *tc, s32 cpu)
{
	struct c2c_task_counters *cnt = counters_of(p);
	__u32 node = (__u32)bpf_get_numa_node_id();
	struct c2c_stats *st;

	tc->run_preferred = tc->placed && c2c_mask_has(tc->preferred, cpu);
	if (!cnt) {
		tc->last_node = node;
		return;
	}
	cnt->runs++;
	if (tc->last_cpu >= 0 && tc->last_cpu != cpu)
		cnt->migrations++;
	if (tc->last_cpu >= 0 && tc->last_node != node)
		cnt->numa_migrations++;
	tc->last_node = node;
	if (tc->placed && !tc->run_preferred) {
		cnt->spills++;
		st = stats();
		if (st)
			__sync_fetch_and_add(&st->preferred_spills, 1);
	}
}

/* The per-task counters at the end of a run that began at tc->running_at. */
static void count_runtime(struct task_struct *p, const struct task_ctx *tc, __u64 now)
{
	struct c2c_task_counters *cnt = counters_of(p);
	__u64 d = now > tc->running_at ? now - tc->running_at : 0;
	__u32 node = tc->last_node;

	if (!cnt || !tc->running_at)
		return;
	if (node >= C2C_MAX_NODES)
		node = C2C_MAX_NODES - 1;
	cnt->runtime_ns += d;
	cnt->node_ns[node] += d;
	if (tc->run_preferred)
		cnt->preferred_ns += d;
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
			if (p->scx.slice > C2C_RESCUE_SLICE_NS)
				p->scx.slice = C2C_RESCUE_SLICE_NS;
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
	count_run(p, tc, cpu);
	tc->last_cpu = cpu;
	tc->running_at = now;
	tc->charged_at = now;
	oracle_check_run(p, tc, cpu, now);
}

/*
 * Whether a placed task among the first queued ones of dsq is past its spill bound; then an
 * idle CPU of its allowed is kicked, whose dispatch takes it (consume_here). Without this a
 * task waiting for its busy preferred CPU would wait for that CPU's slice to end however long,
 * because an idle CPU looks at the shared DSQs only when woken.
 */
static bool kick_spill_dsq(__u64 dsq, __u64 now)
{
	struct task_struct *p;
	__u32 scanned = 0;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		__u64 idle_cpus[C2C_CPUMASK_WORDS] = {};
		struct task_ctx *tc;
		bool idle = false;
		__s32 cpu;

		if (++scanned > C2C_SPILL_SCAN_MAX)
			break;
		tc = tctx_of(p);
		if (!tc || !tc->placed || now <= tc->wait_from || now - tc->wait_from <= C2C_PREFER_SPILL_NS)
			continue;
		idle_mask_of(idle_cpus);
		cpu = c2c_choose_cpu(tc->allowed, idle_cpus, -1, nr_cpus(), &idle);
		if (idle) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			return true;
		}
	}
	return false;
}

static void kick_for_spill(__u64 now)
{
	if (!placed_enqueued_at || now < placed_enqueued_at || now - placed_enqueued_at > C2C_SPILL_SCAN_WINDOW_NS)
		return;
	if (kick_spill_dsq(DSQ_HI, now) || kick_spill_dsq(DSQ_NORM, now))
		return;
	kick_spill_dsq(DSQ_BG, now);
}

void BPF_STRUCT_OPS(c2c_tick, struct task_struct *p)
{
	struct task_ctx *tc = tctx_of(p);
	struct cpu_ctx *cc = this_cpu_ctx();
	__u64 now = bpf_ktime_get_boot_ns();

	kick_for_spill(now);
	if (!tc || !cc || !tc->boosted)
		return;
	/* A boosted run kept by keep_boosted_prev never passes through running again. */
	oracle_check_run(p, tc, bpf_get_smp_processor_id(), now);
	/* Charge as we go so a long boosted run cannot overdraw the window's budget (INV-8). */
	c2c_budget_charge(&cc->budget, tc->charged_at, now);
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
		c2c_budget_charge(&cc->budget, tc->charged_at, now);
	count_runtime(p, tc, now);
	/* weight 100 is nice 0: a nice-0 task's vtime advances at the speed of the clock. */
	if (p->scx.weight)
		p->scx.dsq_vtime += (now - tc->running_at) * 100 / p->scx.weight;
	tc->boosted = 0;
	/* Still runnable (slice over or preempted): it waits again from now. */
	if (runnable)
		tc->runnable_at = now;
}

/* The oracle's only use of it: see oracle_check_run. */
void BPF_STRUCT_OPS(c2c_set_cpumask, struct task_struct *p, const struct cpumask *cpumask)
{
	struct task_ctx *tc = tctx_of(p);

	if (tc)
		tc->cpumask_changed = 1;
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
	/* The counters of a task seen again after a scheduler reload continue (pinned map). */
	if (!bpf_task_storage_get(&c2c_task_cnt, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE))
		return -ENOMEM;
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
	       .set_cpumask = (void *)c2c_set_cpumask,
	       .init_task = (void *)c2c_init_task,
	       .init = (void *)c2c_init,
	       .exit = (void *)c2c_exit,
	       .timeout_ms = WATCHDOG_MS,
	       .name = "claim2core");
