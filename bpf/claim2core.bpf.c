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
 *   - boosted tasks (C2C_F_BOOST, lease boost_until_ns in the future, budget left on the CPU
 *     they go to) go straight to the head of the local DSQ of the CPU chosen in select_cpu,
 *     preempting what runs there (SCX_ENQ_PREEMPT: the current task's slice is zeroed and the
 *     CPU rescheduled, by IPI if it is remote): from select_cpu itself when the choice counts as
 *     idle (no enqueue round), else from enqueue. select_cpu takes an idle CPU if there is one,
 *     else it steers the wakeup away from a CPU that already runs a boosted task, to one that
 *     runs an unboosted one;
 *   - unboosted latency-critical / comm-progress tasks go to the HI class;
 *   - normal, throughput and unmatched tasks go to the NORM class, ordered by weighted virtual
 *     time, a sleeper at most C2C_WAKE_CREDIT_NS before vtime_now; while the policy map holds an
 *     entry a wakeup there (or an unboosted one of the HI class) preempts the NORM run furthest
 *     ahead of it (preempt_for_wakeup, issue 43), and on every node a NORM run ends at a tick
 *     once it is more than a gap ahead of the first waiting task (sleeper_waits_far_behind,
 *     c2c_tick_ends_run); an unmatched task runs the default slice while
 *     the policy map holds an entry, and
 *     scx_simple's 20 ms on a node without entries (c2c_untracked_slice; the tick cuts such a
 *     run back once an entry appears);
 *   - background tasks go to the BG class.
 * Each class has two shared DSQs: one for tasks whose policy has CPU masks ("placed") and one for
 * the rest. dispatch serves HI > NORM > BG, except that NORM / BG are served first once they have
 * waited longer than their starvation bound (INV-8); within a class the older head of its two
 * DSQs goes first (serve_class). The unplaced DSQ is consumed by scx_bpf_consume, which takes the
 * first task whose cpumask has this CPU: the per-switch cost of a node without preferences is
 * scx_simple's. A placed task is taken from its DSQ by a preferred CPU at once, by another CPU
 * of allowed only once it waited C2C_PREFER_SPILL_NS, never by one outside allowed
 * (consume_placed, c2c_may_run_on); a wakeup takes an idle preferred CPU, not an idle CPU
 * elsewhere (c2c_choose_placed); enqueue kicks an idle preferred CPU and the tick kicks an idle
 * CPU of allowed for a task past the bound. A boosted task whose slice runs out keeps its CPU
 * while its lease and budget last (keep_boosted_prev). Global DSQs are safe for any affinity:
 * both consume paths skip tasks that cannot run on the consuming CPU.
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
/* The guards read their tunables from the .rodata globals below, not from the defaults. */
#define C2C_TUNABLES_IN_RODATA
#include "c2c_guards.h"

char _license[] SEC("license") = "GPL";

UEI_DEFINE(uei);

#define DSQ_HI C2C_DSQ_HI
#define DSQ_NORM C2C_DSQ_NORM
#define DSQ_BG C2C_DSQ_BG
/*
 * The DSQ of a class's placed tasks: its class DSQ + PLACED_DSQ_OFFSET. Kept apart so that the
 * class DSQ holds only tasks any CPU of their cpumask may take, and scx_bpf_consume serves it;
 * iterating a DSQ with the preference check inside cost hackbench a third of its speed (35 %
 * slower than scx_simple under TCG, level with it once unplaced tasks were consumed directly).
 */
#define PLACED_DSQ_OFFSET 3
#define NR_SHARED_DSQS (DSQ_BG + PLACED_DSQ_OFFSET + 1) /* ids 1..6; 0 is C2C_DSQ_NONE */

#define NSEC_PER_USEC C2C_NSEC_PER_USEC

/*
 * The tunables, set by the loader between open and load (src/sched/tunables.cpp names them, checks
 * each against its range in c2c_guards.h and writes it here); these initial values are the
 * defaults the object carries when nobody sets them. Read-only to the programs: libbpf freezes
 * .rodata before they load, so the verifier knows each value.
 */
const volatile __u64 c2c_boost_window_ns = C2C_BOOST_WINDOW_DEFAULT_NS;
const volatile __u64 c2c_boost_budget_pct = C2C_BOOST_BUDGET_DEFAULT_PCT;
const volatile __u64 c2c_norm_starve_ns = C2C_NORM_STARVE_DEFAULT_NS;
const volatile __u64 c2c_bg_starve_ns = C2C_BG_STARVE_DEFAULT_NS;
const volatile __u64 c2c_rescue_slice_ns = C2C_RESCUE_SLICE_DEFAULT_NS;
const volatile __u64 c2c_prefer_spill_ns = C2C_PREFER_SPILL_DEFAULT_NS;
const volatile __u64 c2c_yield_after_ns = C2C_YIELD_AFTER_DEFAULT_NS;
const volatile __u64 c2c_untracked_long_slice_ns = C2C_UNTRACKED_LONG_SLICE_DEFAULT_NS;

/*
 * The watchdog must fire well after the starvation bounds (at most C2C_STARVE_MAX_NS), and must
 * stay <= 30 s (6.12 max). A struct_ops field, not a tunable: libbpf 1.4.6 has no typed access to
 * the ops map before load.
 */
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
	__u64 running_at;         /* when it last started running (0: not running) */
	__u64 exec_at_running;    /* p->se.sum_exec_runtime at init_task: the start of a run running never saw */
	__u64 charged_at;         /* boost budget charged up to here (tick, stopping) */
	__u64 expired_lease;      /* boost_until_ns already counted as expired */
	__s32 last_cpu;           /* -1 until the task first runs */
	__u32 last_node;          /* NUMA node of last_cpu (the counters' numa_migrations) */
	__u8 placed;              /* allowed / preferred above are the policy's */
	__u8 run_preferred;       /* the current run is on a CPU of preferred */
	__u8 boosted;             /* current run is charged to the CPU's boost budget */
	__u8 cpumask_changed;     /* affinity changed since it last ran inside its cpumask (oracle) */
	__u8 counted_dsq;         /* counted in dsq_queued[] of this DSQ: went there, has not run since */
	__u8 cls;                 /* its class as of its last enqueue or direct dispatch */
	__u8 tracked;             /* had a policy entry at its last select_cpu / enqueue (tracked task) */
	/*
	 * Boost inheritance (issue 43 item 3, c2c_inherit_* in c2c_guards.h). The current boosted
	 * run's boost: its depth (0: its own lease; 1-2: inherited), the chain depth it passes on to
	 * its wakees, and its deadline (the lease, or the inherited lease). Read by select_cpu of a
	 * task this one wakes while it runs.
	 */
	__u8 boost_depth;
	__u8 boost_max;
	__u64 boost_until;
	struct c2c_inherit offer; /* what its waker offered at its last wakeup (depth 0: nothing) */
};

/* A task's storage: struct c2c_task_value, with task_ctx in its opaque part. */
struct task_state {
	struct c2c_task_counters counters;
	struct task_ctx ctx;
	__u8 unused[C2C_TASK_SCHED_BYTES - sizeof(struct task_ctx)];
};
_Static_assert(sizeof(struct task_state) == sizeof(struct c2c_task_value),
	       "task_ctx must fit the opaque part of struct c2c_task_value");

/*
 * The per-task counters of the experiment (tests/vm/README.md) and the scheduler's state of each
 * task: pinned by the loader at <pin root>/c2c_task_cnt, the counters looked up from user space
 * by pidfd. Created in init_task, so the hot path only looks it up. The counters, the latency
 * histogram and the run-time oracle cover tracked tasks (a policy entry at their last wakeup or
 * enqueue); a task without one pays what scx_simple's tasks pay and little more: its queue's
 * count (dsq_queued) and its last CPU (the migration statistics); its run's length for its vtime
 * comes from the CPU's record of the run (cpu_ctx.run_*), not from here.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} c2c_task_cnt SEC(".maps");

/* The counters of the task whose ctx tc is (one lookup gives both). */
static struct c2c_task_counters *counters_of(struct task_ctx *tc)
{
	return (struct c2c_task_counters *)((char *)tc - __builtin_offsetof(struct task_state, ctx));
}

struct cpu_ctx {
	struct c2c_budget budget; /* boosted run time charged in the current window */
	__u32 curr_boosted;  /* the task running here now is boosted (read by other CPUs) */
	__u32 rescue_next;   /* the next task to run here was taken by a starvation rescue */
	__u32 node;          /* this CPU's NUMA node, once node_known */
	__u32 node_known;
	__u32 curr_yields;   /* the run here now yields to a waiting higher class (c2c_tick) */
	/*
	 * The run here now is untracked with the long slice of a node without entries
	 * (c2c_untracked_slice): the tick cuts it back once an entry appears.
	 */
	__u32 curr_long;
	/*
	 * The run here now, as running saw it: whose (run_pid), whether that task is tracked, and
	 * p->se.sum_exec_runtime at its start. stopping takes an untracked task's run length from
	 * it without looking the task's storage up (a helper call per switch, the largest part of
	 * that callback's cost under TCG). running and stopping of one run happen on this CPU with
	 * no other run between them.
	 */
	__s32 run_pid;
	__u32 run_tracked;
	__u64 run_exec_start;
	/*
	 * Whether c2c_policy held an entry when this CPU last asked (policies_maybe_present), and
	 * at which jiffy (+ 1, so that the zeroed context has never asked).
	 */
	__u64 policies_asked_at;
	__u32 policies_present;
	/*
	 * The run here now as a wakeup of DSQ_NORM sees it (preempt_for_wakeup, read by other CPUs,
	 * racy by design: a hint): whether it may be preempted (c2c_run_preemptible), its virtual time
	 * and the jiffy at its start (a load, where a clock read on every switch was what the
	 * untracked path had shed).
	 */
	__u32 run_preemptible;
	__u64 run_vtime;
	__u64 run_jiffies;
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

/*
 * Wakeups of DSQ_NORM that preempted a run (preempt_for_wakeup): a diagnostic, not ABI (the
 * pinned c2c_stats layout is); tests/vm/vllm-guest.sh reads it from the object's .bss map.
 */
__u64 diag_wakeup_preempts;

/* Runs the tick ended for a sleeper waiting far behind them (sleeper_waits_far_behind): likewise. */
__u64 diag_tick_sleeper_ends;

/* The kernel's nr_cpu_ids capped at C2C_MAX_CPUS, read once in init (a kfunc call each time). */
__u32 nr_cpus_seen;

static __u32 nr_cpus(void)
{
	return nr_cpus_seen;
}

/*
 * This CPU's copy of the statistics (a per-CPU map, summed by user space). Each CPU's callbacks
 * write only their own copy and sched_ext callbacks on one CPU never nest (they run with the
 * runqueue or pi lock held, interrupts off), so the counters take plain increments: a locked add
 * per count was a measurable part of each callback's cost under TCG (tests/vm/README.md).
 */
static struct c2c_stats *stats(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&c2c_stats, &zero);
}

