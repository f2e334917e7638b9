// Host unit tests of the scheduler's guards (bpf/c2c_guards.h), the same header the BPF program
// compiles: INV-2 (identity), INV-6 (masks, CPU choice), INV-8 (lease, budget, starvation), the
// slice choice and boost inheritance. Each seeded bug of tests/mutants/kernel.tsv fails at least one of them
// (tests/mutants/mutate.py kernel compiles this file against each mutated header).
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>

#include <linux/types.h>

#include "c2c_guards.h"

namespace {

constexpr __u64 kStart = 123 * C2C_NSEC_PER_TICK + 4567;  // start_boottime of "the" task, ns

c2c_policy_value entry(__u8 cls, __u8 flags = 0) {
  c2c_policy_value v{};
  v.start_ticks = kStart / C2C_NSEC_PER_TICK;
  v.abi_version = C2C_ABI_VERSION;
  v.exec_class = cls;
  v.flags = flags;
  return v;
}

struct Mask {
  __u64 w[C2C_CPUMASK_WORDS] = {};
  Mask() = default;
  Mask(std::initializer_list<int> cpus) {
    for (int c : cpus) w[c / 64] |= 1ull << (c % 64);
  }
};

void set_mask(__u64* dst, const Mask& m) {
  for (unsigned i = 0; i < C2C_CPUMASK_WORDS; ++i) dst[i] = m.w[i];
}

// ---- INV-2 ---------------------------------------------------------------------------------

TEST(GuardsIdentity, EntryOfThisTaskIsUsable) {
  const auto v = entry(C2C_CLASS_LATENCY_CRITICAL);
  EXPECT_TRUE(c2c_entry_usable(&v, kStart));
  EXPECT_EQ(c2c_start_ticks(kStart), 123u);
}

TEST(GuardsIdentity, EntryOfAnEarlierTaskWithTheSameTidIsNot) {
  const auto v = entry(C2C_CLASS_LATENCY_CRITICAL);
  EXPECT_FALSE(c2c_entry_usable(&v, kStart + C2C_NSEC_PER_TICK));
  EXPECT_FALSE(c2c_entry_usable(&v, kStart - C2C_NSEC_PER_TICK));
}

TEST(GuardsIdentity, EntryOfAnotherAbiVersionIsNot) {
  for (__u16 abi : {__u16{0}, __u16{C2C_ABI_VERSION - 1}, __u16{C2C_ABI_VERSION + 1}}) {
    auto v = entry(C2C_CLASS_LATENCY_CRITICAL);
    v.abi_version = abi;
    EXPECT_FALSE(c2c_entry_usable(&v, kStart)) << "abi_version " << abi;
  }
}

TEST(GuardsIdentity, EntryOfAnUnknownClassIsNot) {
  auto v = entry(C2C_NR_CLASSES);
  EXPECT_FALSE(c2c_entry_usable(&v, kStart));
  v.exec_class = C2C_NR_CLASSES - 1;
  EXPECT_TRUE(c2c_entry_usable(&v, kStart));
}

// ---- INV-6 ---------------------------------------------------------------------------------

TEST(GuardsMask, MembershipAtWordBoundaries) {
  const Mask m{0, 63, 64, 255};
  for (int c : {0, 63, 64, 255}) EXPECT_TRUE(c2c_mask_has(m.w, c)) << c;
  for (int c : {1, 62, 65, 128, 254}) EXPECT_FALSE(c2c_mask_has(m.w, c)) << c;
}

TEST(GuardsMask, NoCpuPastTheLastWord) {
  // The word after allowed_cpus is preferred_cpus[0]: a bound off by one would read it as CPU 256.
  auto v = entry(C2C_CLASS_NORMAL, C2C_F_ALLOWED_CPUS | C2C_F_PREFERRED_CPUS);
  set_mask(v.allowed_cpus, Mask{255});
  set_mask(v.preferred_cpus, Mask{0});
  volatile __s32 past = C2C_MAX_CPUS;  // read at run time, so the compiler cannot fold the access
  EXPECT_FALSE(c2c_mask_has(v.allowed_cpus, past));
  EXPECT_FALSE(c2c_mask_has(v.allowed_cpus, -1));
  EXPECT_TRUE(c2c_mask_has(v.allowed_cpus, 255));
}

TEST(GuardsMask, PolicyMasksAreCutToTheTaskAndPreferredToAllowed) {
  auto v = entry(C2C_CLASS_LATENCY_CRITICAL, C2C_F_ALLOWED_CPUS | C2C_F_PREFERRED_CPUS);
  set_mask(v.allowed_cpus, Mask{1, 2, 3, 70});
  set_mask(v.preferred_cpus, Mask{0, 3, 200});  // 0 and 200 are not allowed: a bad entry
  const Mask task{0, 1, 3, 70, 200};
  Mask allowed, preferred;
  EXPECT_TRUE(c2c_policy_masks(&v, task.w, allowed.w, preferred.w));  // CPU 2 is outside the task
  for (int c = 0; c < static_cast<int>(C2C_MAX_CPUS); ++c) {
    EXPECT_EQ(c2c_mask_has(allowed.w, c), c == 1 || c == 3 || c == 70) << c;
    EXPECT_EQ(c2c_mask_has(preferred.w, c), c == 3) << c;
  }
}

TEST(GuardsMask, NoPolicyCpusMeansTheTasksOwn) {
  const auto v = entry(C2C_CLASS_NORMAL);
  const Mask task{4, 5};
  Mask allowed, preferred;
  EXPECT_FALSE(c2c_policy_masks(&v, task.w, allowed.w, preferred.w));
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(c2c_mask_has(allowed.w, c), c == 4 || c == 5) << c;
    EXPECT_EQ(c2c_mask_has(preferred.w, c), c == 4 || c == 5) << c;
  }
}

