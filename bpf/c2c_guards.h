/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The scheduler's decisions as pure C: the one source of the guards that carry the kernel halves
 * of INV-2, INV-6 and INV-8. bpf/claim2core.bpf.c includes it and passes in what it read from the
 * kernel (the task's start time, its cpumask, the idle CPUs, the clock); the host includes it for
 * the unit tests (tests/unit/guards_test.cpp); Frama-C/WP proves the ACSL contracts below
 * (tests/proof, `ctest -L proof`). Nothing here calls a BPF helper, touches a map or keeps state
 * except through the pointers it is given.
 *
 * Contracts: INV-2 c2c_entry_usable; INV-6 c2c_policy_masks, c2c_choose_cpu,
 * c2c_choose_preemptible, and the preference inside allowed (c2c_may_run_on, c2c_choose_placed);
 * INV-8 c2c_lease_live, c2c_budget_*, c2c_starved, c2c_rescue_dsq, c2c_yields_to_waiting, and
 * c2c_run_preemptible (a rescued run is never preempted); the untracked slice (c2c_untracked_slice,
 * c2c_cut_untracked); a sleeper against CPU hogs (c2c_wake_vtime, c2c_wakeup_preempts,
 * c2c_tick_ends_run); boost inheritance, INV-6 and INV-8 for a boosted task's wakee (c2c_inherit_*:
 * depth <= 2, its own lease, the budget, the wakee's allowed CPUs).
 * Every function is also proved free of run-time errors (-wp-rte with unsigned overflow checked:
 * no mask word out of bounds, no wrapping time arithmetic).
 */
#ifndef C2C_GUARDS_H
#define C2C_GUARDS_H

#include "claim2core_abi.h"
#ifndef __VMLINUX_H__
#include <stdbool.h>
#endif

#define C2C_NSEC_PER_USEC 1000ull
#define C2C_NSEC_PER_MSEC 1000000ull

/*
 * ---- tunables ----------------------------------------------------------------------------------
 * Each has a default and a range here, the one source of both. The scheduler reads each from a
 * `const volatile` global of its .rodata (the sched_ext idiom: scx_simple's slice_ns), which its
 * loader may set between open and load (src/sched/tunables.cpp validates the range, naming the
 * tunable); libbpf freezes .rodata before the programs load, so the verifier sees the value as a
 * known constant and every bound it checks still holds. The host's unit tests use the defaults.
 * Frama-C/WP proves the guards for every value inside the ranges (c2c_tunables_ok), not only for
 * the defaults: the proof's translation unit declares the globals `const` without a value
 * (tests/proof/guards_proof.c), which is what frozen .rodata is to the programs.
 *
 * C2C_BOOST_WINDOW_NS, C2C_BOOST_BUDGET_PCT: each CPU spends at most C2C_BOOST_BUDGET_PCT of every
 *   window on boosted tasks (INV-8). At most 90 %: a budget of the whole window would leave only
 *   the starvation rescue between a boosted hog and the rest of its CPU.
 * C2C_NORM_STARVE_NS, C2C_BG_STARVE_NS: starvation bounds of the shared queues (INV-8); at most
 *   1 s, well inside the kernel watchdog's 5 s (WATCHDOG_MS in claim2core.bpf.c).
 * C2C_RESCUE_SLICE_NS: a rescued run is short: the bound promises progress, not a share. Long
 *   rescued slices would cap a boosted CPU-bound task well below its budget (measured: 50 % with a
 *   3 ms normal and a 10 ms background slice rescued every 10 / 40 ms).
 * C2C_PREFER_SPILL_NS: see c2c_may_run_on. C2C_YIELD_AFTER_NS: see c2c_yields_to_waiting.
 * C2C_UNTRACKED_LONG_SLICE_NS: see c2c_untracked_slice; also the sleeper credit (c2c_wake_vtime).
 */
#define C2C_BOOST_WINDOW_DEFAULT_NS (100ull * C2C_NSEC_PER_MSEC)
#define C2C_BOOST_WINDOW_MIN_NS (1ull * C2C_NSEC_PER_MSEC)
#define C2C_BOOST_WINDOW_MAX_NS (1000ull * C2C_NSEC_PER_MSEC)
#define C2C_BOOST_BUDGET_DEFAULT_PCT 70ull
#define C2C_BOOST_BUDGET_MIN_PCT 1ull
#define C2C_BOOST_BUDGET_MAX_PCT 90ull
#define C2C_NORM_STARVE_DEFAULT_NS (10ull * C2C_NSEC_PER_MSEC)
#define C2C_BG_STARVE_DEFAULT_NS (40ull * C2C_NSEC_PER_MSEC)
#define C2C_STARVE_MIN_NS (1ull * C2C_NSEC_PER_MSEC)
#define C2C_STARVE_MAX_NS (1000ull * C2C_NSEC_PER_MSEC)
#define C2C_RESCUE_SLICE_DEFAULT_NS (1ull * C2C_NSEC_PER_MSEC)
#define C2C_RESCUE_SLICE_MIN_NS (10ull * C2C_NSEC_PER_USEC)
#define C2C_RESCUE_SLICE_MAX_NS (20ull * C2C_NSEC_PER_MSEC)
#define C2C_PREFER_SPILL_DEFAULT_NS (2ull * C2C_NSEC_PER_MSEC)
#define C2C_YIELD_AFTER_DEFAULT_NS (1ull * C2C_NSEC_PER_MSEC)
#define C2C_WAIT_BOUND_MAX_NS (100ull * C2C_NSEC_PER_MSEC) /* prefer spill, yield after: 0 .. this */
#define C2C_UNTRACKED_LONG_SLICE_DEFAULT_NS (20ull * C2C_NSEC_PER_MSEC)
#define C2C_UNTRACKED_LONG_SLICE_MIN_NS C2C_DEFAULT_SLICE_NS
#define C2C_UNTRACKED_LONG_SLICE_MAX_NS (100ull * C2C_NSEC_PER_MSEC)

#ifdef C2C_TUNABLES_IN_RODATA
/* The scheduler (const volatile, defined in claim2core.bpf.c) and the proof (const, no value). */
#ifndef C2C_TUNABLE_QUAL
#define C2C_TUNABLE_QUAL const volatile
#endif
extern C2C_TUNABLE_QUAL __u64 c2c_boost_window_ns;
extern C2C_TUNABLE_QUAL __u64 c2c_boost_budget_pct;
extern C2C_TUNABLE_QUAL __u64 c2c_norm_starve_ns;
extern C2C_TUNABLE_QUAL __u64 c2c_bg_starve_ns;
extern C2C_TUNABLE_QUAL __u64 c2c_rescue_slice_ns;
extern C2C_TUNABLE_QUAL __u64 c2c_prefer_spill_ns;
extern C2C_TUNABLE_QUAL __u64 c2c_yield_after_ns;
extern C2C_TUNABLE_QUAL __u64 c2c_untracked_long_slice_ns;
#define C2C_BOOST_WINDOW_NS c2c_boost_window_ns
#define C2C_BOOST_BUDGET_PCT c2c_boost_budget_pct
#define C2C_NORM_STARVE_NS c2c_norm_starve_ns
#define C2C_BG_STARVE_NS c2c_bg_starve_ns
#define C2C_RESCUE_SLICE_NS c2c_rescue_slice_ns
#define C2C_PREFER_SPILL_NS c2c_prefer_spill_ns
#define C2C_YIELD_AFTER_NS c2c_yield_after_ns
#define C2C_UNTRACKED_LONG_SLICE_NS c2c_untracked_long_slice_ns
#else
#define C2C_BOOST_WINDOW_NS C2C_BOOST_WINDOW_DEFAULT_NS
#define C2C_BOOST_BUDGET_PCT C2C_BOOST_BUDGET_DEFAULT_PCT
#define C2C_NORM_STARVE_NS C2C_NORM_STARVE_DEFAULT_NS
#define C2C_BG_STARVE_NS C2C_BG_STARVE_DEFAULT_NS
#define C2C_RESCUE_SLICE_NS C2C_RESCUE_SLICE_DEFAULT_NS
#define C2C_PREFER_SPILL_NS C2C_PREFER_SPILL_DEFAULT_NS
#define C2C_YIELD_AFTER_NS C2C_YIELD_AFTER_DEFAULT_NS
#define C2C_UNTRACKED_LONG_SLICE_NS C2C_UNTRACKED_LONG_SLICE_DEFAULT_NS
#endif
#define C2C_BOOST_BUDGET_NS (C2C_BOOST_WINDOW_NS * C2C_BOOST_BUDGET_PCT / 100ull)

/*@ // Every tunable inside its range: what the loader lets through (src/sched/tunables.cpp).
    predicate c2c_tunables_ok =
      C2C_BOOST_WINDOW_MIN_NS <= C2C_BOOST_WINDOW_NS <= C2C_BOOST_WINDOW_MAX_NS &&
      C2C_BOOST_BUDGET_MIN_PCT <= C2C_BOOST_BUDGET_PCT <= C2C_BOOST_BUDGET_MAX_PCT &&
      C2C_STARVE_MIN_NS <= C2C_NORM_STARVE_NS <= C2C_STARVE_MAX_NS &&
      C2C_STARVE_MIN_NS <= C2C_BG_STARVE_NS <= C2C_STARVE_MAX_NS &&
      C2C_RESCUE_SLICE_MIN_NS <= C2C_RESCUE_SLICE_NS <= C2C_RESCUE_SLICE_MAX_NS &&
      C2C_PREFER_SPILL_NS <= C2C_WAIT_BOUND_MAX_NS && C2C_YIELD_AFTER_NS <= C2C_WAIT_BOUND_MAX_NS &&
      C2C_UNTRACKED_LONG_SLICE_MIN_NS <= C2C_UNTRACKED_LONG_SLICE_NS <= C2C_UNTRACKED_LONG_SLICE_MAX_NS;
*/
/*
 * A custom slice is clamped into [C2C_SLICE_MIN_NS, C2C_SLICE_MAX_NS], the bounds the core
 * validates policies against (c2c::kMinSliceNs, kMaxSliceNs; model/in_step_test.cpp): a slice the
 * core accepts runs as written. (It was 100 us here, so a 10-99 us policy silently got 100 us.)
 */
#define C2C_SLICE_MIN_NS (10ull * C2C_NSEC_PER_USEC)
#define C2C_SLICE_MAX_NS (100ull * C2C_NSEC_PER_MSEC)

/* The shared dispatch queues (DSQ ids). */
#define C2C_DSQ_NONE 0
#define C2C_DSQ_HI 1
#define C2C_DSQ_NORM 2
#define C2C_DSQ_BG 3

/*
 * The CPU loop: an open-coded BPF iterator in the scheduler (the verifier checks the body once
 * instead of unrolling up to C2C_MAX_CPUS iterations), a plain loop for the host and Frama-C.
 */
#if defined(__VMLINUX_H__) && defined(bpf_for)
#define C2C_FOR_CPU(c, nr) bpf_for(c, 0, nr)
#else
#define C2C_FOR_CPU(c, nr) for ((c) = 0; (c) < (__s32)(nr); (c)++)
#endif

/*@ // c is a member of the CPU mask m (C2C_CPUMASK_WORDS words of 64 CPUs).
    predicate c2c_in(__u64 *m, integer c) =
      0 <= c < C2C_MAX_CPUS && ((m[c / 64] >> (c % 64)) & 1) == 1;
    predicate c2c_mask_ok(__u64 *m) = \valid_read(m + (0 .. C2C_CPUMASK_WORDS - 1));
    // the class a policy may boost (spec/state-machine.md, execution classes)
    predicate c2c_boost_class(integer cls) =
      cls == C2C_CLASS_LATENCY_CRITICAL || cls == C2C_CLASS_COMM_PROGRESS;
*/

/* ---- INV-2: task identity ------------------------------------------------------------------ */

/*@ assigns \nothing;
    ensures \result == start_boottime_ns / C2C_NSEC_PER_TICK;
*/
static inline __u64 c2c_start_ticks(__u64 start_boottime_ns)
{
	return start_boottime_ns / C2C_NSEC_PER_TICK;
}

/*
 * Whether the entry v, found under the task's tid, is this task's: it names the task's start
 * time (a tid reused by a later task keeps the earlier task's entry until user space removes it),
 * the ABI version this scheduler was built for, and a class it knows (INV-2).
 */
/*@ requires \valid_read(v);
    assigns \nothing;
    ensures \result == 1 <==> (v->start_ticks == start_boottime_ns / C2C_NSEC_PER_TICK &&
                               v->abi_version == C2C_ABI_VERSION &&
                               v->exec_class < C2C_NR_CLASSES);
*/
static inline bool c2c_entry_usable(const struct c2c_policy_value *v, __u64 start_boottime_ns)
{
	return v->start_ticks == c2c_start_ticks(start_boottime_ns) &&
	       v->abi_version == C2C_ABI_VERSION && v->exec_class < C2C_NR_CLASSES;
}

/* ---- INV-6: CPU masks and the CPU choice --------------------------------------------------- */

/*@ requires c2c_mask_ok(mask);
    assigns \nothing;
    ensures \result == 1 <==> c2c_in(mask, cpu);
*/
static inline bool c2c_mask_has(const __u64 *mask, __s32 cpu)
{
	__u32 c = (__u32)cpu; /* unsigned: BPF has no signed division */

	if (cpu < 0 || cpu >= (__s32)C2C_MAX_CPUS)
		return false;
	return ((mask[c / 64] >> (c % 64)) & 1) == 1;
}

/* out = a ∩ b, word by word. */
/*@ requires \valid(out + (0 .. C2C_CPUMASK_WORDS - 1));
    requires c2c_mask_ok(a) && c2c_mask_ok(b);
    requires \separated(out + (0 .. C2C_CPUMASK_WORDS - 1), a + (0 .. C2C_CPUMASK_WORDS - 1));
    requires \separated(out + (0 .. C2C_CPUMASK_WORDS - 1), b + (0 .. C2C_CPUMASK_WORDS - 1));
    assigns out[0 .. C2C_CPUMASK_WORDS - 1];
    ensures \forall integer i; 0 <= i < C2C_CPUMASK_WORDS ==> out[i] == (a[i] & b[i]);
    ensures \forall integer c; c2c_in(out, c) <==> (c2c_in(a, c) && c2c_in(b, c));
*/
static inline void c2c_mask_and(__u64 *out, const __u64 *a, const __u64 *b)
{
	__u32 i;

	/*@ loop invariant 0 <= i <= C2C_CPUMASK_WORDS;
	    loop invariant \forall integer j; 0 <= j < i ==> out[j] == (a[j] & b[j]);
	    loop assigns i, out[0 .. C2C_CPUMASK_WORDS - 1];
	    loop variant C2C_CPUMASK_WORDS - i;
	*/
	for (i = 0; i < C2C_CPUMASK_WORDS; i++)
		out[i] = a[i] & b[i];
}

/* Whether a names a CPU outside b. */
/*@ requires c2c_mask_ok(a) && c2c_mask_ok(b);
    assigns \nothing;
    ensures \result == 0 ==> \forall integer c; c2c_in(a, c) ==> c2c_in(b, c);
*/
static inline bool c2c_mask_outside(const __u64 *a, const __u64 *b)
{
	__u32 i;

	/*@ loop invariant 0 <= i <= C2C_CPUMASK_WORDS;
	    loop invariant \forall integer j; 0 <= j < i ==> (a[j] & b[j]) == a[j];
	    loop assigns i;
	    loop variant C2C_CPUMASK_WORDS - i;
	*/
	for (i = 0; i < C2C_CPUMASK_WORDS; i++)
		if ((a[i] & b[i]) != a[i])
			return true;
	return false;
}

/*
 * The masks a policy may place its task in: allowed = the policy's allowed CPUs (all CPUs when it
 * names none) that the task's own cpumask (p->cpus_ptr) permits; preferred = the policy's
 * preferred CPUs inside that (all of allowed when it prefers none). Returns whether the policy named a CPU the task may not use (counted
 * as cpumask_rejections). After this, preferred ⊆ allowed ⊆ task (INV-6), whatever the entry says.
 */
/*@ requires \valid_read(v);
    requires c2c_mask_ok(task);
    requires \valid(allowed + (0 .. C2C_CPUMASK_WORDS - 1));
    requires \valid(preferred + (0 .. C2C_CPUMASK_WORDS - 1));
    requires \separated(allowed + (0 .. C2C_CPUMASK_WORDS - 1), preferred + (0 .. C2C_CPUMASK_WORDS - 1),
                        task + (0 .. C2C_CPUMASK_WORDS - 1), v);
    assigns allowed[0 .. C2C_CPUMASK_WORDS - 1], preferred[0 .. C2C_CPUMASK_WORDS - 1];
    ensures \forall integer c; c2c_in(preferred, c) ==> c2c_in(allowed, c);
    ensures \forall integer c; c2c_in(allowed, c) ==> c2c_in(task, c);
    ensures (v->flags & C2C_F_ALLOWED_CPUS) != 0 ==>
              \forall integer c; c2c_in(allowed, c) <==> (c2c_in(&v->allowed_cpus[0], c) && c2c_in(task, c));
    ensures (v->flags & C2C_F_ALLOWED_CPUS) == 0 ==> \forall integer c; c2c_in(allowed, c) <==> c2c_in(task, c);
    ensures (v->flags & C2C_F_PREFERRED_CPUS) == 0 ==> \forall integer c; c2c_in(preferred, c) <==> c2c_in(allowed, c);
*/
static inline bool c2c_policy_masks(const struct c2c_policy_value *v, const __u64 *task,
				    __u64 *allowed, __u64 *preferred)
{
	bool rejected = false;

	if (v->flags & C2C_F_ALLOWED_CPUS) {
		rejected = c2c_mask_outside(v->allowed_cpus, task);
		c2c_mask_and(allowed, v->allowed_cpus, task);
	} else {
		c2c_mask_and(allowed, task, task);
	}
	if (v->flags & C2C_F_PREFERRED_CPUS) {
		rejected = c2c_mask_outside(v->preferred_cpus, task) || rejected;
		c2c_mask_and(preferred, v->preferred_cpus, allowed);
	} else {
		c2c_mask_and(preferred, allowed, allowed);
	}
	return rejected;
}

/*
 * A CPU of mask (already inside the task's cpumask): the first idle one, else prev_cpu if it is
 * in mask, else the first one; -1 if mask is empty. *idle says whether the choice is idle. CPUs
 * at or past nr (the kernel's nr_cpu_ids) are not considered.
 */
/*@ requires c2c_mask_ok(mask) && c2c_mask_ok(idle_mask);
    requires \valid(idle);
    requires \separated(idle, mask + (0 .. C2C_CPUMASK_WORDS - 1), idle_mask + (0 .. C2C_CPUMASK_WORDS - 1));
    assigns *idle;
    ensures \result == -1 || (0 <= \result < nr && c2c_in(mask, \result));
    ensures *idle == 1 ==> c2c_in(idle_mask, \result);
    ensures \result == -1 ==> \forall integer c; 0 <= c < nr ==> !c2c_in(mask, c);
    ensures (\exists integer c; 0 <= c < nr && c2c_in(mask, c) && c2c_in(idle_mask, c)) ==> *idle == 1;
*/
static inline __s32 c2c_choose_cpu(const __u64 *mask, const __u64 *idle_mask, __s32 prev_cpu, __u32 nr,
				   bool *idle)
{
	__s32 first = -1, cpu;
	bool prev_ok = false;

	*idle = false;
	if (nr > C2C_MAX_CPUS)
		nr = C2C_MAX_CPUS;
	/*@ loop invariant 0 <= cpu <= nr;
	    loop invariant first == -1 || (0 <= first < nr && c2c_in(mask, first));
	    loop invariant prev_ok == 1 ==> (0 <= prev_cpu < nr && c2c_in(mask, prev_cpu));
	    loop invariant *idle == 0;
	    loop invariant first == -1 ==> \forall integer c; 0 <= c < cpu ==> !c2c_in(mask, c);
	    loop invariant \forall integer c; 0 <= c < cpu ==> !(c2c_in(mask, c) && c2c_in(idle_mask, c));
	    loop assigns cpu, first, prev_ok;
	    loop variant nr - cpu;
	*/
	C2C_FOR_CPU(cpu, nr) {
		if (!c2c_mask_has(mask, cpu))
			continue;
		if (c2c_mask_has(idle_mask, cpu)) {
			*idle = true;
			return cpu;
		}
		if (cpu == prev_cpu)
			prev_ok = true;
		if (first < 0)
			first = cpu;
	}
	if (prev_ok)
		return prev_cpu;
	return first;
}

/*
 * Preference (issue #16): a task whose policy names preferred CPUs (the CPUs local to its claimed
 * devices) runs there. Another CPU of allowed takes it only once it has waited this long for a
 * preferred one, so a busy preferred CPU delays it by at most about this bound; a CPU outside
 * allowed never does (INV-6). 2 ms: shorter than the default slice (3 ms), so a task queued
 * behind a CPU hog on its preferred CPU does not wait the whole slice.
 */

/*
 * Whether cpu may take a queued task whose policy masks are allowed and preferred (from
 * c2c_policy_masks) after it waited waited_ns: a preferred CPU of allowed always, another CPU of
 * allowed once the wait passed C2C_PREFER_SPILL_NS, a CPU outside allowed never (INV-6).
 */
/*@ requires c2c_mask_ok(allowed) && c2c_mask_ok(preferred);
    assigns \nothing;
    ensures \result == 1 ==> c2c_in(allowed, cpu);
    ensures \result == 1 && !c2c_in(preferred, cpu) ==> waited_ns > C2C_PREFER_SPILL_NS;
    ensures c2c_in(allowed, cpu) && (c2c_in(preferred, cpu) || waited_ns > C2C_PREFER_SPILL_NS) ==> \result == 1;
*/
static inline bool c2c_may_run_on(const __u64 *allowed, const __u64 *preferred, __s32 cpu, __u64 waited_ns)
{
	if (!c2c_mask_has(allowed, cpu))
		return false;
	return c2c_mask_has(preferred, cpu) || waited_ns > C2C_PREFER_SPILL_NS;
}

/*
 * The wakeup's CPU for a task with policy masks (preferred ⊆ allowed): an idle CPU of preferred;
 * else, if it waited past C2C_PREFER_SPILL_NS or preferred has no CPU, an idle CPU of allowed;
 * else a preferred CPU to queue for (prev_cpu if it is one); else a CPU of allowed; -1 if allowed
 * is empty. An idle CPU outside preferred is not taken before the bound: that is what made a
 * task that preferred CPU 1 run on CPU 0 as often as with no policy. *idle says whether the
 * choice is idle.
 */
/*@ requires c2c_mask_ok(allowed) && c2c_mask_ok(preferred) && c2c_mask_ok(idle_mask);
    requires \valid(idle);
    requires \separated(idle, allowed + (0 .. C2C_CPUMASK_WORDS - 1), preferred + (0 .. C2C_CPUMASK_WORDS - 1),
                        idle_mask + (0 .. C2C_CPUMASK_WORDS - 1));
    requires \forall integer c; c2c_in(preferred, c) ==> c2c_in(allowed, c);
    assigns *idle;
    ensures \result == -1 || (0 <= \result < nr && c2c_in(allowed, \result));
    ensures *idle == 1 ==> c2c_in(idle_mask, \result);
    ensures c2c_prefer_spec: \result != -1 && !c2c_in(preferred, \result) ==>
              waited_ns > C2C_PREFER_SPILL_NS || \forall integer c; 0 <= c < nr ==> !c2c_in(preferred, c);
    ensures (\exists integer c; 0 <= c < nr && c2c_in(preferred, c) && c2c_in(idle_mask, c)) ==>
              *idle == 1 && c2c_in(preferred, \result);
    ensures \result == -1 ==> \forall integer c; 0 <= c < nr ==> !c2c_in(allowed, c);
*/
static inline __s32 c2c_choose_placed(const __u64 *allowed, const __u64 *preferred, const __u64 *idle_mask,
				      __s32 prev_cpu, __u32 nr, __u64 waited_ns, bool *idle)
{
	bool idle2 = false;
	__s32 cpu = c2c_choose_cpu(preferred, idle_mask, prev_cpu, nr, idle), c2;

	if (*idle)
		return cpu;
	if (cpu >= 0 && waited_ns <= C2C_PREFER_SPILL_NS)
		return cpu;
	c2 = c2c_choose_cpu(allowed, idle_mask, prev_cpu, nr, &idle2);
	if (idle2 || cpu < 0) {
		*idle = idle2;
		return c2;
	}
	return cpu;
}

/*
 * For a boosted wakeup that found no idle CPU: cpu if it runs an unboosted task (preempting that
 * costs nobody a boost), else the first CPU of the task's cpumask that runs no boosted task,
 * policy (allowed) CPUs first; else cpu. cpu is a choice already inside task (or -1).
 */
/*@ requires c2c_mask_ok(task) && c2c_mask_ok(allowed) && c2c_mask_ok(boosted);
    requires cpu == -1 || c2c_in(task, cpu);
    assigns \nothing;
    ensures \result == cpu || (0 <= \result < nr && c2c_in(task, \result) && !c2c_in(boosted, \result));
*/
static inline __s32 c2c_choose_preemptible(const __u64 *task, const __u64 *allowed, const __u64 *boosted,
					   __s32 cpu, __u32 nr)
{
	__s32 c, fallback = -1;

	if (cpu >= 0 && !c2c_mask_has(boosted, cpu))
		return cpu;
	if (nr > C2C_MAX_CPUS)
		nr = C2C_MAX_CPUS;
	/*@ loop invariant 0 <= c <= nr;
	    loop invariant fallback == -1 || (0 <= fallback < nr && c2c_in(task, fallback) && !c2c_in(boosted, fallback));
	    loop assigns c, fallback;
	    loop variant nr - c;
	*/
	C2C_FOR_CPU(c, nr) {
		if (!c2c_mask_has(task, c) || c2c_mask_has(boosted, c))
			continue;
		if (c2c_mask_has(allowed, c))
			return c;
		if (fallback < 0)
			fallback = c;
	}
	return fallback >= 0 ? fallback : cpu;
}

/* ---- INV-8: boost leases, the boost budget, starvation bounds -------------------------------- */

/* Whether v (a usable entry) asks for a boost: the boost flag in a class that may be boosted. */
/*@ requires \valid_read(v);
    assigns \nothing;
    ensures \result == 1 <==> ((v->flags & C2C_F_BOOST) != 0 && c2c_boost_class(v->exec_class));
*/
static inline bool c2c_boost_requested(const struct c2c_policy_value *v)
{
	if (!(v->flags & C2C_F_BOOST))
		return false;
	return v->exec_class == C2C_CLASS_LATENCY_CRITICAL || v->exec_class == C2C_CLASS_COMM_PROGRESS;
}

/* Whether v (a usable entry) grants a boost at now: requested, and the lease is live (INV-8). */
/*@ requires \valid_read(v);
    assigns \nothing;
    ensures \result == 1 <==> ((v->flags & C2C_F_BOOST) != 0 && c2c_boost_class(v->exec_class) &&
                               now < v->boost_until_ns);
*/
static inline bool c2c_lease_live(const struct c2c_policy_value *v, __u64 now)
{
	return c2c_boost_requested(v) && now < v->boost_until_ns;
}

/* One CPU's boost account: boosted run time charged in the window that began at window_start. */
struct c2c_budget {
	__u64 window_start;
	__u64 boosted_ns;
};

/*
 * Starts a new window once the current one is over (or the clock is before it, which a
 * monotonic per-CPU clock never is; handled so no subtraction can wrap).
 */
/*@ requires \valid(b);
    assigns b->window_start, b->boosted_ns;
    ensures \old(b->window_start) <= now < \old(b->window_start) + C2C_BOOST_WINDOW_NS ==>
              b->window_start == \old(b->window_start) && b->boosted_ns == \old(b->boosted_ns);
    ensures !(\old(b->window_start) <= now < \old(b->window_start) + C2C_BOOST_WINDOW_NS) ==>
              b->window_start == now && b->boosted_ns == 0;
*/
static inline void c2c_budget_roll(struct c2c_budget *b, __u64 now)
{
	if (now < b->window_start || now - b->window_start >= C2C_BOOST_WINDOW_NS) {
		b->window_start = now;
		b->boosted_ns = 0;
	}
}

/* Whether the window's budget has room for a boosted run (INV-8: at most the budget per window). */
/*@ requires \valid_read(b);
    requires c2c_tunables_ok;
    assigns \nothing;
    ensures \result == 1 <==> b->boosted_ns < C2C_BOOST_BUDGET_NS;
*/
static inline bool c2c_budget_left(const struct c2c_budget *b)
{
	return b->boosted_ns < C2C_BOOST_BUDGET_NS;
}

/* Charges the boosted run time from since to now; saturates instead of wrapping. */
/*@ requires \valid(b);
    assigns b->boosted_ns;
    ensures since <= now && \old(b->boosted_ns) + (now - since) <= 0xffffffffffffffff ==>
              b->boosted_ns == \old(b->boosted_ns) + (now - since);
    ensures b->boosted_ns >= \old(b->boosted_ns);
*/
static inline void c2c_budget_charge(struct c2c_budget *b, __u64 since, __u64 now)
{
	__u64 d = now > since ? now - since : 0;

	if (b->boosted_ns > ~(__u64)0 - d)
		b->boosted_ns = ~(__u64)0;
	else
		b->boosted_ns += d;
}

/* Whether a queue holding queued tasks, last empty or served at served_at, is past its bound. */
/*@ assigns \nothing;
    ensures \result == 1 <==> (queued > 0 && served_at < now && now - served_at > bound);
*/
static inline bool c2c_starved(__s32 queued, __u64 served_at, __u64 now, __u64 bound)
{
	return queued > 0 && now > served_at && now - served_at > bound;
}

/*
 * Which shared queue dispatch must serve before anything else (INV-8): DSQ_NORM past its bound,
 * else DSQ_BG past its bound, else none. Boosted tasks and DSQ_HI come after a rescue, so every
 * queue is served once it waited its bound.
 */
/*@ assigns \nothing;
    ensures c2c_starved_spec: (norm_queued > 0 && norm_served < now && now - norm_served > C2C_NORM_STARVE_NS)
              ==> \result == C2C_DSQ_NORM;
    ensures (bg_queued > 0 && bg_served < now && now - bg_served > C2C_BG_STARVE_NS) ==>
              \result == C2C_DSQ_NORM || \result == C2C_DSQ_BG;
    ensures \result == C2C_DSQ_NONE || \result == C2C_DSQ_NORM || \result == C2C_DSQ_BG;
*/
static inline __u32 c2c_rescue_dsq(__s32 norm_queued, __u64 norm_served, __s32 bg_queued, __u64 bg_served,
				   __u64 now)
{
	if (c2c_starved(norm_queued, norm_served, now, C2C_NORM_STARVE_NS))
		return C2C_DSQ_NORM;
	if (c2c_starved(bg_queued, bg_served, now, C2C_BG_STARVE_NS))
		return C2C_DSQ_BG;
	return C2C_DSQ_NONE;
}

/*
 * Whether a run of class cls gives its CPU up to a higher class that is waiting (INV-8; the
 * scheduler's tick ends it once that class waited C2C_YIELD_AFTER_NS): a background run does, as
 * the kernel's fair class preempts SCHED_IDLE, except one a starvation rescue gave the CPU: else
 * a busy node could cut every rescue short, and the background would starve in spite of it.
 */
/*@ assigns \nothing;
    ensures \result == 1 <==> (cls == C2C_CLASS_BACKGROUND && !rescued);
*/
static inline bool c2c_yields_to_waiting(__u32 cls, bool rescued)
{
	return cls == C2C_CLASS_BACKGROUND && !rescued;
}

/* ---- slices --------------------------------------------------------------------------------- */

/*@ assigns \nothing;
    ensures cls == C2C_CLASS_LATENCY_CRITICAL ==> \result == C2C_SLICE_LATENCY_CRITICAL_NS;
    ensures cls == C2C_CLASS_COMM_PROGRESS ==> \result == C2C_SLICE_COMM_PROGRESS_NS;
    ensures cls == C2C_CLASS_THROUGHPUT ==> \result == C2C_SLICE_THROUGHPUT_NS;
    ensures cls == C2C_CLASS_BACKGROUND ==> \result == C2C_SLICE_BACKGROUND_NS;
    ensures !(1 <= cls <= 4) ==> \result == C2C_DEFAULT_SLICE_NS;
*/
static inline __u64 c2c_class_slice(__u32 cls)
{
	switch (cls) {
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
 * The slice of a task with the usable entry v, or of an unmatched task (v NULL): the policy's
 * custom slice clamped into [C2C_SLICE_MIN_NS, C2C_SLICE_MAX_NS], else the class default.
 */
/*@ requires v == \null || \valid_read(v);
    assigns \nothing;
    ensures C2C_SLICE_MIN_NS <= \result <= C2C_SLICE_MAX_NS;
    ensures v == \null ==> \result == C2C_DEFAULT_SLICE_NS;
*/
static inline __u64 c2c_slice(const struct c2c_policy_value *v)
{
	__u64 s;

	if (!v)
		return C2C_DEFAULT_SLICE_NS;
	if (!(v->flags & C2C_F_CUSTOM_SLICE) || !v->slice_ns)
		return c2c_class_slice(v->exec_class);
	s = v->slice_ns;
	if (s < C2C_SLICE_MIN_NS)
		s = C2C_SLICE_MIN_NS;
	if (s > C2C_SLICE_MAX_NS)
		s = C2C_SLICE_MAX_NS;
	return s;
}

/*
 * The slice of an untracked task's run (no policy entry). While the policy map holds an entry,
 * the short default (C2C_DEFAULT_SLICE_NS), so that a tracked task waking behind CPU hogs waits
 * milliseconds, not a long slice per hog. On a node without entries that short slice protects
 * nobody and only multiplies the switches: untracked runs then get scx_simple's slice
 * (C2C_UNTRACKED_LONG_SLICE_NS, the kernel's SCX_SLICE_DFL), and a node without policies is
 * scheduled as scx_simple schedules it (issue #16: hackbench switched 1.5x as often as under
 * scx_simple with the short slice).
 */

/*@ assigns \nothing;
    ensures c2c_untracked_short: policies_present ==> \result == C2C_DEFAULT_SLICE_NS;
    ensures c2c_untracked_long: !policies_present ==> \result == C2C_UNTRACKED_LONG_SLICE_NS;
*/
static inline __u64 c2c_untracked_slice(bool policies_present)
{
	return policies_present ? C2C_DEFAULT_SLICE_NS : C2C_UNTRACKED_LONG_SLICE_NS;
}

/*
 * An entry appeared while an untracked run holds a long slice: the run is cut back to the default
 * slice (what it would have had with the entry there from its start), ending at once if it
 * already ran that long. left: its slice left; ran: how long it has run.
 */
/*@ assigns \nothing;
    ensures \result <= left && \result <= C2C_DEFAULT_SLICE_NS;
    ensures c2c_cut_spent: ran >= C2C_DEFAULT_SLICE_NS ==> \result == 0;
    ensures ran < C2C_DEFAULT_SLICE_NS && C2C_DEFAULT_SLICE_NS - ran <= left ==>
              \result == C2C_DEFAULT_SLICE_NS - ran;
*/
static inline __u64 c2c_cut_untracked(__u64 left, __u64 ran)
{
	__u64 rest = ran >= C2C_DEFAULT_SLICE_NS ? 0 : C2C_DEFAULT_SLICE_NS - ran;

	return rest < left ? rest : left;
}

/* ---- boost inheritance: the wakee of a boosted run (issue 43 item 3) ------------------------ */

/*
 * A latency-critical thread that wakes another and then waits for it (vLLM's busy loop and its
 * Workers) is only as fast as that wakee. A policy may opt in (C2C_F_WAKEE_BOOST, depth 1;
 * with C2C_F_WAKEE_DEPTH2, depth 2): a task woken by a boosted run of its task gets a boost for
 * its next run, bounded on every side:
 *   - depth: the wakee of a run boosted by its own lease has depth 1, the wakee of an inherited
 *     run depth + 1, never more than the chain's configured depth nor C2C_INHERIT_MAX_DEPTH (2);
 *   - lease: its own, the waker's deadline but at most C2C_INHERIT_LEASE_NS from now, and its run
 *     is no longer than what that lease leaves (c2c_inherit_slice);
 *   - budget: granted only while the boost budget of the CPU it will run on has time left, and the
 *     run is charged to it as any boosted run (INV-8);
 *   - CPUs: granted only on a CPU of the wakee's own allowed CPUs (its policy's allowed cut to its
 *     cpumask, or its cpumask; INV-6).
 * The idea is priority inheritance (rt_mutex's boosting of a lock owner), bounded as a lease
 * is here; the waker's side is what the scheduler saw of its run: boosted, at which depth, with
 * which chain limit and deadline (struct c2c_inherit).
 */
#define C2C_INHERIT_MAX_DEPTH 2u
#define C2C_INHERIT_LEASE_NS C2C_SLICE_LATENCY_CRITICAL_NS

/*@ // the depth a policy's flags configure (0: off)
    logic integer c2c_inherit_flags_depth(integer flags) =
      (flags & C2C_F_WAKEE_BOOST) == 0 ? 0 : ((flags & C2C_F_WAKEE_DEPTH2) != 0 ? 2 : 1);
*/

/*
 * The chain depth a run boosted by its own entry v passes on: 0 (off) unless v opted in and asks
 * for a boost (an entry that cannot boost has no boosted run to pass on).
 */
/*@ requires \valid_read(v);
    assigns \nothing;
    ensures \result <= C2C_INHERIT_MAX_DEPTH;
    ensures c2c_inherit_opt_in: !((v->flags & C2C_F_BOOST) != 0 && c2c_boost_class(v->exec_class)) ==> \result == 0;
    ensures (v->flags & C2C_F_WAKEE_BOOST) == 0 ==> \result == 0;
    ensures ((v->flags & C2C_F_BOOST) != 0 && c2c_boost_class(v->exec_class)) ==>
              \result == c2c_inherit_flags_depth(v->flags);
*/
static inline __u32 c2c_inherit_conf(const struct c2c_policy_value *v)
{
	if (!c2c_boost_requested(v) || !(v->flags & C2C_F_WAKEE_BOOST))
		return 0;
	return (v->flags & C2C_F_WAKEE_DEPTH2) ? 2 : 1;
}

/*
 * The depth a wakee inherits from a waker whose run is boosted (waker_boosted) at depth
 * waker_depth (0: by its own lease) in a chain configured for max_depth: waker_depth + 1 while
 * that stays within max_depth and C2C_INHERIT_MAX_DEPTH; 0: nothing is inherited.
 */
/*@ assigns \nothing;
    ensures c2c_inherit_bounded: \result <= C2C_INHERIT_MAX_DEPTH && \result <= max_depth;
    ensures \result != 0 ==> waker_boosted && \result == waker_depth + 1;
    ensures (waker_boosted && waker_depth < max_depth && waker_depth < C2C_INHERIT_MAX_DEPTH) ==>
              \result == waker_depth + 1;
*/
static inline __u32 c2c_inherit_depth(bool waker_boosted, __u32 waker_depth, __u32 max_depth)
{
	if (!waker_boosted || waker_depth >= max_depth || waker_depth >= C2C_INHERIT_MAX_DEPTH)
		return 0;
	return waker_depth + 1;
}

/*
 * The wakee's own lease: the waker's deadline, but at most C2C_INHERIT_LEASE_NS from now (no
 * wrap near the clock's end). Live (> now) exactly when the waker's is.
 */
/*@ assigns \nothing;
    ensures c2c_inherit_lease_own: \result <= waker_until;
    ensures now <= 0xffffffffffffffff - C2C_INHERIT_LEASE_NS ==> \result <= now + C2C_INHERIT_LEASE_NS;
    ensures \result > now <==> waker_until > now;
*/
static inline __u64 c2c_inherit_until(__u64 now, __u64 waker_until)
{
	__u64 cap = now > ~(__u64)0 - C2C_INHERIT_LEASE_NS ? ~(__u64)0 : now + C2C_INHERIT_LEASE_NS;

	return waker_until < cap ? waker_until : cap;
}

/* What a wakee was offered by its waker at its wakeup (the scheduler keeps it in the wakee's context). */
struct c2c_inherit {
	__u64 until;  /* its lease (c2c_inherit_until) */
	__u32 from;   /* the waker's tid */
	__u32 depth;  /* c2c_inherit_depth: 0 nothing offered */
	__u32 max;    /* the chain's configured depth, passed on to its own wakees */
};

/*
 * Whether the offer o boosts the wakee's run on cpu at now: an offer within the depth bounds, its
 * lease live, cpu one of the wakee's allowed CPUs (INV-6), and the boost budget of cpu not spent
 * (budget_left: c2c_budget_left of that CPU's account; INV-8).
 */
/*@ requires \valid_read(o);
    requires c2c_mask_ok(allowed);
    assigns \nothing;
    ensures c2c_inherit_grant_spec: \result == 1 <==>
              (1 <= o->depth <= C2C_INHERIT_MAX_DEPTH && o->depth <= o->max && now < o->until &&
               c2c_in(allowed, cpu) && budget_left);
*/
static inline bool c2c_inherit_grant(const struct c2c_inherit *o, __u64 now, const __u64 *allowed, __s32 cpu,
				     bool budget_left)
{
	if (o->depth == 0 || o->depth > C2C_INHERIT_MAX_DEPTH || o->depth > o->max)
		return false;
	if (now >= o->until)
		return false;
	if (!c2c_mask_has(allowed, cpu))
		return false;
	return budget_left;
}

/* The slice of an inherited run: its own slice, but no longer than its lease leaves. */
/*@ assigns \nothing;
    ensures \result <= slice;
    ensures c2c_inherit_slice_in_lease: now < until ==> \result <= until - now;
*/
static inline __u64 c2c_inherit_slice(__u64 slice, __u64 now, __u64 until)
{
	__u64 left = until > now ? until - now : 0;

	return slice < left ? slice : left;
}

/* ---- the default path: a sleeper against CPU hogs (issue 43) ------------------------------- */

/*
 * How far before vtime_now (the largest virtual time that started running) a task that slept is
 * placed in DSQ_NORM: its bounded sleeper credit, EEVDF's lag in spirit (place_entity keeps a
 * woken entity's lag, clamped to a bound) and scx_simple's floor (vtime_now - SCX_SLICE_DFL). It
 * is the longest slice a task of DSQ_NORM runs by default (an untracked task on a node without
 * entries, a throughput task): the hogs queued there began their turn at most about that far
 * before vtime_now, so a sleeper lands ahead of them. With 3 ms (the default slice, until issue
 * 43) beside hogs running 20 ms slices, a woken Worker landed behind the hogs that were waiting
 * their turn and waited one or two hog slices more (tests/vm/README.md, "Where a woken Worker
 * waits"). Bounded: sleeping longer buys nothing more, so a sleeper cannot bank CPU time, and
 * the tasks' shares stay those of their weights (a task that keeps running never gets a credit).
 */
#define C2C_WAKE_CREDIT_NS C2C_UNTRACKED_LONG_SLICE_NS

/*
 * A task's virtual time as it is queued in DSQ_NORM: its own, or vtime_now - C2C_WAKE_CREDIT_NS
 * if that is later (0 while vtime_now is below the credit).
 */
/*@ assigns \nothing;
    ensures c2c_wake_own: \result >= vtime;
    ensures c2c_wake_bounded: vtime_now >= C2C_WAKE_CREDIT_NS ==> \result >= vtime_now - C2C_WAKE_CREDIT_NS;
    ensures c2c_wake_no_gift: \result == vtime ||
              (vtime_now >= C2C_WAKE_CREDIT_NS && \result == vtime_now - C2C_WAKE_CREDIT_NS);
*/
static inline __u64 c2c_wake_vtime(__u64 vtime, __u64 vtime_now)
{
	__u64 floor = vtime_now >= C2C_WAKE_CREDIT_NS ? vtime_now - C2C_WAKE_CREDIT_NS : 0;

	return vtime < floor ? floor : vtime;
}

/*
 * Wakeup preemption (issue 43): a task woken into DSQ_NORM takes a CPU from a run of DSQ_NORM
 * (an unboosted normal, throughput or unmatched task; never a boosted, latency-critical,
 * background or rescued run) whose virtual time is ahead of the woken task's by more than
 * C2C_PREEMPT_GAP_NS, once that run has lasted C2C_PREEMPT_MIN_TICKS ticks. A task woken into
 * DSQ_HI (an unboosted latency-critical or comm-progress task: no lease, or its CPU's boost
 * budget spent) takes it whatever the virtual times (above: the class order dispatch serves
 * anyway); otherwise such a task waited for a hog's slice while an unmatched sleeper preempted
 * it, a class inversion. Without it a woken
 * Worker waited for a hog's slice to end (20 ms on a node without entries). EEVDF preempts the
 * current entity for a woken one with an earlier deadline once the current one has had its
 * slice (RUN_TO_PARITY); scx_lavd kicks the CPU of the least latency-critical running task. The
 * gap keeps tasks of about the same virtual time (hackbench's) from preempting each other at
 * every wakeup; the minimum run keeps a hog from losing every run at its start (a preemption
 * storm). run_vtime is the run's virtual time at its start (a lower bound of its virtual time
 * now), ran_ticks how many jiffies began since it started.
 */
#define C2C_PREEMPT_GAP_NS C2C_DEFAULT_SLICE_NS
#define C2C_PREEMPT_MIN_TICKS 1ull

/*@ assigns \nothing;
    ensures c2c_preempt_spec: \result == 1 <==> (preemptible && ran_ticks >= C2C_PREEMPT_MIN_TICKS &&
                               (above || (run_vtime > woken_vtime && run_vtime - woken_vtime > C2C_PREEMPT_GAP_NS)));
*/
static inline bool c2c_wakeup_preempts(__u64 woken_vtime, bool above, __u64 run_vtime, __u64 ran_ticks,
				       bool preemptible)
{
	if (!preemptible || ran_ticks < C2C_PREEMPT_MIN_TICKS)
		return false;
	if (above)
		return true;
	return run_vtime > woken_vtime && run_vtime - woken_vtime > C2C_PREEMPT_GAP_NS;
}

/*
 * Whether a run of class cls may be preempted by a woken task of DSQ_NORM: a run of DSQ_NORM
 * itself (unmatched, normal, throughput), unboosted, and not given the CPU by a starvation rescue
 * (INV-8: a rescued run is short and must not be cut, or a busy node could starve the queue the
 * rescue served). Latency-critical and comm-progress runs are above DSQ_NORM; a background run
 * yields to a waiting higher class at the tick already (c2c_yields_to_waiting).
 */
/*@ assigns \nothing;
    ensures c2c_preemptible_spec: \result == 1 <==> (!boosted && !rescued &&
              (cls == C2C_CLASS_UNMATCHED || cls == C2C_CLASS_THROUGHPUT || cls == C2C_CLASS_NORMAL));
*/
static inline bool c2c_run_preemptible(__u32 cls, bool boosted, bool rescued)
{
	if (boosted || rescued)
		return false;
	return cls == C2C_CLASS_UNMATCHED || cls == C2C_CLASS_THROUGHPUT || cls == C2C_CLASS_NORMAL;
}

/*
 * The tick's end of a run for a sleeper that waits far behind it (issue 43): a preemptible run of
 * DSQ_NORM (c2c_run_preemptible: never boosted, rescued or of another class) ends at a tick once
 * it has lasted C2C_PARITY_MIN_NS and its virtual time now is more than C2C_SLEEPER_GAP_NS ahead
 * of the first task waiting in DSQ_NORM. This is what serves a sleeper on a node without entries,
 * where the wakeup's kick (c2c_wakeup_preempts) is off: the kick at every wakeup of every sleeper
 * of the node (640 a second in the 2026-12-07 04:21 boot) worsened the tail there, while the tick
 * bounds the ends it makes to one per tick and CPU, each after the run had its minimum. A sleeper
 * queued with its credit (c2c_wake_vtime: up to C2C_WAKE_CREDIT_NS behind vtime_now) waits for the
 * next tick past the run's minimum, not for the rest of a 20 ms hog slice: the run it ends began
 * at about vtime_now, so it is the whole credit ahead of such a sleeper. The gap is half the
 * credit: CPU hogs of one weight, which a run ends once it is the gap ahead of the waiting one,
 * take turns of about twice the gap, the long slice they had before (a 3 ms gap, turns of 6 ms,
 * cost stress-ng a third of its bogo ops beside the base build in a loaded guest, 2026-12-07
 * 15:15-15:50), and tasks of about the same virtual time (hackbench's) never cut each other.
 * EEVDF does the same by deadline: a woken entity with an earlier deadline preempts the current
 * one once it has had its slice (RUN_TO_PARITY; kernel/sched/fair.c, base_slice 0.75 ms x (1 +
 * ilog2(CPUs))); scx_bpfland bounds every run with a 1 ms slice and orders by a deadline that
 * grows with the time a task ran since it last slept (sched-ext/scx, scheds/rust/scx_bpfland). The
 * code here is our own. ran_ns: how long the run has lasted; run_vtime: its virtual time now (at
 * its start plus what it ran, by weight); head_vtime: the first waiting task's (~0 when none
 * waits, which no run is ahead of).
 */
#define C2C_SLEEPER_GAP_NS (C2C_UNTRACKED_LONG_SLICE_NS / 2)
#define C2C_PARITY_MIN_NS (1ull * C2C_NSEC_PER_MSEC)

/*@ assigns \nothing;
    ensures c2c_tick_cut_spec: \result == 1 <==> (ran_ns >= C2C_PARITY_MIN_NS && run_vtime > head_vtime &&
                                 run_vtime - head_vtime > C2C_SLEEPER_GAP_NS);
*/
static inline bool c2c_tick_ends_run(__u64 ran_ns, __u64 run_vtime, __u64 head_vtime)
{
	if (ran_ns < C2C_PARITY_MIN_NS)
		return false;
	return run_vtime > head_vtime && run_vtime - head_vtime > C2C_SLEEPER_GAP_NS;
}

#endif /* C2C_GUARDS_H */