/* One more of a statistics counter (this CPU's copy). */
#define COUNT_STAT(field)                    \
	do {                                 \
		struct c2c_stats *st_ = stats(); \
		if (st_)                     \
			st_->field++;        \
	} while (0)

static struct cpu_ctx *this_cpu_ctx(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&cpu_ctxs, &zero);
}

/* This CPU's NUMA node: asked once per CPU, not at every run (a helper call each). */
static __u32 cpu_node(struct cpu_ctx *cc)
{
	if (!cc)
		return (__u32)bpf_get_numa_node_id();
	if (!cc->node_known) {
		cc->node = (__u32)bpf_get_numa_node_id();
		cc->node_known = 1;
	}
	return cc->node;
}

/*
 * The task's context, or NULL when it has none. init_task creates it for every task sched_ext
 * hands this scheduler (and fails the task's entry, -ENOMEM, when it cannot), and the storage
 * lives as long as the task: so every callback between init_task and exit_task finds it. Only
 * the teardown callbacks use this directly (disable, exit_task: see there); every other caller
 * goes through tctx_of, for which a missing context is a bug.
 */
static struct task_ctx *tctx_lookup(struct task_struct *p)
{
	struct task_state *ts = bpf_task_storage_get(&c2c_task_cnt, p, 0, 0);

	if (!ts)
		return NULL;
	/*
	 * Without the barrier clang adds the offset of ctx before the NULL check and selects
	 * afterwards, and the verifier refuses arithmetic on a pointer that may be NULL.
	 */
	barrier_var(ts);
	return &ts->ctx;
}

/*
 * The task's context, which must exist (see tctx_lookup). Missing, the scheduler stops with
 * scx_bpf_error, as the scx schedulers do (scx_qmap's lookup_task_ctx): the kernel disables it,
 * every task goes back to the fair class, and the exit record names the task; where this used to
 * skip silently, the task ran without its counters, its queue count or its boost charge, and the
 * guarantees built on them (dsq_queued, INV-8's budget) were quietly wrong. The callers still
 * test for NULL: the verifier needs it, and the error takes effect after the callback returns.
 */
static struct task_ctx *tctx_of(struct task_struct *p)
{
	struct task_ctx *tc = tctx_lookup(p);

	if (!tc)
		scx_bpf_error("claim2core: no task context for pid %d (init_task creates one for every task)", p->pid);
	return tc;
}

extern s64 bpf_map_sum_elem_count(const struct bpf_map *map) __ksym;

/*
 * Whether c2c_policy may hold an entry: the map's element count (the kernel's per-CPU counters,
 * summed), asked at most once a jiffy per CPU. On a node without policies (hackbench's case) a
 * wakeup then looks no policy up: a hash lookup in select_cpu and another in enqueue were a
 * third of the difference to scx_simple's callbacks under TCG. The first entry the daemon writes
 * is seen by each CPU within a jiffy: until then its task is scheduled as it was before the
 * entry came, inside its own cpumask (INV-6 holds either way); the last one removed costs lookups
 * that find nothing for at most a jiffy more. jiffies is read by an inlined load.
 */
static bool policies_maybe_present(void)
{
	struct cpu_ctx *cc = this_cpu_ctx();
	__u64 asked_at = bpf_jiffies64() + 1;

	if (!cc)
		return true;
	if (cc->policies_asked_at != asked_at) {
		cc->policies_present = bpf_map_sum_elem_count((const struct bpf_map *)&c2c_policy) > 0;
		cc->policies_asked_at = asked_at;
	}
	return cc->policies_present;
}

/*
 * The policy for p, or NULL. An entry whose (tid, start_ticks) is not this task's belongs to an
 * earlier task that had the same tid (TID reuse): it is counted and ignored (INV-2).
 */