TEST(GuardsChooseCpu, IdleFirstThenPrevThenFirst) {
  const Mask mask{2, 3, 5};
  bool idle = true;
  EXPECT_EQ(c2c_choose_cpu(mask.w, Mask{0, 5}.w, 3, 8, &idle), 5);
  EXPECT_TRUE(idle);
  EXPECT_EQ(c2c_choose_cpu(mask.w, Mask{0}.w, 3, 8, &idle), 3);
  EXPECT_FALSE(idle);
  EXPECT_EQ(c2c_choose_cpu(mask.w, Mask{}.w, 7, 8, &idle), 2);
  EXPECT_FALSE(idle);
  EXPECT_EQ(c2c_choose_cpu(Mask{}.w, Mask{1}.w, 1, 8, &idle), -1);
}

TEST(GuardsChooseCpu, NeverOutsideTheMask) {
  // prev_cpu and the idle CPUs lie outside the mask: the choice must still be a CPU of it.
  const Mask mask{2};
  bool idle = true;
  EXPECT_EQ(c2c_choose_cpu(mask.w, Mask{0, 1, 3}.w, 0, 4, &idle), 2);
  EXPECT_FALSE(idle);
  for (int prev = -1; prev < 4; ++prev) {
    const __s32 c = c2c_choose_cpu(mask.w, Mask{}.w, prev, 4, &idle);
    EXPECT_EQ(c, 2) << "prev " << prev;
  }
}

TEST(GuardsChooseCpu, CpusPastNrAreNotConsidered) {
  bool idle = true;
  EXPECT_EQ(c2c_choose_cpu(Mask{6}.w, Mask{6}.w, 6, 4, &idle), -1);
  EXPECT_FALSE(idle);
}

TEST(GuardsChoosePreemptible, UnboosteCpuOfTheTaskPolicyFirst) {
  const Mask task{0, 1, 2, 3};
  EXPECT_EQ(c2c_choose_preemptible(task.w, Mask{3}.w, Mask{}.w, 1, 4), 1);       // cpu is fine
  EXPECT_EQ(c2c_choose_preemptible(task.w, Mask{3}.w, Mask{1}.w, 1, 4), 3);      // policy CPU
  EXPECT_EQ(c2c_choose_preemptible(task.w, Mask{}.w, Mask{0, 1}.w, 1, 4), 2);    // first unboosted
  EXPECT_EQ(c2c_choose_preemptible(Mask{1}.w, Mask{}.w, Mask{1}.w, 1, 4), 1);    // nothing better
  EXPECT_EQ(c2c_choose_preemptible(Mask{1, 2}.w, Mask{3}.w, Mask{1}.w, 1, 4), 2);  // 3: not the task's
}

// ---- INV-6: the preference inside allowed (issue #16) ------------------------------------------

constexpr __u64 kBound = C2C_PREFER_SPILL_NS;

TEST(GuardsPrefer, APreferredCpuTakesTheTaskAtOnce) {
  const Mask allowed{0, 1}, preferred{1};
  EXPECT_TRUE(c2c_may_run_on(allowed.w, preferred.w, 1, 0));
  EXPECT_TRUE(c2c_may_run_on(allowed.w, preferred.w, 1, 10 * kBound));
}

TEST(GuardsPrefer, AnotherAllowedCpuOnlyPastTheBound) {
  const Mask allowed{0, 1}, preferred{1};
  EXPECT_FALSE(c2c_may_run_on(allowed.w, preferred.w, 0, 0));
  EXPECT_FALSE(c2c_may_run_on(allowed.w, preferred.w, 0, kBound));  // at the bound: still waits
  EXPECT_TRUE(c2c_may_run_on(allowed.w, preferred.w, 0, kBound + 1));
}

TEST(GuardsPrefer, NeverOutsideAllowedWhateverTheWait) {
  const Mask allowed{1, 2}, preferred{1};
  for (__u64 waited : {__u64{0}, kBound + 1, ~__u64{0}}) {
    EXPECT_FALSE(c2c_may_run_on(allowed.w, preferred.w, 0, waited)) << waited;
    EXPECT_FALSE(c2c_may_run_on(allowed.w, preferred.w, 3, waited)) << waited;
    EXPECT_FALSE(c2c_may_run_on(allowed.w, preferred.w, -1, waited)) << waited;
  }
  // A preferred CPU outside allowed (an entry written past the core) is outside allowed.
  EXPECT_FALSE(c2c_may_run_on(Mask{0}.w, Mask{1}.w, 1, 0));
}

TEST(GuardsPlaced, IdlePreferredCpuBeatsAnIdleOtherOne) {
  bool idle = false;
  EXPECT_EQ(c2c_choose_placed(Mask{0, 1}.w, Mask{1}.w, Mask{0, 1}.w, 0, 2, 0, &idle), 1);
  EXPECT_TRUE(idle);
}

TEST(GuardsPlaced, BusyPreferredCpuIsWaitedForBeforeTheBound) {
  // The bug of issue #16: CPU 0 idle, preferred CPU 1 busy -> the task used to go to CPU 0.
  bool idle = true;
  EXPECT_EQ(c2c_choose_placed(Mask{0, 1}.w, Mask{1}.w, Mask{0}.w, 0, 2, 0, &idle), 1);
  EXPECT_FALSE(idle);
  EXPECT_EQ(c2c_choose_placed(Mask{0, 1}.w, Mask{1}.w, Mask{0}.w, 0, 2, kBound, &idle), 1);
  EXPECT_FALSE(idle);
  // prev_cpu is the preferred CPU to queue for when it is one.
  EXPECT_EQ(c2c_choose_placed(Mask{0, 1, 2, 3}.w, Mask{2, 3}.w, Mask{0}.w, 3, 4, 0, &idle), 3);
  EXPECT_FALSE(idle);
}

TEST(GuardsPlaced, PastTheBoundAnIdleAllowedCpuTakesIt) {
  bool idle = false;
  EXPECT_EQ(c2c_choose_placed(Mask{0, 1}.w, Mask{1}.w, Mask{0}.w, 1, 2, kBound + 1, &idle), 0);
  EXPECT_TRUE(idle);
  // Nothing idle in allowed: still the preferred CPU.
  EXPECT_EQ(c2c_choose_placed(Mask{0, 1}.w, Mask{1}.w, Mask{2}.w, 0, 3, kBound + 1, &idle), 1);
  EXPECT_FALSE(idle);
}

TEST(GuardsPlaced, NoPreferredCpuFallsBackToAllowedAndNeverLeavesIt) {
  bool idle = false;
  EXPECT_EQ(c2c_choose_placed(Mask{0, 2}.w, Mask{}.w, Mask{1, 2}.w, 1, 4, 0, &idle), 2);
  EXPECT_TRUE(idle);
  EXPECT_EQ(c2c_choose_placed(Mask{0, 2}.w, Mask{}.w, Mask{1}.w, 1, 4, 0, &idle), 0);
  EXPECT_FALSE(idle);
  EXPECT_EQ(c2c_choose_placed(Mask{}.w, Mask{}.w, Mask{0, 1}.w, 0, 4, kBound + 1, &idle), -1);
  EXPECT_FALSE(idle);
}

// ---- INV-8 ---------------------------------------------------------------------------------

TEST(GuardsLease, LiveStrictlyBeforeTheDeadline) {
  auto v = entry(C2C_CLASS_LATENCY_CRITICAL, C2C_F_BOOST);
  v.boost_until_ns = 5000;
  EXPECT_TRUE(c2c_lease_live(&v, 4999));
  EXPECT_FALSE(c2c_lease_live(&v, 5000));
  EXPECT_FALSE(c2c_lease_live(&v, 5001));
}

TEST(GuardsLease, OnlyBoostingClassesWithTheFlag) {
  for (__u8 cls = 0; cls < C2C_NR_CLASSES; ++cls) {
    auto v = entry(cls, C2C_F_BOOST);
    v.boost_until_ns = 5000;
    const bool boosting = cls == C2C_CLASS_LATENCY_CRITICAL || cls == C2C_CLASS_COMM_PROGRESS;
    EXPECT_EQ(c2c_lease_live(&v, 1), boosting) << int(cls);
    EXPECT_EQ(c2c_boost_requested(&v), boosting) << int(cls);
    v.flags = 0;
    EXPECT_FALSE(c2c_lease_live(&v, 1)) << int(cls);
  }
}