static const struct c2c_policy_value *policy_of(struct task_struct *p)
{
	struct c2c_task_key key = {.tid = (__u32)p->pid};
	struct c2c_policy_value *v;

	if (!policies_maybe_present())
		return NULL;
	v = bpf_map_lookup_elem(&c2c_policy, &key);
	if (!v)
		return NULL;
	if (!c2c_entry_usable(v, p->start_boottime)) {
		COUNT_STAT(identity_mismatches);
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

/* INV-6: a CPU the scheduler chose for p is one p->cpus_ptr permits. */
static void oracle_check_cpu(struct task_struct *p, __s32 cpu)
{
	if (cpu >= 0 && !bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		COUNT_STAT(oracle_cpu_outside);
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
	/* A task allowed on every CPU cannot be outside its mask: no kfunc call for it. */
	if (p->nr_cpus_allowed >= (int)nr_cpus() || bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		tc->cpumask_changed = 0;
	else if (!tc->cpumask_changed)
		COUNT_STAT(oracle_cpu_outside);
	if (!tc->boosted)
		return;
	/*
	 * An inherited boost (issue 43 item 3) has its own lease, at most C2C_INHERIT_LEASE_NS long,
	 * and a depth of at most C2C_INHERIT_MAX_DEPTH: a run past the one or beyond the other is a
	 * breach of INV-8 as a run past its own lease is.
	 */
	if (tc->boost_depth > C2C_INHERIT_MAX_DEPTH ||
	    (tc->boost_depth && now > tc->boost_until && now - tc->boost_until > C2C_ORACLE_LEASE_GRACE_NS))
		COUNT_STAT(oracle_past_lease);
	v = bpf_map_lookup_elem(&c2c_policy, &key);
	if (!v)
		return;
	if (v->start_ticks != p->start_boottime / C2C_NSEC_PER_TICK || v->abi_version != C2C_ABI_VERSION ||
	    v->exec_class >= C2C_NR_CLASSES)
		COUNT_STAT(oracle_stale_identity);
	else if (!tc->boost_depth && now > v->boost_until_ns && now - v->boost_until_ns > C2C_ORACLE_LEASE_GRACE_NS)
		COUNT_STAT(oracle_past_lease);
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
 * An untracked task (no policy entry) is queued and run without its task storage: its slice,
 * from its dispatch to the start of its run, says how it was queued. C2C_MARK_QUEUED + the CPU it
 * was queued on: in DSQ_NORM, counted in dsq_queued[DSQ_NORM] (running uncounts it and counts
 * a migration when another CPU took it); C2C_MARK_DIRECT: straight to a local DSQ from
 * select_cpu, counted nowhere. running puts the untracked slice (c2c_untracked_slice: the
 * default while the policy map holds an entry, scx_simple's without) in its place before the run
 * starts, so a task never runs with a mark and a slice left over from a
 * run (at most C2C_SLICE_MAX_NS, or the kernel's SCX_SLICE_DFL / SCX_SLICE_INF) is never one.
 * A mark the kernel overwrote (it refills SCX_SLICE_DFL in its own paths, e.g. while bypassing)
 * only leaves dsq_queued too high: a consume that finds nothing, never a task nobody consumes.
 * This spares an untracked task's wakeup the task storage lookup in enqueue and in running
 * (a helper call each, on hackbench's every switch).
 */
#define C2C_MARK_QUEUED (1ull << 62)
#define C2C_MARK_SPAN (1ull << 32)
#define C2C_MARK_DIRECT (C2C_MARK_QUEUED + C2C_MARK_SPAN)

static bool marked_queued(__u64 slice)
{
	return slice >= C2C_MARK_QUEUED && slice < C2C_MARK_QUEUED + C2C_MARK_SPAN;
}

/*
 * Not inlined: inlined into c2c_tick, clang merges its "boosted_ns = 0" store with the tick's
 * "p->scx.slice = 0" into one instruction, which the verifier rejects ("same insn cannot be used
 * with different pointers").
 */
static __noinline bool budget_left(__u64 now)
{
	struct cpu_ctx *cc = this_cpu_ctx();

	if (!cc)
		return false;
	c2c_budget_roll(&cc->budget, now);
	return c2c_budget_left(&cc->budget);
}

/*
 * Whether the boost budget of cpu, the CPU a boosted run is about to start on, has time left at
 * now (INV-8). That CPU's tick and stopping charge the run, so its budget is the one to ask, not
 * the budget of the CPU this callback runs on (a wakeup's select_cpu and enqueue run on the
 * waker's CPU). Another CPU's window is read as if rolled, never written (its own callbacks roll
 * it): a racy read, bounded by the charging side, whose tick ends a boosted run once that CPU's
 * budget is spent.
 */
static __noinline bool budget_left_on(__s32 cpu, __u64 now)
{
	__u32 zero = 0;
	struct c2c_budget b;
	struct cpu_ctx *cc;

	if (cpu < 0)
		return false;
	if (cpu == bpf_get_smp_processor_id())
		return budget_left(now);
	cc = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, (__u32)cpu);
	if (!cc)
		return false;
	b = cc->budget;
	c2c_budget_roll(&b, now);
	return c2c_budget_left(&b);
}

/*
 * Whether v grants a boost at now (CLOCK_BOOTTIME): a live lease (INV-8). Expiry is counted once
 * per lease. The callers read the clock once per callback and pass it here and to budget_left.
 */
static bool lease_live(struct task_struct *p, const struct c2c_policy_value *v, __u64 now)
{
	struct task_ctx *tc;

	if (!v || !c2c_boost_requested(v))
		return false;
	if (c2c_lease_live(v, now))
		return true;
	tc = tctx_of(p);
	if (tc && tc->expired_lease != v->boost_until_ns) {
		tc->expired_lease = v->boost_until_ns;
		COUNT_STAT(boost_expired);
	}
	return false;
}

/* Sets cpu in mask (0 <= cpu < C2C_MAX_CPUS, which bpf_for over nr_cpus() guarantees). */
static void mask_set(__u64 *mask, __s32 cpu)
{
	__u32 c = (__u32)cpu;

	if (c < C2C_MAX_CPUS)
		mask[c / 64] |= 1ull << (c % 64);
}

/* Whether mask holds no CPU. */
static bool mask_empty(const __u64 *mask)
{
	__u32 i;

	for (i = 0; i < C2C_CPUMASK_WORDS; i++)
		if (mask[i])
			return false;
	return true;
}

/*
 * The words of a kernel cpumask as C2C_CPUMASK_WORDS words: a load per 64 CPUs, where a
 * bpf_cpumask_test_cpu call per CPU cost a kfunc call each on every wakeup of a task with a
 * policy (issue #16). A word is read only when the running kernel's struct cpumask has it (its
 * size, NR_CPUS, comes from CO-RE at load time, so the verifier never walks the reads past it)
 * and it holds a CPU below nr_cpus() (<= nr_cpu_ids): an off-stack cpumask (the idle masks with
 * CPUMASK_OFFSTACK) is allocated for nr_cpu_ids bits only, not NR_CPUS. Bits at or past
 * nr_cpus() are cleared (cpu_all_mask has every NR_CPUS bit set).
 */
static __always_inline void cpumask_words(const struct cpumask *m, __u64 *mask)
{
	const unsigned long *bits = (const unsigned long *)m;
	const __u32 bytes = bpf_core_type_size(struct cpumask);
	__u32 nr = nr_cpus(), w;

	if (bytes >= 8 && nr > 0)
		mask[0] = bits[0];
	if (bytes >= 16 && nr > 64)
		mask[1] = bits[1];
	if (bytes >= 24 && nr > 128)
		mask[2] = bits[2];
	if (bytes >= 32 && nr > 192)
		mask[3] = bits[3];
	_Static_assert(C2C_CPUMASK_WORDS == 4, "cpumask_words reads four words");
	for (w = 0; w < C2C_CPUMASK_WORDS; w++) {
		if (nr <= w * 64)
			mask[w] = 0;
		else if (nr - w * 64 < 64)
			mask[w] &= (1ull << (nr - w * 64)) - 1;
	}
}

/* The task's own cpumask (p->cpus_ptr: affinity and cpuset). */
static void task_mask_of(struct task_struct *p, __u64 *mask)
{
	cpumask_words(p->cpus_ptr, mask);
}

/* The CPUs idle right now (a snapshot: the choice is claimed with test_and_clear afterwards). */
static void idle_mask_of(__u64 *mask)
{
	const struct cpumask *idle = scx_bpf_get_idle_cpumask();

	cpumask_words(idle, mask);
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
 * The task's mask is read only for a policy with masks (into task, for the caller).
 */
static bool place_task(struct task_struct *p, const struct c2c_policy_value *v, __u64 *task, struct task_ctx *tc)
{
	tc->placed = 0;
	if (!(v->flags & (C2C_F_PREFERRED_CPUS | C2C_F_ALLOWED_CPUS)))
		return false;
	task_mask_of(p, task);
	if (c2c_policy_masks(v, task, tc->allowed, tc->preferred)) {
		COUNT_STAT(cpumask_rejections);
	}
	if (mask_empty(tc->allowed))
		return false;
	/*
	 * No preferred CPU left inside the task's mask (e.g. the cgroup shrank): prefer all of
	 * allowed, as the core does when a preference matches nothing, so nobody waits for a
	 * preferred CPU that cannot come.
	 */
	if (mask_empty(tc->preferred))
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

/*
 * ---- boost inheritance (issue 43 item 3) ---------------------------------------------------------
 * select_cpu runs in the waker's context, on the waker's CPU: the current task is the waker. When
 * the run there is boosted (this CPU's record of it, cpu_ctx.curr_boosted, and the waker's own
 * context), the wakee p is offered what c2c_inherit_depth and c2c_inherit_until allow: a depth
 * within the chain's configured one (its policy's opt-in, C2C_F_WAKEE_BOOST / C2C_F_WAKEE_DEPTH2)
 * and a lease of its own. The offer becomes a boost only where the run is placed
 * (boost_run: c2c_inherit_grant, on a CPU of p's own allowed CPUs with budget left there), for
 * that run only: stopping ends it, and it is never kept past its slice (keep_boosted_prev asks
 * for the task's own lease). Only a tracked wakee (one with a policy entry: an untracked task has
 * no context on its wakeup path) that the kernel lets choose a CPU (select_cpu is not called for
 * a task allowed on one CPU) is offered anything. A wakeup from an interrupt taken while the
 * boosted task runs looks like its wakeup here (this kernel gives BPF no preempt count): it is
 * bounded as any inherited boost.
 */
static __always_inline void offer_inherited(struct task_struct *p, const struct c2c_policy_value *v,
					    struct task_ctx *tc)
{
	struct cpu_ctx *cc = this_cpu_ctx();
	struct task_struct *waker;
	struct task_ctx *wtc;
	__u64 now;
	__u32 depth;

	tc->offer.depth = 0;
	if (!cc || !cc->curr_boosted)
		return;
	waker = bpf_get_current_task_btf();
	if (!waker || waker->pid == p->pid || waker->pid != cc->run_pid)
		return;
	wtc = tctx_lookup(waker);
	if (!wtc || !wtc->boosted)
		return;
	depth = c2c_inherit_depth(true, wtc->boost_depth, wtc->boost_max);
	if (!depth)
		return;
	now = bpf_ktime_get_boot_ns();
	/* A wakee with a lease of its own is boosted by it (boost_run), not by its waker's. */
	if (v && c2c_lease_live(v, now))
		return;
	tc->offer.until = c2c_inherit_until(now, wtc->boost_until);
	tc->offer.from = (__u32)waker->pid;
	tc->offer.max = wtc->boost_max;
	tc->offer.depth = depth;
}

/*
 * Whether p's run on cpu is boosted, and with which boost: its own live lease while cpu's budget
 * lasts, else the offer of its waker (c2c_inherit_grant: its depth and lease, cpu inside p's own
 * allowed CPUs, cpu's budget). Records the boost in tc (boost_depth, boost_max, boost_until: what
 * p passes on to its own wakees) and, for an inherited one, in p's counters (explain: "boost
 * inherited from tid N") and the statistics. final: this is the last word on the wakeup (else a
 * refusal is neither counted nor the offer dropped: enqueue asks again).
 */
static __always_inline bool boost_run(struct task_struct *p, const struct c2c_policy_value *v, struct task_ctx *tc,
				 __s32 cpu, __u64 now, bool final)
{
	__u64 allowed[C2C_CPUMASK_WORDS] = {};
	struct c2c_task_counters *cnt;
	bool budget, fits;

	if (!tc)
		return false;
	if (lease_live(p, v, now)) {
		if (final)
			tc->offer.depth = 0;
		if (!budget_left_on(cpu, now)) {
			if (final)
				COUNT_STAT(boost_budget_exhausted);
			return false;
		}
		tc->boost_depth = 0;
		tc->boost_max = (__u8)c2c_inherit_conf(v);
		tc->boost_until = v->boost_until_ns;
		return true;
	}
	if (!tc->offer.depth)
		return false;
	if (tc->placed)
		c2c_mask_and(allowed, tc->allowed, tc->allowed);
	else
		task_mask_of(p, allowed);
	budget = budget_left_on(cpu, now);
	/* Everything but the budget allows it: a refusal for the budget alone is counted (INV-8). */
	fits = c2c_inherit_grant(&tc->offer, now, allowed, cpu, true);
	if (!c2c_inherit_grant(&tc->offer, now, allowed, cpu, budget)) {
		if (final) {
			if (fits)
				COUNT_STAT(inherit_budget_refused);
			tc->offer.depth = 0;
		}
		return false;
	}
	tc->boost_depth = (__u8)tc->offer.depth;
	tc->boost_max = (__u8)tc->offer.max;
	tc->boost_until = tc->offer.until;
	cnt = counters_of(tc);
	cnt->inherited_runs++;
	cnt->inherited_from = tc->offer.from;
	cnt->inherited_depth = tc->offer.depth;
	tc->offer.depth = 0;
	COUNT_STAT(boost_inherited);
	return true;
}

/* The slice of p's boosted run: an inherited one ends with its lease (c2c_inherit_slice). */
static __u64 boosted_slice(const struct task_ctx *tc, __u64 slice, __u64 now)
{
	return tc->boost_depth ? c2c_inherit_slice(slice, now, tc->boost_until) : slice;
}

/* p's virtual time as it is queued in DSQ_NORM: a sleeper gets its bounded credit (c2c_wake_vtime). */
static __u64 norm_vtime(struct task_struct *p)
{
	p->scx.dsq_vtime = c2c_wake_vtime(p->scx.dsq_vtime, vtime_now);
	return p->scx.dsq_vtime;
}

#define C2C_PREEMPT_SCAN_MAX 8 /* CPUs a wakeup of DSQ_NORM looks at for a run to preempt */

/*
 * p, woken with virtual time vtime, was queued in DSQ_NORM, or in DSQ_HI (above), since no idle
 * CPU took it in select_cpu: kicks, with SCX_KICK_PREEMPT, the CPU of p's cpumask whose run is
 * furthest ahead in virtual time among those c2c_wakeup_preempts allows (issue 43). That CPU's
 * dispatch then serves the classes in order: p, or a task of DSQ_NORM still further behind; the
 * preempted task is queued again by its virtual time. At most C2C_PREEMPT_SCAN_MAX CPUs from p's
 * own CPU on, so a wakeup's cost does not grow with the node. (scx_lavd kicks a victim CPU in
 * the same way, chosen by latency criticality: sched-ext/scx, scheds/rust/scx_lavd.)
 */
static void preempt_for_wakeup(struct task_struct *p, __u64 vtime, bool above)
{
	__u32 nr = nr_cpus(), zero = 0, start = (__u32)scx_bpf_task_cpu(p), n, i;
	__u64 now_j = bpf_jiffies64(), best_vtime = 0;
	__s32 best = -1;

	/*
	 * Not on a node without entries (yet): there, in the boot of 2026-12-07 04:21 (host load
	 * 10-12), the preemptions (640 a second) cut a Worker's run delay per step from 11.1 to
	 * 3.1 ms and the step's p50 from 33 to 13 ms, but missed 10 % of the steps in the untraced
	 * rounds against 4.6 % without them, and stress-ng lost a third (tests/vm/README.md, issue
	 * 43). Where the policy map holds an entry the untracked slice is 3 ms and the same rule
	 * helped: the adapter's misses 7.2 -> 4.4 %, the Worker variant's 12.3 -> 6.3 %.
	 */
	if (nr == 0 || !policies_maybe_present())
		return;
	n = nr < C2C_PREEMPT_SCAN_MAX ? nr : C2C_PREEMPT_SCAN_MAX;
	bpf_for(i, 0, n) {
		__u32 cpu = (start + i) % nr;
		struct cpu_ctx *cc = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);
		__u64 run_j, run_v;

		if (!cc)
			continue;
		run_j = cc->run_jiffies;
		run_v = cc->run_vtime;
		if (!c2c_wakeup_preempts(vtime, above, run_v, now_j > run_j ? now_j - run_j : 0, cc->run_preemptible))
			continue;
		if (best >= 0 && run_v <= best_vtime)
			continue;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		best = (__s32)cpu;
		best_vtime = run_v;
	}
	if (best < 0)
		return;
	scx_bpf_kick_cpu(best, SCX_KICK_PREEMPT);
	__sync_fetch_and_add(&diag_wakeup_preempts, 1);
}

static void count_dispatch(__u32 cls)
{
	struct c2c_stats *st = stats();

	if (st && cls < C2C_NR_CLASSES)
		st->dispatched[cls]++;
}

/*
 * select_cpu's first step: the CPU for a tracked task with CPU masks (placed), from its policy
 * (pick_policy_cpu), or -1 when it is not placed. *placed says which; *idle whether the CPU was
 * claimed idle.
 */
static __always_inline s32 select_policy_cpu(struct task_struct *p, const struct c2c_policy_value *v,
					     struct task_ctx *tc, __u64 *task, s32 prev_cpu, bool *idle,
					     bool *placed)
{
	s32 cpu;

	if (!v || !tc || !place_task(p, v, task, tc))
		return -1;
	*placed = true;
	cpu = pick_policy_cpu(tc, prev_cpu, idle);
	oracle_check_cpu(p, cpu);
	return cpu;
}

/*
 * select_cpu's default choice (scx_bpf_select_cpu_dfl), for every task without a placed policy.
 * *sync_to_waker: the CPU is the waker's own, reported idle for a sync wakeup though it is busy.
 */
static __always_inline s32 select_default_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags, bool *idle,
					      bool *sync_to_waker)
{
	s32 cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, idle);

	/*
	 * For a sync wakeup scx_bpf_select_cpu_dfl reports the waker's own CPU as idle when any CPU
	 * of the system is idle (even one p may not use) and the waker's local queue is empty; it
	 * claims nothing. That CPU is busy unless the waker is its idle task (a softirq's socket
	 * wakeup on an idle CPU): then it is claimed here, as the other paths claim theirs, and
	 * taken like any idle CPU.
	 */
	*sync_to_waker = *idle && (wake_flags & SCX_WAKE_SYNC) && cpu == bpf_get_smp_processor_id() &&
			 !scx_bpf_test_and_clear_cpu_idle(cpu);
	return cpu;
}

/*
 * select_cpu found cpu idle: p goes straight to its local DSQ, past enqueue, and its wait starts
 * (and ends) here. A boosted task too, without the enqueue round (the policy, the masks and the
 * budget looked up once more on every wakeup of a boosted task); the run is boosted while that
 * CPU's budget lasts (INV-8). "Idle" includes the waker's own busy CPU for a sync wakeup
 * (scx_bpf_select_cpu_dfl picks it when another CPU is idle and the waker's local DSQ is empty, a
 * socket's reader woken by its writer): a boosted task goes to the head of that DSQ and preempts
 * the waker, as from enqueue; on an idle CPU the flags are moot.
 */
static __always_inline void dispatch_to_idle(struct task_struct *p, const struct c2c_policy_value *v,
					     struct task_ctx *tc, s32 cpu, bool sync_to_waker)
{
	/* Only a tracked task's wait and lease are timed: an untracked one reads no clock. */
	__u64 now = tc ? bpf_ktime_get_boot_ns() : 0;
	bool boosted = false;

	/* A refusal of a sync wakeup to the waker's CPU is enqueue's to count: it asks again there. */
	if (tc)
		boosted = boost_run(p, v, tc, cpu, now, !sync_to_waker);
	/*
	 * An unboosted task (no lease, an expired one, or no budget left there) dispatched to the
	 * waker's local queue would skip its class's queue: two tasks waking each other would take
	 * turns in that local queue, and this CPU's dispatch, which serves the classes in order and
	 * rescues a starved one (INV-8), would not run while they did. It is enqueued in its class on
	 * that CPU instead.
	 */
	if (sync_to_waker && !boosted)
		return;
	if (tc) {
		if (!tc->runnable_at)
			tc->runnable_at = now;
		tc->cls = (__u8)class_of(v);
		tc->boosted = boosted;
	}
	count_dispatch(class_of(v));
	scx_bpf_dispatch(p, SCX_DSQ_LOCAL, tc ? (boosted ? boosted_slice(tc, slice_of(v), now) : slice_of(v)) : C2C_MARK_DIRECT,
			 boosted ? SCX_ENQ_PREEMPT | SCX_ENQ_HEAD : 0);
}

/*
 * No idle CPU for a boosted wakeup: the CPU it will preempt in enqueue, one that runs an
 * unboosted task (pick_preemptible_cpu), inside its policy's masks if it is placed. Others keep
 * cpu.
 */
static __always_inline s32 steer_boosted(struct task_struct *p, const struct c2c_policy_value *v,
					 struct task_ctx *tc, bool placed, __u64 *task, s32 cpu)
{
	__u64 none[C2C_CPUMASK_WORDS] = {};
	__u64 now;
	s32 c;

	if (!v || !tc)
		return cpu;
	now = bpf_ktime_get_boot_ns();
	/* Its own lease, or an inherited boost on offer (boost_run decides it in enqueue). */
	if (!lease_live(p, v, now) && !(tc->offer.depth && now < tc->offer.until))
		return cpu;
	if (!placed)
		task_mask_of(p, task);
	c = placed && tc ? pick_preemptible_cpu(tc->allowed, tc->preferred, cpu)
			 : pick_preemptible_cpu(task, none, cpu);
	if (c != cpu)
		oracle_check_cpu(p, c);
	return c;
}

/*
 * For a wakee offered an inherited boost whose sync wakeup was sent to its boosted waker's busy CPU
 * (waker_cpu): the idle CPU the kernel saw, if it is one of the wakee's own (its policy's allowed
 * CPUs when placed, else its cpumask: INV-6), claimed; -1 when none is (then it is steered).
 */
static __always_inline s32 claim_idle_elsewhere(struct task_struct *p, struct task_ctx *tc, __u64 *task, bool placed,
						s32 prev_cpu, s32 waker_cpu)
{
	__u64 idle_cpus[C2C_CPUMASK_WORDS] = {};
	bool idle = false;
	s32 cpu;

	if (placed)
		c2c_mask_and(task, tc->allowed, tc->allowed);
	else
		task_mask_of(p, task);
	idle_mask_of(idle_cpus);
	cpu = c2c_choose_cpu(task, idle_cpus, prev_cpu, nr_cpus(), &idle);
	if (!idle || cpu == waker_cpu || !scx_bpf_test_and_clear_cpu_idle(cpu))
		return -1;
	oracle_check_cpu(p, cpu);
	return cpu;
}

s32 BPF_STRUCT_OPS(c2c_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	const struct c2c_policy_value *v = policy_of(p);
	/*
	 * Without a policy the task's storage is not needed: stopping left it untracked and
	 * unplaced, and it goes scx_simple's way.
	 */
	struct task_ctx *tc = v ? tctx_of(p) : NULL;
	__u64 task[C2C_CPUMASK_WORDS] = {};
	bool idle = false, placed = false, sync_to_waker = false;
	s32 cpu;

	if (tc) {
		tc->placed = 0;
		tc->tracked = 1;
		offer_inherited(p, v, tc);
	} else {
		v = NULL; /* no policy, or no context (tctx_of stopped the scheduler): as without an entry */
	}
	cpu = select_policy_cpu(p, v, tc, task, prev_cpu, &idle, &placed);
	if (cpu < 0)
		cpu = select_default_cpu(p, prev_cpu, wake_flags, &idle, &sync_to_waker);
	/* An untracked task's move is counted here (running sees no storage of it, see the marks). */
	if (!tc && cpu != prev_cpu)
		COUNT_STAT(migrations);
	/*
	 * A sync wakeup sent to the waker's own CPU takes it from the waker. A wakee that would only
	 * inherit the waker's boost (no lease of its own) must not take it from the boosted waker it
	 * inherits from (a busy loop handing a step to each of its Workers in turn would wait for the
	 * first Worker's run before it woke the next): it is steered like a boosted wakeup that found
	 * no idle CPU, to a CPU of its own mask that runs no boosted task.
	 */
	if (idle && sync_to_waker && tc && tc->offer.depth) {
		cpu = claim_idle_elsewhere(p, tc, task, placed, prev_cpu, cpu);
		idle = cpu >= 0;
		sync_to_waker = false;
		if (!idle)
			cpu = bpf_get_smp_processor_id();
	}
	if (idle) {
		dispatch_to_idle(p, v, tc, cpu, sync_to_waker);
		return cpu;
	}
	/* No idle CPU: a boosted task preempts in enqueue, on the CPU chosen here. */
	return steer_boosted(p, v, tc, placed, task, cpu);
}

/*
 * Per shared DSQ (index = DSQ id), how many tasks went there and have not run since: never fewer
 * than the DSQ holds (counted before the insert, uncounted only once the task left it: it runs,
 * is enqueued again, leaves sched_ext or exits), more only for the moment between a task's
 * consumption and its run. So 0 proves the DSQ empty without looking it up (a hash lookup of the
 * DSQ id in the kernel per scx_bpf_dsq_nr_queued or scx_bpf_consume): dispatch, the rescue and
 * the tick read these, and a node without preferences or boosts pays scx_simple's one consume.
 * Not static, for the reason dsq_served_at is not.
 */
__s64 dsq_queued[NR_SHARED_DSQS];

/*
 * Uncounts tc from dsq_queued if it was counted (it left its DSQ). Not inlined: inlined into
 * c2c_running, clang's code lost the verifier the bound on the CPU number that count_run's mask
 * lookup checks ("invalid access to map value").
 */
static __noinline void uncount_queued(struct task_ctx *tc)
{
	__u8 d;

	if (!tc || !tc->counted_dsq)
		return;
	d = tc->counted_dsq;
	tc->counted_dsq = 0;
	if (d < NR_SHARED_DSQS)
		__sync_fetch_and_add(&dsq_queued[d], -1);
}

/* Counts tc in dsq_queued[dsq], before it is inserted there. */
static void count_queued(struct task_ctx *tc, __u64 dsq)
{
	if (!tc || dsq >= NR_SHARED_DSQS)
		return;
	tc->counted_dsq = (__u8)dsq;
	__sync_fetch_and_add(&dsq_queued[dsq], 1);
}

/* Whether dsq may hold a task (false: it is empty). */
static bool maybe_queued(__u64 dsq)
{
	return dsq < NR_SHARED_DSQS && dsq_queued[dsq] > 0;
}

/* Whether any placed DSQ may hold a task. */
static bool placed_maybe_queued(void)
{
	return maybe_queued(DSQ_HI + PLACED_DSQ_OFFSET) || maybe_queued(DSQ_NORM + PLACED_DSQ_OFFSET) ||
	       maybe_queued(DSQ_BG + PLACED_DSQ_OFFSET);
}

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

	idle_mask_of(idle_cpus);
	cpu = c2c_choose_cpu(tc->preferred, idle_cpus, -1, nr_cpus(), &idle);
	if (idle && scx_bpf_test_and_clear_cpu_idle(cpu))
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

/* The class's shared DSQ (DSQ_HI, DSQ_NORM, DSQ_BG). */
static __u64 class_dsq(__u32 cls)
{
	switch (cls) {
	case C2C_CLASS_LATENCY_CRITICAL:
	case C2C_CLASS_COMM_PROGRESS:
		return DSQ_HI;
	case C2C_CLASS_BACKGROUND:
		return DSQ_BG;
	default:
		return DSQ_NORM;
	}
}

/* Added to the class DSQ: a placed task waits in its class's placed DSQ. */
static __u64 placed_offset(const struct task_ctx *tc)
{
	return tc && tc->placed ? PLACED_DSQ_OFFSET : 0;
}

/*
 * An untracked task to DSQ_NORM by virtual time, as scx_simple queues it, counted there by its
 * mark (C2C_MARK_QUEUED): no storage. One queued again before it ran (a property change) was
 * counted by its mark already.
 */
static void enqueue_untracked(struct task_struct *p, u64 enq_flags)
{
	__u64 vtime = norm_vtime(p);

	if (marked_queued(p->scx.slice))
		__sync_fetch_and_add(&dsq_queued[DSQ_NORM], -1);
	count_dispatch(C2C_CLASS_UNMATCHED);
	__sync_fetch_and_add(&dsq_queued[DSQ_NORM], 1);
	scx_bpf_dispatch_vtime(p, DSQ_NORM, C2C_MARK_QUEUED + (__u32)scx_bpf_task_cpu(p), vtime, enq_flags);
	if (enq_flags & SCX_ENQ_WAKEUP)
		preempt_for_wakeup(p, vtime, false);
}

/*
 * enqueue's start of a tracked task's wait: it became runnable now (a wakeup, or the end of a run
 * it was preempted in), unless it already waited (enqueued again after a property change): the
 * clock of its runnable-to-running latency and of the spill bound starts here, and its policy's
 * masks are taken (place_task). No ops.runnable: it is called right before this, and a callback
 * fewer per wakeup is what it would cost.
 */
static __always_inline void start_wait(struct task_struct *p, const struct c2c_policy_value *v,
				       struct task_ctx *tc, __u64 now)
{
	__u64 task[C2C_CPUMASK_WORDS] = {};

	if (!tc->runnable_at)
		tc->runnable_at = now;
	tc->wait_from = tc->runnable_at;
	place_task(p, v, task, tc);
}

/*
 * A task with a live lease, or an inherited boost its waker offered (boost_run), goes to the local
 * DSQ of the CPU select_cpu returned (always inside p->cpus_ptr), ahead of whatever runs there
 * now, while that CPU's boost budget lasts (INV-8); true when it went. Without budget it is
 * counted and served unboosted, in its class.
 */
static __always_inline bool enqueue_boosted(struct task_struct *p, const struct c2c_policy_value *v,
					    struct task_ctx *tc, __u64 slice, u64 enq_flags, __u64 now)
{
	/* An inherited boost is for the run its wakeup starts, not for a later enqueue. */
	if (!(enq_flags & SCX_ENQ_WAKEUP))
		tc->offer.depth = 0;
	if (!boost_run(p, v, tc, scx_bpf_task_cpu(p), now, true))
		return false;
	tc->boosted = 1;
	scx_bpf_dispatch(p, SCX_DSQ_LOCAL, boosted_slice(tc, slice, now), enq_flags | SCX_ENQ_PREEMPT | SCX_ENQ_HEAD);
	return true;
}

/*
 * A tracked task into its class's DSQ (the placed one if it has masks), DSQ_NORM by virtual time;
 * a wakeup there, or an unboosted one of DSQ_HI, may preempt a NORM run (preempt_for_wakeup),
 * and a placed task kicks an idle preferred CPU instead (it waits for those, not for any CPU).
 */
static __always_inline void enqueue_in_class(struct task_struct *p, struct task_ctx *tc, __u32 cls, __u64 slice,
					     u64 enq_flags)
{
	__u64 dsq = class_dsq(cls) + placed_offset(tc);

	tc->cls = (__u8)cls;
	count_queued(tc, dsq);
	if (class_dsq(cls) == DSQ_NORM) {
		__u64 vtime = norm_vtime(p);

		scx_bpf_dispatch_vtime(p, dsq, slice, vtime, enq_flags);
		if ((enq_flags & SCX_ENQ_WAKEUP) && !tc->placed)
			preempt_for_wakeup(p, vtime, false);
	} else {
		scx_bpf_dispatch(p, dsq, slice, enq_flags);
		if ((enq_flags & SCX_ENQ_WAKEUP) && class_dsq(cls) == DSQ_HI && !tc->placed)
			preempt_for_wakeup(p, 0, true);
	}
	if (tc->placed)
		kick_preferred(tc);
}

void BPF_STRUCT_OPS(c2c_enqueue, struct task_struct *p, u64 enq_flags)
{
	const struct c2c_policy_value *v = policy_of(p);
	struct task_ctx *tc;
	__u64 now, slice;
	__u32 cls;

	/*
	 * An untracked wakeup needs nothing of its storage: it ran since it was last queued (a
	 * queued task cannot go to sleep), so running uncounted it, and stopping left it unboosted,
	 * unplaced and untracked. Any other enqueue (the end of a slice, a property change) may
	 * follow a tracked enqueue whose count the storage holds, and looks it up.
	 */
	if (!v && (enq_flags & SCX_ENQ_WAKEUP)) {
		enqueue_untracked(p, enq_flags);
		return;
	}
	tc = tctx_of(p);
	if (!tc) {
		/* tctx_of stopped the scheduler: queued as without an entry until the kernel takes over */
		enqueue_untracked(p, enq_flags);
		return;
	}
	/* Enqueued again: whatever DSQ it was in, it left it. */
	uncount_queued(tc);
	tc->boosted = 0;
	tc->placed = 0;
	tc->tracked = v != NULL;
	if (!v) {
		/* No entry (or no more): nothing of it is measured, and it is queued by its mark. */
		tc->runnable_at = 0;
		enqueue_untracked(p, enq_flags);
		return;
	}
	cls = class_of(v);
	slice = slice_of(v);
	now = bpf_ktime_get_boot_ns();
	start_wait(p, v, tc, now);
	count_dispatch(cls);
	if (enqueue_boosted(p, v, tc, slice, enq_flags, now))
		return;
	enqueue_in_class(p, tc, cls, slice, enq_flags);
}

/*
 * When a queued task began waiting. Not inlined: inlined into order_key, clang merges this load
 * from the task's storage with the load of p->scx.dsq_vtime into one instruction, which the
 * verifier rejects ("same insn cannot be used with different pointers").
 */
static __noinline __u64 waiting_since(struct task_struct *p)
{
	struct task_ctx *tc = tctx_of(p);

	return tc ? tc->wait_from : 0;
}

/*
 * The order key of a queued task of the class DSQ dsq: virtual time in DSQ_NORM, the time it
 * began waiting in the FIFO ones. Compares the heads of a class's two DSQs.
 */
static __u64 order_key(struct task_struct *p, __u64 dsq)
{
	return dsq == DSQ_NORM ? p->scx.dsq_vtime : waiting_since(p);
}

/* The order key of the first task of the class DSQ dsq (~0 when it is empty). */
static __u64 head_key(__u64 dsq)
{
	struct task_struct *p;
	__u64 key = ~0ull;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		key = order_key(p, dsq);
		break;
	}
	return key;
}

/*
 * Moves to this CPU's local DSQ the first task of the placed DSQ of class dsq that may run here
 * and whose order key is at most bound: its cpumask has the CPU and c2c_may_run_on allows it (a
 * preferred CPU at once, another CPU of allowed once it waited C2C_PREFER_SPILL_NS, none outside
 * allowed: INV-6). A DSQ is in key order, so the scan ends at the first key past bound.
 */
__noinline bool consume_placed(__u64 dsq, __u64 now, __u64 bound)
{
	s32 cpu = bpf_get_smp_processor_id();
	struct task_struct *p;
	__u32 scanned = 0;

	bpf_for_each(scx_dsq, p, dsq + PLACED_DSQ_OFFSET, 0) {
		struct task_ctx *tc;

		if (++scanned > C2C_CONSUME_SCAN_MAX)
			break;
		/*
		 * A task that may not run here is passed before its key is read (a storage lookup in
		 * the FIFO classes): the keys behind it are no smaller, so the bound still ends the
		 * scan. A CPU outside a pinned class's cpuset (D's background pod, from the claim's CPU)
		 * had looked every waiting task up each time it went idle.
		 */
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			continue;
		if (bound != ~0ull && order_key(p, dsq) > bound)
			break;
		tc = tctx_of(p);
		if (tc && tc->placed &&
		    !c2c_may_run_on(tc->allowed, tc->preferred, cpu, now > tc->wait_from ? now - tc->wait_from : 0))
			continue;
		if (scx_bpf_dispatch_from_dsq(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
			return true;
	}
	return false;
}

/*
 * Moves to this CPU's local DSQ the next task of class dsq that may run here, the older head of
 * the class's two DSQs first. With no placed task queued this is scx_bpf_consume alone.
 * consume_placed and serve_class are global functions (not static, not inlined): the verifier
 * checks each once, not at each of the five places dispatch serves a class, which had made
 * loading the scheduler under TCG four times slower (25 s instead of 6 s).
 */
__noinline bool serve_class(__u64 dsq, __u64 now)
{
	if (!maybe_queued(dsq + PLACED_DSQ_OFFSET))
		return maybe_queued(dsq) && scx_bpf_consume(dsq);
	if (maybe_queued(dsq)) {
		if (consume_placed(dsq, now, head_key(dsq)) || scx_bpf_consume(dsq))
			return true;
	}
	return consume_placed(dsq, now, ~0ull);
}

/* At least the tasks queued in class dsq's two DSQs (dsq_queued: 0 when both are empty). */
static __s32 class_queued(__u64 dsq)
{
	__s64 n = 0;

	if (dsq + PLACED_DSQ_OFFSET < NR_SHARED_DSQS)
		n = dsq_queued[dsq] + dsq_queued[dsq + PLACED_DSQ_OFFSET];
	return n > 0 ? (__s32)n : 0;
}

/* Serves class dsq as a starvation rescue: the next task to run here gets a short slice. */
static bool rescue_consume(__u32 dsq, __u64 now)
{
	struct cpu_ctx *cc;

	if (dsq >= 4 || !serve_class(dsq, now))
		return false;
	dsq_served_at[dsq] = now;
	/* dispatch runs only on an empty local DSQ, so the consumed task is the next to run here */
	cc = this_cpu_ctx();
	if (cc)
		cc->rescue_next = 1;
	COUNT_STAT(starvation_rescues);
	return true;
}

/*
 * The anti-starvation path (INV-8): serves the class c2c_rescue_dsq names (NORM, then BG, once
 * past its bound). An empty class restarts its clock. If no task of a starved NORM can run here,
 * BG is still considered. The lengths are dsq_queued's: one that counts a task already taken
 * only makes rescue_consume find nothing and dispatch go on as usual.
 */
static bool rescue(__u64 now)
{
	__s32 nq = class_queued(DSQ_NORM), bq = class_queued(DSQ_BG);
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
	if (dsq >= 4 || !serve_class(dsq, now))
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
static bool keep_boosted_prev(struct task_struct *prev, __u64 now)
{
	const struct c2c_policy_value *v;
	struct cpu_ctx *cc = this_cpu_ctx();
	struct task_ctx *tc;

	/* prev is still this CPU's current task: curr_boosted is its, and spares the lookup. */
	if (!prev || !(prev->scx.flags & SCX_TASK_QUEUED) || !cc || !cc->curr_boosted)
		return false;
	tc = tctx_of(prev);
	if (!tc || !tc->boosted)
		return false;
	v = policy_of(prev);
	if (!lease_live(prev, v, now) || !budget_left(now))
		return false;
	prev->scx.slice = slice_of(v);
	return true;
}

/*
 * Whether any task above or below DSQ_NORM may wait, or this CPU runs a boosted task: only then
 * can a class be starved by another, or prev be kept.
 */
static bool classes_compete(void)
{
	struct cpu_ctx *cc = this_cpu_ctx();

	return class_queued(DSQ_HI) > 0 || class_queued(DSQ_BG) > 0 || !cc || cc->curr_boosted;
}

void BPF_STRUCT_OPS(c2c_dispatch, s32 cpu, struct task_struct *prev)
{
	__u64 now = bpf_ktime_get_boot_ns();

	/*
	 * Only DSQ_NORM's tasks may wait (every task of a node without policies, and those of class
	 * normal) and prev is not boosted: nothing can starve them, nothing is below them to starve
	 * and nothing is kept. What rescue() and serve() would do then, without their other
	 * reads: the empty DSQ_BG's clock restarts, DSQ_NORM's when it is served or found empty.
	 */
	if (!classes_compete()) {
		dsq_served_at[DSQ_BG] = now;
		if (!serve(DSQ_NORM, now))
			dsq_served_at[DSQ_NORM] = now;
		return;
	}
	/* Starvation rescue first, so that keeping prev can never starve anyone (INV-8). */
	if (rescue(now))
		return;
	if (keep_boosted_prev(prev, now))
		return;
	if (serve(DSQ_HI, now) || serve(DSQ_NORM, now))
		return;
	serve(DSQ_BG, now);
}

static void record_latency(struct c2c_stats *st, __u64 ns)
{
	__u64 us = ns / NSEC_PER_USEC;
	__u32 b = 0;

	if (!st)
		return;
	/* bucket i holds [2^i, 2^(i+1)) us; 0 holds < 2 us */
	while (us > 1 && b < C2C_LAT_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	st->latency_hist[b]++;
}

/* The per-task counters at the start of a run on cpu (tc->last_cpu is still the previous run's). */
static void count_run(struct task_ctx *tc, s32 cpu, __u32 node, struct c2c_stats *st)
{
	struct c2c_task_counters *cnt = counters_of(tc);

	tc->run_preferred = tc->placed && c2c_mask_has(tc->preferred, cpu);
	cnt->runs++;
	if (tc->last_cpu >= 0 && tc->last_cpu != cpu)
		cnt->migrations++;
	if (tc->last_cpu >= 0 && tc->last_node != node)
		cnt->numa_migrations++;
	tc->last_node = node;
	if (tc->placed && !tc->run_preferred) {
		cnt->spills++;
		if (st)
			st->preferred_spills++;
	}
}

/* The per-task counters at the end of a run of d ns that began at tc->running_at. */
static void count_runtime(struct task_ctx *tc, __u64 d)
{
	struct c2c_task_counters *cnt = counters_of(tc);
	__u32 node = tc->last_node;

	if (node >= C2C_MAX_NODES)
		node = C2C_MAX_NODES - 1;
	cnt->runtime_ns += d;
	cnt->node_ns[node] += d;
	if (tc->run_preferred)
		cnt->preferred_ns += d;
}

/*
 * running's step for an untracked task queued by its mark (no storage looked up): its run gets
 * the untracked slice, its queue count goes, and a run on another CPU than it was queued on is a
 * move. The slice is long while this CPU last found the policy map empty (its select_cpu and
 * enqueue ask, at most once a jiffy); a stale answer is mended by the tick, which asks afresh and
 * cuts the run back.
 */
static __always_inline void run_untracked(struct task_struct *p, struct cpu_ctx *cc, __u64 mark, s32 cpu)
{
	p->scx.slice = c2c_untracked_slice(!cc || cc->policies_present);
	if (marked_queued(mark)) {
		__sync_fetch_and_add(&dsq_queued[DSQ_NORM], -1);
		if (mark - C2C_MARK_QUEUED != (__u32)cpu)
			COUNT_STAT(migrations);
	}
}

/*
 * running's record of the run in this CPU's context, which other CPUs' wakeups and this CPU's
 * tick and stopping read: boosted, yielding, long, preemptible, its virtual time and start. A run
 * a starvation rescue gave the CPU gets the short rescue slice and is neither yielding nor
 * preemptible (INV-8).
 */
static __always_inline void record_run(struct task_struct *p, struct cpu_ctx *cc, struct task_ctx *tc,
				       bool untracked)
{
	bool rescued = cc->rescue_next;

	cc->curr_boosted = tc && tc->boosted;
	cc->curr_long = untracked && p->scx.slice > C2C_DEFAULT_SLICE_NS;
	if (rescued) {
		cc->rescue_next = 0;
		if (p->scx.slice > C2C_RESCUE_SLICE_NS)
			p->scx.slice = C2C_RESCUE_SLICE_NS;
	}
	cc->curr_yields = tc && tc->tracked && c2c_yields_to_waiting(tc->cls, rescued);
	cc->run_preemptible = c2c_run_preemptible(tc && tc->tracked ? tc->cls : C2C_CLASS_UNMATCHED,
						  tc && tc->boosted, rescued);
	cc->run_vtime = p->scx.dsq_vtime;
	cc->run_jiffies = bpf_jiffies64();
	cc->run_pid = tc || untracked ? p->pid : 0; /* 0: no record, stopping looks the storage up */
	cc->run_tracked = tc && tc->tracked;
	cc->run_exec_start = p->se.sum_exec_runtime;
}

/*
 * running's measurement of a tracked task's run: its wait (the latency histogram), its move, the
 * per-task counters, the clocks of its run and boost charge, and the run-time oracle.
 */
static __always_inline void measure_run(struct task_struct *p, struct task_ctx *tc, struct cpu_ctx *cc, s32 cpu)
{
	__u64 now = bpf_ktime_get_boot_ns();
	struct c2c_stats *st = stats();
	__u32 node;

	if (tc->runnable_at) {
		if (st)
			record_latency(st, now - tc->runnable_at);
		tc->runnable_at = 0;
	}
	if (tc->last_cpu >= 0 && tc->last_cpu != cpu && st)
		st->migrations++;
	node = cpu_node(cc);
	count_run(tc, cpu, node, st);
	tc->last_cpu = cpu;
	tc->running_at = now;
	tc->charged_at = now;
	oracle_check_run(p, tc, cpu, now);
}

void BPF_STRUCT_OPS(c2c_running, struct task_struct *p)
{
	s32 cpu = bpf_get_smp_processor_id();
	struct cpu_ctx *cc = this_cpu_ctx();
	__u64 mark = p->scx.slice;
	bool untracked = mark >= C2C_MARK_QUEUED && mark <= C2C_MARK_DIRECT;
	struct task_ctx *tc = untracked ? NULL : tctx_of(p);

	if (untracked)
		run_untracked(p, cc, mark, cpu);
	if (cc)
		record_run(p, cc, tc, untracked);
	/* Racy max across CPUs on purpose: vtime_now only bounds how far back a sleeper lands. */
	if (p->scx.dsq_vtime > vtime_now)
		vtime_now = p->scx.dsq_vtime;
	if (!tc)
		return;
	uncount_queued(tc);
	/*
	 * A task without a policy entry is measured only for the migration statistics: the
	 * latency histogram, the per-task counters and the run-time oracle cover tracked tasks,
	 * whose scheduling is this scheduler's own; the others' is scx_simple's, and they pay its
	 * cost, not the clock reads and counters of the measurement (issue #16).
	 */
	if (!tc->tracked) {
		/*
		 * An untracked run that lost its mark (the kernel refilled its slice): its move, if
		 * any, was counted by select_cpu or not at all (the CPU it was queued on is lost).
		 */
		tc->runnable_at = 0;
		tc->last_cpu = cpu;
		return;
	}
	measure_run(p, tc, cc, cpu);
}

/*
 * Whether a placed task among the first queued ones of class dsq is past its spill bound; then an
 * idle CPU of its allowed is kicked, whose dispatch takes it (consume_placed). Without this a
 * task waiting for its busy preferred CPU would wait for that CPU's slice to end however long,
 * because an idle CPU looks at the shared DSQs only when woken.
 */
static bool kick_spill_dsq(__u64 dsq, __u64 now, const __u64 *idle_cpus)
{
	struct task_struct *p;
	__u32 scanned = 0;

	if (!maybe_queued(dsq + PLACED_DSQ_OFFSET))
		return false;
	bpf_for_each(scx_dsq, p, dsq + PLACED_DSQ_OFFSET, 0) {
		struct task_ctx *tc;
		bool idle = false;
		__s32 cpu;

		if (++scanned > C2C_SPILL_SCAN_MAX)
			break;
		tc = tctx_of(p);
		if (!tc || !tc->placed || now <= tc->wait_from || now - tc->wait_from <= C2C_PREFER_SPILL_NS)
			continue;
		cpu = c2c_choose_cpu(tc->allowed, idle_cpus, -1, nr_cpus(), &idle);
		if (idle) {
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			return true;
		}
	}
	return false;
}

/*
 * Whether a class above background has waited longer than C2C_YIELD_AFTER_NS: its DSQs hold a
 * task and it was last served (or seen empty) that long ago. Then a background run yields its CPU
 * at the tick (c2c_tick). Not at the wakeup itself: preempting the background at once took its
 * CPU for work another CPU would have taken a moment later (background loss 23-26 % in D against
 * 0 % without the rule); after 1 ms the others had that chance.
 */
static __always_inline bool class_waits(__u64 dsq, __u64 now)
{
	return dsq < 4 && c2c_starved(class_queued(dsq), dsq_served_at[dsq], now, C2C_YIELD_AFTER_NS);
}

static bool higher_class_waits(__u64 now)
{
	return class_waits(DSQ_HI, now) || class_waits(DSQ_NORM, now);
}

/*
 * Kicks an idle CPU for a placed task past its spill bound. With no CPU idle there is nobody to
 * kick, and the queued tasks are not looked at: in D every tick of a CPU beside the busy
 * background one had looked up each waiting background task (15 us a tick under TCG, inside the
 * wakeup path of the latency-critical thread whenever it landed there). The idle mask is read
 * once a tick, not once a task: it is a hint either way, the kicked CPU's dispatch decides.
 */
static void kick_for_spill(__u64 now)
{
	__u64 idle_cpus[C2C_CPUMASK_WORDS] = {};

	idle_mask_of(idle_cpus);
	if (mask_empty(idle_cpus))
		return;
	if (kick_spill_dsq(DSQ_HI, now, idle_cpus) || kick_spill_dsq(DSQ_NORM, now, idle_cpus))
		return;
	kick_spill_dsq(DSQ_BG, now, idle_cpus);
}

/* What a run of ran ns adds to p's virtual time: ran at nice 0 (weight 100), less at a higher weight. */
static __u64 weighted_run(struct task_struct *p, __u64 ran)
{
	return p->scx.weight ? ran * 100 / p->scx.weight : 0;
}

/*
 * The virtual time of DSQ_NORM's first task if it may run on this CPU, else ~0: a run ended for a
 * task pinned elsewhere would only be queued again and run on (at every tick).
 */
static __u64 norm_head_vtime_here(void)
{
	s32 cpu = bpf_get_smp_processor_id();
	struct task_struct *p;
	__u64 key = ~0ull;

	bpf_for_each(scx_dsq, p, DSQ_NORM, 0) {
		if (bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			key = p->scx.dsq_vtime;
		break;
	}
	return key;
}

/*
 * Whether the preemptible run of p on this CPU (running's record in cc) should end at this tick
 * for the first task of DSQ_NORM, waiting more than the gap behind it (c2c_tick_ends_run, issue
 * 43). Its virtual time now is its start's plus what it ran by weight, as stopping will charge
 * it (charge_vtime). Nothing is iterated while DSQ_NORM is empty (its count says so).
 */
static bool sleeper_waits_far_behind(struct task_struct *p, struct cpu_ctx *cc)
{
	__u64 ran;

	if (!cc->run_preemptible || !maybe_queued(DSQ_NORM))
		return false;
	ran = p->se.sum_exec_runtime > cc->run_exec_start ? p->se.sum_exec_runtime - cc->run_exec_start : 0;
	return c2c_tick_ends_run(ran, cc->run_vtime + weighted_run(p, ran), norm_head_vtime_here());
}

void BPF_STRUCT_OPS(c2c_tick, struct task_struct *p)
{
	struct task_ctx *tc;
	struct cpu_ctx *cc;
	__u64 now;

	cc = this_cpu_ctx();
	if (cc && sleeper_waits_far_behind(p, cc)) {
		/* The run ends at this tick; dispatch serves the classes in order (the sleeper first). */
		p->scx.slice = 0;
		__sync_fetch_and_add(&diag_tick_sleeper_ends, 1);
		return;
	}
	/* No placed task waiting, no boosted, yielding or long run: nothing to do, nothing looked up. */
	if (!placed_maybe_queued() && (!cc || (!cc->curr_boosted && !cc->curr_yields && !cc->curr_long)))
		return;
	/*
	 * An untracked run with the long slice of a node without entries (never boosted, never
	 * yielding): once an entry exists, the rest of its run is what the default slice leaves.
	 */
	if (cc && cc->curr_long) {
		if (policies_maybe_present()) {
			cc->curr_long = 0;
			p->scx.slice = c2c_cut_untracked(p->scx.slice, p->se.sum_exec_runtime - cc->run_exec_start);
		}
		if (!placed_maybe_queued())
			return;
	}
	now = bpf_ktime_get_boot_ns();
	if (cc && cc->curr_yields && higher_class_waits(now)) {
		/* The run ends at this tick; dispatch serves the classes in order. */
		p->scx.slice = 0;
		return;
	}
	kick_for_spill(now);
	tc = tctx_of(p);
	if (!tc || !cc || !tc->boosted)
		return;
	/* A boosted run kept by keep_boosted_prev never passes through running again. */
	oracle_check_run(p, tc, bpf_get_smp_processor_id(), now);
	/* Charge as we go so a long boosted run cannot overdraw the window's budget (INV-8). */
	c2c_budget_charge(&cc->budget, tc->charged_at, now);
	tc->charged_at = now;
	if (!budget_left(now) || (tc->boost_depth && now >= tc->boost_until))
		p->scx.slice = 0;
}

/* weight 100 is nice 0: a nice-0 task's vtime advances at the speed of the clock. */
static void charge_vtime(struct task_struct *p, __u64 ran)
{
	p->scx.dsq_vtime += weighted_run(p, ran);
}

void BPF_STRUCT_OPS(c2c_stopping, struct task_struct *p, bool runnable)
{
	struct cpu_ctx *cc = this_cpu_ctx();
	bool recorded = false, tracked = true;
	struct task_ctx *tc;
	__u64 start = 0, ran;

	if (cc) {
		cc->curr_boosted = 0;
		cc->curr_yields = 0;
		cc->curr_long = 0;
		cc->run_preemptible = 0;
		recorded = cc->run_pid && cc->run_pid == p->pid;
		tracked = !recorded || cc->run_tracked;
		start = cc->run_exec_start;
		cc->run_pid = 0;
	}
	/*
	 * An untracked task's run, recorded by running on this CPU: its vtime is all stopping
	 * changes (its storage is left as running left it: unboosted, unplaced, untracked).
	 */
	if (!tracked) {
		if (p->se.sum_exec_runtime > start)
			charge_vtime(p, p->se.sum_exec_runtime - start);
		return;
	}
	tc = tctx_of(p);
	if (!tc)
		return;
	/*
	 * The run's length from the kernel's own account (updated just before this callback), so
	 * that only a boosted run, whose budget is charged by the clock, reads the clock here. Its
	 * start is running's record; a run that began before the scheduler loaded has none and
	 * starts where init_task found the task.
	 */
	if (!recorded)
		start = tc->exec_at_running;
	ran = p->se.sum_exec_runtime > start ? p->se.sum_exec_runtime - start : 0;
	if (tc->tracked) {
		if (tc->boosted && cc)
			c2c_budget_charge(&cc->budget, tc->charged_at, bpf_ktime_get_boot_ns());
		if (tc->running_at)
			count_runtime(tc, ran);
		tc->running_at = 0;
	}
	charge_vtime(p, ran);
	tc->boosted = 0;
	tc->boost_depth = 0;
	/*
	 * The next select_cpu or enqueue places and tracks it again from its policy; one without a
	 * policy then finds it unplaced and untracked without looking its storage up (c2c_select_cpu).
	 */
	tc->placed = 0;
	tc->tracked = 0;
	/* Still runnable (slice over or preempted): enqueue, next, stamps when it began to wait. */
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
	struct task_state *ts = bpf_task_storage_get(&c2c_task_cnt, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!ts)
		return -ENOMEM;
	/*
	 * The counters of a task seen again after a scheduler reload continue (pinned map); its
	 * state starts over, as the scheduler that wrote it is gone.
	 */
	__builtin_memset(&ts->ctx, 0, sizeof(ts->ctx));
	ts->ctx.last_cpu = -1;
	/* stopping charges the run from here: a task running as the scheduler loads is charged its run, not its life */
	ts->ctx.exec_at_running = p->se.sum_exec_runtime;
	return 0;
}

/*
 * A task that leaves sched_ext (another scheduling class) or exits while it waits in a shared DSQ
 * is uncounted (dsq_queued). Its context is looked up without tctx_of's error on purpose: the task
 * is leaving, a count is all there is to undo, and these callbacks also run for every task while
 * the scheduler is torn down after an error, where a second error would only bury the first.
 * Nothing else: exit_task may run after the tid was reused, and the
 * policy map belongs to user space (the daemon removes entries whose (tid, start_ticks) is gone).
 * Task storage frees itself. An untracked task counted by its mark is uncounted here only
 * (exit_task follows disable for an enabled task), and its mark cleared.
 */
void BPF_STRUCT_OPS(c2c_disable, struct task_struct *p)
{
	if (marked_queued(p->scx.slice)) {
		__sync_fetch_and_add(&dsq_queued[DSQ_NORM], -1);
		p->scx.slice = slice_of(NULL);
	}
	uncount_queued(tctx_lookup(p));
}

void BPF_STRUCT_OPS(c2c_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	uncount_queued(tctx_lookup(p));
}

/*
 * ---- the scheduler's state in the kernel's debug dump ------------------------------------------
 * sched_ext dumps its state when it throws a scheduler out for an error (into the exit record's
 * dump, which the loader prints) and on SysRq-D (the sched_ext_dump tracepoint); 6.12 calls these
 * three callbacks there, after its own lines of each CPU and task. Every line starts with "c2c "
 * so that a reader (tests/vm/guest-init.sh, scenario ctxgone) can tell them from the kernel's, and
 * ops.dump's lines end with a newline: the kernel breaks its output into lines only there (in the
 * guest without them its six lines came out as one); dump_cpu's and dump_task's end with the call.
 * What is printed is what the dispatch path decides by: the shared DSQs' depths (the kernel's
 * count beside dsq_queued, the count that stands in for it, so a drift between them shows), how
 * long each class has waited (INV-8's starvation clock), vtime_now, each CPU's boost budget
 * (INV-8) and its run, and each task's class and queue state.
 */
/*
 * One class's line: called with the constant DSQ ids, so the arrays are indexed by constants (a
 * loop's index was checked in 32 bits and used in 64, which the verifier refused).
 */
static __always_inline void dump_class(__u64 dsq, __u64 now)
{
	scx_bpf_dump("c2c dsq %llu: queued %d (counted %lld), placed queued %d (counted %lld), served %llu us ago\n",
		     dsq, scx_bpf_dsq_nr_queued(dsq), dsq_queued[dsq], scx_bpf_dsq_nr_queued(dsq + PLACED_DSQ_OFFSET),
		     dsq_queued[dsq + PLACED_DSQ_OFFSET],
		     now > dsq_served_at[dsq] ? (now - dsq_served_at[dsq]) / NSEC_PER_USEC : 0);
}

void BPF_STRUCT_OPS(c2c_dump, struct scx_dump_ctx *dctx)
{
	__u64 now = bpf_ktime_get_boot_ns();
	__u64 rescues = 0, exhausted = 0, expired = 0, mismatches = 0, outside = 0, stale = 0, past = 0;
	__u32 zero = 0, cpu;

	dump_class(DSQ_HI, now);
	dump_class(DSQ_NORM, now);
	dump_class(DSQ_BG, now);
	/*
	 * The counters summed over the CPUs, as user space sums them (c2c_stats is per CPU); in
	 * scalars, not a struct c2c_stats on the stack, which the 512-byte BPF stack has no room for.
	 */
	bpf_for(cpu, 0, nr_cpus()) {
		struct c2c_stats *st = bpf_map_lookup_percpu_elem(&c2c_stats, &zero, cpu);

		if (!st)
			continue;
		rescues += st->starvation_rescues;
		exhausted += st->boost_budget_exhausted;
		expired += st->boost_expired;
		mismatches += st->identity_mismatches;
		outside += st->oracle_cpu_outside;
		stale += st->oracle_stale_identity;
		past += st->oracle_past_lease;
	}
	scx_bpf_dump("c2c vtime_now %llu, wakeup preempts %llu, tick sleeper ends %llu, policies maybe present %d\n",
		     vtime_now, diag_wakeup_preempts, diag_tick_sleeper_ends, policies_maybe_present());
	scx_bpf_dump("c2c counters: starvation_rescues %llu, boost_budget_exhausted %llu, boost_expired %llu, "
		     "identity_mismatches %llu\n",
		     rescues, exhausted, expired, mismatches);
	scx_bpf_dump("c2c oracle: cpu_outside %llu, stale_identity %llu, past_lease %llu\n",
		     outside, stale, past);
}

void BPF_STRUCT_OPS(c2c_dump_cpu, struct scx_dump_ctx *dctx, s32 cpu, bool idle)
{
	__u32 zero = 0;
	struct cpu_ctx *cc = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, (__u32)cpu);

	if (!cc)
		return;
	scx_bpf_dump("c2c cpu %d: boost budget %llu of %llu us spent in the window from %llu, run pid %d "
		     "boosted %u yields %u long %u preemptible %u vtime %llu",
		     cpu, cc->budget.boosted_ns / NSEC_PER_USEC, C2C_BOOST_BUDGET_NS / NSEC_PER_USEC,
		     cc->budget.window_start, cc->run_pid, cc->curr_boosted, cc->curr_yields, cc->curr_long,
		     cc->run_preemptible, cc->run_vtime);
}

void BPF_STRUCT_OPS(c2c_dump_task, struct scx_dump_ctx *dctx, struct task_struct *p)
{
	/* A dump must not stop the scheduler: a task without a context is said so, not an error. */
	struct task_ctx *tc = tctx_lookup(p);

	if (!tc) {
		scx_bpf_dump("c2c task %d: no context", p->pid);
		return;
	}
	scx_bpf_dump("c2c task %d: class %u tracked %u placed %u boosted %u (depth %u) counted in dsq %u, "
		     "runnable since %llu, last cpu %d, vtime %llu",
		     p->pid, tc->cls, tc->tracked, tc->placed, tc->boosted, tc->boost_depth, tc->counted_dsq,
		     tc->runnable_at, tc->last_cpu, p->scx.dsq_vtime);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(c2c_init)
{
	__u64 now = bpf_ktime_get_boot_ns();
	s32 ret, dsq;

	dsq_served_at[DSQ_NORM] = now;
	dsq_served_at[DSQ_BG] = now;
	nr_cpus_seen = scx_bpf_nr_cpu_ids();
	if (nr_cpus_seen > C2C_MAX_CPUS)
		nr_cpus_seen = C2C_MAX_CPUS;
	bpf_for(dsq, DSQ_HI, DSQ_BG + 1) {
		ret = scx_bpf_create_dsq(dsq, -1);
		if (!ret)
			ret = scx_bpf_create_dsq(dsq + PLACED_DSQ_OFFSET, -1);
		if (ret)
			return ret;
	}
	return 0;
}

void BPF_STRUCT_OPS(c2c_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(claim2core_ops,
	       .select_cpu = (void *)c2c_select_cpu,
	       .enqueue = (void *)c2c_enqueue,
	       .dispatch = (void *)c2c_dispatch,
	       .running = (void *)c2c_running,
	       .tick = (void *)c2c_tick,
	       .stopping = (void *)c2c_stopping,
	       .set_cpumask = (void *)c2c_set_cpumask,
	       .init_task = (void *)c2c_init_task,
	       .disable = (void *)c2c_disable,
	       .exit_task = (void *)c2c_exit_task,
	       .init = (void *)c2c_init,
	       .exit = (void *)c2c_exit,
	       .dump = (void *)c2c_dump,
	       .dump_cpu = (void *)c2c_dump_cpu,
	       .dump_task = (void *)c2c_dump_task,
	       .timeout_ms = WATCHDOG_MS,
	       .name = "claim2core");