TEST(GuardsBudget, RunsOutAtTheBudget) {
  c2c_budget b{1000, 0};
  EXPECT_TRUE(c2c_budget_left(&b));
  c2c_budget_charge(&b, 1000, 1000 + C2C_BOOST_BUDGET_NS - 1);
  EXPECT_TRUE(c2c_budget_left(&b));
  c2c_budget_charge(&b, 0, 1);
  EXPECT_EQ(b.boosted_ns, C2C_BOOST_BUDGET_NS);
  EXPECT_FALSE(c2c_budget_left(&b));
  EXPECT_EQ(C2C_BOOST_BUDGET_NS, 70 * C2C_NSEC_PER_MSEC);
}

TEST(GuardsBudget, NewWindowRefills) {
  c2c_budget b{1000, C2C_BOOST_BUDGET_NS};
  c2c_budget_roll(&b, 1000 + C2C_BOOST_WINDOW_NS - 1);
  EXPECT_FALSE(c2c_budget_left(&b));
  c2c_budget_roll(&b, 1000 + C2C_BOOST_WINDOW_NS);
  EXPECT_TRUE(c2c_budget_left(&b));
  EXPECT_EQ(b.window_start, 1000 + C2C_BOOST_WINDOW_NS);
  EXPECT_EQ(b.boosted_ns, 0u);
}

TEST(GuardsBudget, ClockBeforeTheWindowNeitherWrapsNorCharges) {
  c2c_budget b{5000, 10};
  c2c_budget_roll(&b, 4000);  // a window "in the future": restart rather than wrap
  EXPECT_EQ(b.window_start, 4000u);
  EXPECT_EQ(b.boosted_ns, 0u);
  c2c_budget_charge(&b, 4500, 4000);  // since after now: nothing
  EXPECT_EQ(b.boosted_ns, 0u);
  b.boosted_ns = ~0ull - 3;
  c2c_budget_charge(&b, 0, 100);  // saturates
  EXPECT_EQ(b.boosted_ns, ~0ull);
}

TEST(GuardsStarvation, StarvedOnlyPastTheBoundAndWhenQueued) {
  EXPECT_FALSE(c2c_starved(1, 1000, 1000 + C2C_NORM_STARVE_NS, C2C_NORM_STARVE_NS));
  EXPECT_TRUE(c2c_starved(1, 1000, 1001 + C2C_NORM_STARVE_NS, C2C_NORM_STARVE_NS));
  EXPECT_FALSE(c2c_starved(0, 1000, 1001 + C2C_NORM_STARVE_NS, C2C_NORM_STARVE_NS));
  EXPECT_FALSE(c2c_starved(1, 5000, 1000, C2C_NORM_STARVE_NS));  // served "after" now: no wrap
}

TEST(GuardsStarvation, RescueChoosesNormThenBackground) {
  const __u64 now = 1'000'000'000;
  const __u64 norm_late = now - C2C_NORM_STARVE_NS - 1, bg_late = now - C2C_BG_STARVE_NS - 1;
  EXPECT_EQ(c2c_rescue_dsq(1, norm_late, 1, bg_late, now), C2C_DSQ_NORM);
  EXPECT_EQ(c2c_rescue_dsq(1, now, 1, bg_late, now), C2C_DSQ_BG);
  EXPECT_EQ(c2c_rescue_dsq(0, norm_late, 1, bg_late, now), C2C_DSQ_BG);
  EXPECT_EQ(c2c_rescue_dsq(1, now - C2C_NORM_STARVE_NS, 1, now - C2C_BG_STARVE_NS, now), C2C_DSQ_NONE);
  EXPECT_EQ(c2c_rescue_dsq(1, norm_late, 0, bg_late, now), C2C_DSQ_NORM);
}

TEST(GuardsStarvation, OnlyABackgroundRunThatNoRescueGaveYieldsToAWaitingClass) {
  EXPECT_TRUE(c2c_yields_to_waiting(C2C_CLASS_BACKGROUND, false));
  EXPECT_FALSE(c2c_yields_to_waiting(C2C_CLASS_BACKGROUND, true));  // a rescue run keeps its CPU
  for (__u32 cls : {C2C_CLASS_UNMATCHED, C2C_CLASS_LATENCY_CRITICAL, C2C_CLASS_COMM_PROGRESS, C2C_CLASS_THROUGHPUT,
                    C2C_CLASS_NORMAL}) {
    EXPECT_FALSE(c2c_yields_to_waiting(cls, false)) << cls;
    EXPECT_FALSE(c2c_yields_to_waiting(cls, true)) << cls;
  }
}

// ---- slices --------------------------------------------------------------------------------

TEST(GuardsSlice, ClassDefaults) {
  EXPECT_EQ(c2c_slice(nullptr), C2C_DEFAULT_SLICE_NS);
  const std::pair<__u8, __u64> want[] = {
      {C2C_CLASS_UNMATCHED, C2C_DEFAULT_SLICE_NS},
      {C2C_CLASS_LATENCY_CRITICAL, C2C_SLICE_LATENCY_CRITICAL_NS},
      {C2C_CLASS_COMM_PROGRESS, C2C_SLICE_COMM_PROGRESS_NS},
      {C2C_CLASS_THROUGHPUT, C2C_SLICE_THROUGHPUT_NS},
      {C2C_CLASS_BACKGROUND, C2C_SLICE_BACKGROUND_NS},
      {C2C_CLASS_NORMAL, C2C_DEFAULT_SLICE_NS},
  };
  for (const auto& [cls, ns] : want) {
    const auto v = entry(cls);
    EXPECT_EQ(c2c_slice(&v), ns) << int(cls);
  }
}

TEST(GuardsSlice, CustomSliceIsClamped) {
  auto v = entry(C2C_CLASS_NORMAL, C2C_F_CUSTOM_SLICE);
  v.slice_ns = 30 * C2C_NSEC_PER_MSEC;
  EXPECT_EQ(c2c_slice(&v), 30 * C2C_NSEC_PER_MSEC);
  v.slice_ns = 1;
  EXPECT_EQ(c2c_slice(&v), C2C_SLICE_MIN_NS);
  v.slice_ns = ~0ull;
  EXPECT_EQ(c2c_slice(&v), C2C_SLICE_MAX_NS);
  v.slice_ns = 0;  // flag without a value: the class default
  EXPECT_EQ(c2c_slice(&v), C2C_DEFAULT_SLICE_NS);
}

TEST(GuardsSlice, UntrackedRunsAreShortWhileThePolicyMapHoldsAnEntry) {
  EXPECT_EQ(c2c_untracked_slice(true), C2C_DEFAULT_SLICE_NS);
  EXPECT_EQ(c2c_untracked_slice(false), C2C_UNTRACKED_LONG_SLICE_NS);
  EXPECT_GT(C2C_UNTRACKED_LONG_SLICE_NS, C2C_DEFAULT_SLICE_NS);
}

TEST(GuardsSlice, ALongUntrackedRunIsCutBackToTheDefaultSlice) {
  const __u64 ms = C2C_NSEC_PER_MSEC;
  EXPECT_EQ(c2c_cut_untracked(19 * ms, 1 * ms), C2C_DEFAULT_SLICE_NS - 1 * ms);
  EXPECT_EQ(c2c_cut_untracked(15 * ms, C2C_DEFAULT_SLICE_NS), 0u);  // already ran its default: ends now
  EXPECT_EQ(c2c_cut_untracked(15 * ms, 10 * ms), 0u);
  EXPECT_EQ(c2c_cut_untracked(ms / 2, 1 * ms), ms / 2);  // never lengthened
  EXPECT_EQ(c2c_cut_untracked(20 * ms, 0), C2C_DEFAULT_SLICE_NS);
}

// ---- boost inheritance: the wakee of a boosted run (issue 43 item 3) ---------------------------

TEST(GuardsInherit, OnlyAnOptedInBoostingEntryPassesItsBoostOn) {
  // Off unless the policy opted in (C2C_F_WAKEE_BOOST): a boosting entry alone passes nothing on.
  auto v = entry(C2C_CLASS_LATENCY_CRITICAL, C2C_F_BOOST);
  EXPECT_EQ(c2c_inherit_conf(&v), 0u);
  v.flags = C2C_F_BOOST | C2C_F_WAKEE_DEPTH2;  // depth 2 without its depth 1 means nothing
  EXPECT_EQ(c2c_inherit_conf(&v), 0u);
  v.flags = C2C_F_BOOST | C2C_F_WAKEE_BOOST;
  EXPECT_EQ(c2c_inherit_conf(&v), 1u);
  v.flags = C2C_F_BOOST | C2C_F_WAKEE_BOOST | C2C_F_WAKEE_DEPTH2;
  EXPECT_EQ(c2c_inherit_conf(&v), 2u);
  v.exec_class = C2C_CLASS_COMM_PROGRESS;
  EXPECT_EQ(c2c_inherit_conf(&v), 2u);
  // An entry that cannot boost has no boosted run to pass on, opted in or not.
  v.exec_class = C2C_CLASS_THROUGHPUT;
  EXPECT_EQ(c2c_inherit_conf(&v), 0u);
  auto w = entry(C2C_CLASS_LATENCY_CRITICAL, C2C_F_WAKEE_BOOST | C2C_F_WAKEE_DEPTH2);
  EXPECT_EQ(c2c_inherit_conf(&w), 0u);
}

TEST(GuardsInherit, DepthIsTheWakersPlusOneAndNeverPastTheChainNorTwo) {
  EXPECT_EQ(c2c_inherit_depth(true, 0, 1), 1u);
  EXPECT_EQ(c2c_inherit_depth(true, 0, 2), 2u - 1u);
  EXPECT_EQ(c2c_inherit_depth(true, 1, 2), 2u);
  EXPECT_EQ(c2c_inherit_depth(true, 1, 1), 0u);  // the wakee of a depth-1 run in a depth-1 chain
  EXPECT_EQ(c2c_inherit_depth(true, 2, 2), 0u);  // depth 3 is never reached
  // A chain limit past 2 (not a value the flags can say) is held to C2C_INHERIT_MAX_DEPTH.
  EXPECT_EQ(c2c_inherit_depth(true, 2, 7), 0u);
  EXPECT_EQ(c2c_inherit_depth(true, 5, 200), 0u);
  // Off, or an unboosted waker: nothing.
  EXPECT_EQ(c2c_inherit_depth(true, 0, 0), 0u);
  EXPECT_EQ(c2c_inherit_depth(false, 0, 2), 0u);
  for (__u32 d = 0; d < 8; ++d)
    for (__u32 m = 0; m < 8; ++m) EXPECT_LE(c2c_inherit_depth(true, d, m), C2C_INHERIT_MAX_DEPTH) << d << " " << m;
}

TEST(GuardsInherit, TheWakeesLeaseIsItsOwnAndShort) {
  const __u64 ms = C2C_NSEC_PER_MSEC, now = 1000 * ms;
  // The waker's lease runs for seconds: the wakee's ends C2C_INHERIT_LEASE_NS from now.
  EXPECT_EQ(c2c_inherit_until(now, now + 30000 * ms), now + C2C_INHERIT_LEASE_NS);
  // It never outlives the waker's.
  EXPECT_EQ(c2c_inherit_until(now, now + C2C_INHERIT_LEASE_NS / 2), now + C2C_INHERIT_LEASE_NS / 2);
  EXPECT_LE(c2c_inherit_until(now, now), now);
  EXPECT_LE(c2c_inherit_until(now, now - ms), now);
  // No wrap at the clock's end.
  EXPECT_EQ(c2c_inherit_until(~0ull - 5, ~0ull), ~0ull);
}

TEST(GuardsInherit, GrantedOnlyWithinDepthLeaseAllowedAndBudget) {
  const __u64 ms = C2C_NSEC_PER_MSEC, now = 1000 * ms;
  const Mask allowed{2, 3};
  c2c_inherit o{};
  o.until = now + ms;
  o.from = 42;
  o.depth = 1;
  o.max = 1;
  EXPECT_TRUE(c2c_inherit_grant(&o, now, allowed.w, 2, true));
  EXPECT_TRUE(c2c_inherit_grant(&o, now, allowed.w, 3, true));
  // INV-6: never on a CPU outside the wakee's own allowed CPUs.
  EXPECT_FALSE(c2c_inherit_grant(&o, now, allowed.w, 0, true));
  EXPECT_FALSE(c2c_inherit_grant(&o, now, allowed.w, 4, true));
  EXPECT_FALSE(c2c_inherit_grant(&o, now, allowed.w, -1, true));
  // INV-8: not when the CPU's boost budget is spent ...
  EXPECT_FALSE(c2c_inherit_grant(&o, now, allowed.w, 2, false));
  // ... nor at or past its own lease ...
  EXPECT_FALSE(c2c_inherit_grant(&o, now + ms, allowed.w, 2, true));
  EXPECT_FALSE(c2c_inherit_grant(&o, now + 2 * ms, allowed.w, 2, true));
  // ... nor without an offer, nor deeper than the chain or than 2.
  o.depth = 0;
  EXPECT_FALSE(c2c_inherit_grant(&o, now, allowed.w, 2, true));
  o.depth = 2;
  EXPECT_FALSE(c2c_inherit_grant(&o, now, allowed.w, 2, true));  // max 1
  o.max = 2;
  EXPECT_TRUE(c2c_inherit_grant(&o, now, allowed.w, 2, true));
  o.depth = 3;
  o.max = 3;
  EXPECT_FALSE(c2c_inherit_grant(&o, now, allowed.w, 2, true));
}

TEST(GuardsInherit, AnInheritedRunEndsWithItsLease) {
  const __u64 ms = C2C_NSEC_PER_MSEC, now = 1000 * ms;
  EXPECT_EQ(c2c_inherit_slice(20 * ms, now, now + 2 * ms), 2 * ms);  // a throughput Worker's 20 ms
  EXPECT_EQ(c2c_inherit_slice(ms, now, now + 2 * ms), ms);           // its own slice when shorter
  EXPECT_EQ(c2c_inherit_slice(ms, now, now), 0u);
}

// ---- the default path: a sleeper against CPU hogs (issue 43) ----------------------------------

TEST(GuardsWakeup, ASleeperIsPlacedAtMostTheCreditBeforeVtimeNow) {
  const __u64 ms = C2C_NSEC_PER_MSEC, now = 1000 * ms;
  // Slept long: its own virtual time is far behind; it gets the credit, no more.
  EXPECT_EQ(c2c_wake_vtime(10 * ms, now), now - C2C_WAKE_CREDIT_NS);
  // The credit is the longest default slice of DSQ_NORM: a hog that waits its turn began it at
  // most that far before vtime_now, so the sleeper lands ahead of every waiting hog (the 3 ms
  // floor of before issue 43 landed it behind them).
  EXPECT_EQ(C2C_WAKE_CREDIT_NS, C2C_UNTRACKED_LONG_SLICE_NS);
  EXPECT_LT(c2c_wake_vtime(10 * ms, now), now - 15 * ms);
  // Slept briefly (or never): its own virtual time stands; sleeping never moves it forward.
  EXPECT_EQ(c2c_wake_vtime(now - 5 * ms, now), now - 5 * ms);
  EXPECT_EQ(c2c_wake_vtime(now + 7 * ms, now), now + 7 * ms);
  EXPECT_EQ(c2c_wake_vtime(now - C2C_WAKE_CREDIT_NS, now), now - C2C_WAKE_CREDIT_NS);
  // No wrap below 0 at the start.
  EXPECT_EQ(c2c_wake_vtime(0, 5 * ms), 0u);
  EXPECT_EQ(c2c_wake_vtime(3, C2C_WAKE_CREDIT_NS), 3u);
}

TEST(GuardsWakeup, AWokenTaskFarBehindPreemptsARunOfItsQueue) {
  const __u64 ms = C2C_NSEC_PER_MSEC, run = 500 * ms;
  // Far behind a run that has lasted a tick: preempts.
  EXPECT_TRUE(c2c_wakeup_preempts(run - C2C_WAKE_CREDIT_NS, false, run, 1, true));
  EXPECT_TRUE(c2c_wakeup_preempts(run - C2C_PREEMPT_GAP_NS - 1, false, run, 5, true));
  // Within the gap (hackbench's tasks, about level): no preemption.
  EXPECT_FALSE(c2c_wakeup_preempts(run - C2C_PREEMPT_GAP_NS, false, run, 5, true));
  EXPECT_FALSE(c2c_wakeup_preempts(run - 1 * ms, false, run, 5, true));
  // Ahead of the run: never.
  EXPECT_FALSE(c2c_wakeup_preempts(run + 10 * ms, false, run, 5, true));
  // A run that began in this tick keeps its CPU (no preemption storm at a run's start).
  EXPECT_FALSE(c2c_wakeup_preempts(run - C2C_WAKE_CREDIT_NS, false, run, 0, true));
  // A run that may not be preempted (boosted, rescued, another class) keeps its CPU.
  EXPECT_FALSE(c2c_wakeup_preempts(run - C2C_WAKE_CREDIT_NS, false, run, 5, false));
  // No wrap: a woken task at virtual time 0 against a run at the gap exactly.
  EXPECT_FALSE(c2c_wakeup_preempts(0, false, C2C_PREEMPT_GAP_NS, 5, true));
  EXPECT_TRUE(c2c_wakeup_preempts(0, false, C2C_PREEMPT_GAP_NS + 1, 5, true));
}

TEST(GuardsWakeup, AWokenTaskOfAHigherClassPreemptsWhateverTheVirtualTimes) {
  const __u64 ms = C2C_NSEC_PER_MSEC, run = 500 * ms;
  // An unboosted latency-critical wakeup (DSQ_HI) is not held to the gap: class order, as dispatch.
  EXPECT_TRUE(c2c_wakeup_preempts(0, true, run, 1, true));
  EXPECT_TRUE(c2c_wakeup_preempts(run + 50 * ms, true, run, 1, true));
  EXPECT_TRUE(c2c_wakeup_preempts(run, true, run, 3, true));
  // Still never a run that may not be preempted, nor one that began in this tick.
  EXPECT_FALSE(c2c_wakeup_preempts(0, true, run, 1, false));
  EXPECT_FALSE(c2c_wakeup_preempts(0, true, run, 0, true));
}

TEST(GuardsWakeup, OnlyUnboostedUnrescuedRunsOfTheNormalQueueArePreemptible) {
  for (__u32 cls : {0u + C2C_CLASS_UNMATCHED, 0u + C2C_CLASS_THROUGHPUT, 0u + C2C_CLASS_NORMAL}) {
    EXPECT_TRUE(c2c_run_preemptible(cls, false, false)) << cls;
    EXPECT_FALSE(c2c_run_preemptible(cls, true, false)) << cls;  // boosted
    EXPECT_FALSE(c2c_run_preemptible(cls, false, true)) << cls;  // a starvation rescue's run (INV-8)
  }
  for (__u32 cls : {0u + C2C_CLASS_LATENCY_CRITICAL, 0u + C2C_CLASS_COMM_PROGRESS, 0u + C2C_CLASS_BACKGROUND, 6u, 255u})
    EXPECT_FALSE(c2c_run_preemptible(cls, false, false)) << cls;
}

}  // namespace

TEST(GuardsWakeup, TheTickEndsARunOnceItIsTheGapAheadOfTheFirstWaitingTask) {
  const __u64 ms = C2C_NSEC_PER_MSEC, run = 500 * ms, none = ~0ull;
  // A sleeper queued with its credit behind a hog that has had its minimum: the run ends.
  EXPECT_TRUE(c2c_tick_ends_run(C2C_PARITY_MIN_NS, run, run - C2C_WAKE_CREDIT_NS));
  EXPECT_TRUE(c2c_tick_ends_run(20 * ms, run, run - C2C_SLEEPER_GAP_NS - 1));
  // Not before the run's minimum (one tick): no end at a run's start, so no storm of switches.
  EXPECT_FALSE(c2c_tick_ends_run(C2C_PARITY_MIN_NS - 1, run, run - C2C_WAKE_CREDIT_NS));
  EXPECT_FALSE(c2c_tick_ends_run(0, run, 0));
  // Within the gap (hogs taking turns, hackbench's tasks about level): the run goes on.
  EXPECT_FALSE(c2c_tick_ends_run(20 * ms, run, run - C2C_SLEEPER_GAP_NS));
  EXPECT_FALSE(c2c_tick_ends_run(20 * ms, run, run - 1 * ms));
  // A waiting task ahead of the run, or nobody waiting: never.
  EXPECT_FALSE(c2c_tick_ends_run(20 * ms, run, run + 5 * ms));
  EXPECT_FALSE(c2c_tick_ends_run(20 * ms, run, none));
  EXPECT_FALSE(c2c_tick_ends_run(20 * ms, none - 1, none));
  // No wrap at virtual time 0.
  EXPECT_FALSE(c2c_tick_ends_run(5 * ms, C2C_SLEEPER_GAP_NS, 0));
  EXPECT_TRUE(c2c_tick_ends_run(5 * ms, C2C_SLEEPER_GAP_NS + 1, 0));
}

TEST(GuardsWakeup, HogsOfOneWeightTakeTurnsOfAboutTwiceTheGap) {
  // Two CPU hogs on one CPU, the tick every millisecond: each run ends at the first tick where
  // it is more than the gap ahead of the other's virtual time, so turns are equal and about
  // twice the gap: the long slice they had before the rule, not a switch per tick.
  EXPECT_GE(2 * C2C_SLEEPER_GAP_NS + 1, C2C_UNTRACKED_LONG_SLICE_NS);
  EXPECT_LT(C2C_SLEEPER_GAP_NS, C2C_WAKE_CREDIT_NS);  // a sleeper with its credit cuts a hog's run
  const __u64 ms = C2C_NSEC_PER_MSEC;
  __u64 vtime[2] = {0, 0}, turns[2] = {0, 0}, longest = 0;
  int cur = 0;
  for (int turn = 0; turn < 40; ++turn) {
    __u64 ran = 0;
    const __u64 start = vtime[cur];
    do {
      ran += ms;
    } while (!c2c_tick_ends_run(ran, start + ran, vtime[1 - cur]) && ran < 10 * C2C_UNTRACKED_LONG_SLICE_NS);
    vtime[cur] = start + ran;
    turns[cur] += ran;
    if (turn > 2 && ran > longest) longest = ran;
    if (turn > 2) {
      EXPECT_GE(ran, 2 * C2C_SLEEPER_GAP_NS) << turn;
    }
    cur = 1 - cur;
  }
  EXPECT_LE(longest, 2 * C2C_SLEEPER_GAP_NS + 2 * ms);
  // Fair by weight: equal shares within one turn.
  EXPECT_LE(turns[0] > turns[1] ? turns[0] - turns[1] : turns[1] - turns[0], 2 * C2C_SLEEPER_GAP_NS + 2 * ms);
}
