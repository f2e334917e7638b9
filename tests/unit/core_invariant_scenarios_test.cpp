// One or more named scenarios per invariant (spec/state-machine.md §7). Every step also runs the
// full checker (CoreTest::apply), so each scenario asserts the invariants along the way.
#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

using Status = ApplyResult::Status;

// ---- INV-2: TID reuse ----------------------------------------------------------------------

TEST_F(CoreTest, Inv2_TidReuseReplacesTheEntryAndStaleEventsAreIgnored) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy()});
  applied(TaskSeen{task(100, 100, 5000, "python3.12")});
  applied(TaskSeen{task(101, 100, 5001, "EngineCore_DP0")});
  ASSERT_NE(entry(101), nullptr);
  sync();

  // The thread exits without us seeing it; a new task reuses tid 101 with a later start.
  applied(TaskSeen{task(101, 900, 7000, "bash")});
  EXPECT_EQ(entry(101), nullptr) << "the new task does not match: no policy may apply to it";
  Plan p = core.plan();
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::Delete);

  // Late events about the old task must not touch its successor.
  refused(TaskRenamed{{101, 5001}, "EngineCore_DP1"}, Status::Ignored);
  refused(TaskExited{{101, 5001}}, Status::Ignored);
  refused(TaskSeen{task(101, 100, 5001, "EngineCore_DP0")}, Status::Ignored);  // older start
}

TEST_F(CoreTest, Inv2_ReusedTidThatMatchesAgainIsRewrittenNotKept) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy()});
  applied(TaskSeen{task(101, 101, 5001, "EngineCore_DP0")});
  sync();
  applied(TaskSeen{task(101, 101, 9000, "EngineCore_DP0")});
  Plan p = core.plan();
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::Update);
  EXPECT_EQ(p.ops[0].value.start, 9000u);
  EXPECT_NE(p.ops[0].reason.find("tid reused"), std::string::npos) << p.ops[0].reason;
}

// ---- INV-1: stale claim --------------------------------------------------------------------

class DraScenario : public CoreTest {
 protected:
  void SetUp() override {
    applied(NodeInfoEvent{node_info()});
    applied(DraPolicyUpsert{decode_policy()});
    applied(ClaimAllocated{gpu_claim()});
    applied(ClaimAllocated{cpu_claim(CpuSet::range(2, 5))});
    applied(PodBound{decode_pod()});
    applied(TaskSeen{pod_task(4107, 800, "decode_loop", "decode")});
    applied(TaskSeen{pod_task(4108, 800, "tokenizer")});
  }
};

TEST_F(DraScenario, Inv1_ClaimDeallocatedWhilePolicyIsLiveRemovesItsEntries) {
  ASSERT_NE(entry(4107), nullptr);
  EXPECT_EQ(entry(4108), nullptr) << "only the decode role matches";
  ASSERT_EQ(entry(4107)->origin->claims.size(), 2u);
  sync();
  applied(ClaimDeallocated{kGpuClaim, 1});
  EXPECT_EQ(entry(4107), nullptr) << "failClosedOnStaleClaim: nothing derived from a stale claim stays";
  Plan p = core.plan();
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::Delete);
  EXPECT_NE(p.ops[0].reason.find("INV-1"), std::string::npos) << p.ops[0].reason;
  sync();
  EXPECT_TRUE(core.actual().empty());
}

TEST_F(DraScenario, Inv1_WithoutFailClosedOnlyLiveClaimsRemainInTheLineage) {
  auto p = decode_policy(2);
  p.fail_closed_on_stale_claim = false;
  applied(DraPolicyUpsert{p});
  applied(ClaimDeallocated{kCpuClaim, 1});
  ASSERT_NE(entry(4107), nullptr);
  ASSERT_EQ(entry(4107)->origin->claims.size(), 1u);
  EXPECT_EQ(entry(4107)->origin->claims[0].uid, kGpuClaim);
  EXPECT_EQ(entry(4107)->value.allowed, CpuSet::range(0, 7)) << "the deallocated CPU claim no longer narrows";
}

TEST_F(DraScenario, Inv1_ClaimForAnotherNodeIsNotLive) {
  Claim moved = gpu_claim(2);
  moved.node = "other-node";
  applied(ClaimUpdated{moved});
  EXPECT_EQ(entry(4107), nullptr);
}

// ---- INV-3: no resurrection ----------------------------------------------------------------

TEST_F(DraScenario, Inv3_OlderClaimGenerationNeverComesBack) {
  applied(ClaimUpdated{gpu_claim(5)});
  refused(ClaimUpdated{gpu_claim(3)}, Status::Ignored);
  applied(ClaimDeallocated{kGpuClaim, 5});
  // A late allocate of the same incarnation must not resurrect the entry.
  refused(ClaimAllocated{gpu_claim(5)}, Status::Ignored);
  refused(ClaimAllocated{gpu_claim(4)}, Status::Ignored);
  EXPECT_EQ(entry(4107), nullptr);
  // A genuinely new allocation (newer generation) is accepted.
  applied(ClaimAllocated{gpu_claim(6)});
  EXPECT_NE(entry(4107), nullptr);
}

TEST_F(CoreTest, Inv3_PolicyGenerationRollbackIsIgnoredAndDeleteLeavesATombstone) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy(3)});
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  refused(NodePolicyUpsert{engine_policy(2, 0)}, Status::Ignored);
  auto changed = engine_policy(3, 7);
  refused(NodePolicyUpsert{changed}, Status::Invalid);  // spec changed without a new generation
  applied(PolicyDelete{PolicyKind::Node, "vllm-enginecore", 3});
  EXPECT_EQ(entry(101), nullptr);
  refused(NodePolicyUpsert{engine_policy(3)}, Status::Ignored);
  applied(NodePolicyUpsert{engine_policy(4)});
  EXPECT_NE(entry(101), nullptr);
}

TEST_F(DraScenario, Inv3_RequirePreviewGatesEachGeneration) {
  auto p = decode_policy(2);
  p.require_preview = true;
  applied(DraPolicyUpsert{p});
  EXPECT_EQ(entry(4107), nullptr) << "generation 2 was not previewed";
  refused(PreviewAck{PolicyKind::Dra, "llm-decode", 1}, Status::Ignored);
  applied(PreviewAck{PolicyKind::Dra, "llm-decode", 2});
  EXPECT_NE(entry(4107), nullptr);
  p.generation = 3;
  p.max_boost = 10'000'000'000ull;
  applied(DraPolicyUpsert{p});
  EXPECT_EQ(entry(4107), nullptr) << "a new generation needs a new preview";
}

TEST_F(DraScenario, Inv3_PreviewOfTheStoredSpecWithoutGenerationAcknowledgesTheStoredOne) {
  auto p = decode_policy(2);
  p.require_preview = true;
  applied(DraPolicyUpsert{p});
  auto unversioned = p;
  unversioned.generation = 0;  // a manifest without metadata.generation, as `apply -f` sends it
  EXPECT_EQ(core.preview(unversioned).policy_generation, 2) << "the same spec is the stored generation";
  applied(PreviewAck{PolicyKind::Dra, "llm-decode", core.preview(unversioned).policy_generation});
  EXPECT_NE(entry(4107), nullptr);
  unversioned.max_boost = 10'000'000'000ull;
  EXPECT_EQ(core.preview(unversioned).policy_generation, 3) << "a changed spec previews the next generation";
}

// ---- INV-4: monotonic generation -----------------------------------------------------------

TEST_F(CoreTest, Inv4_GenerationIncreasesPerChangeAndAcrossRestarts) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy()});
  uint64_t g0 = core.generation();
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  EXPECT_EQ(core.generation(), g0 + 1);
  EXPECT_EQ(entry(101)->value.generation, g0 + 1);
  sync();
  const uint64_t before = core.generation();
  // The generation file lags (an fsync was lost): the restart must still move past the kernel.
  applied(DaemonRestart{before - 1});
  EXPECT_GT(core.generation(), before);
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  EXPECT_GT(entry(101)->value.generation, before);
}

TEST_F(CoreTest, Inv4_KernelEntryFromAFutureGenerationIsReported) {
  RuntimeValue v;
  v.start = 1;
  v.generation = 42;
  core.apply(BpfObserved{{ActualEntry{7, v}}});
  auto violations = core.check();
  ASSERT_FALSE(violations.empty());
  bool inv4 = false;
  for (const auto& x : violations) inv4 = inv4 || x.invariant == "INV-4";
  EXPECT_TRUE(inv4);
}

// ---- INV-5: explained kernel state ---------------------------------------------------------

TEST_F(CoreTest, Inv5_ForeignKernelEntryIsPrunedAndSyncConverges) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy()});
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  sync();
  RuntimeValue garbage;
  garbage.start = 77;
  garbage.generation = 1;
  std::vector<ActualEntry> seen{{101, core.actual().at(101)}, {555, garbage}};
  applied(BpfObserved{seen});
  Plan p = core.plan();
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].tid, 555u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::Delete);
  EXPECT_NE(p.ops[0].reason.find("INV-5"), std::string::npos);
  sync();
  EXPECT_EQ(core.actual().size(), 1u);
  EXPECT_TRUE(core.plan().ops.empty());
}

// ---- INV-6: cpuset boundary ----------------------------------------------------------------

TEST_F(DraScenario, Inv6_AllowedIsTheIntersectionAndPreferredStaysInside) {
  const auto* e = entry(4107);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->value.allowed, CpuSet::range(2, 5)) << "pod envelope 0-7 intersected with the claimed CPUs 2-5";
  EXPECT_TRUE(e->value.preferred.subset_of(e->value.allowed));
  // The cgroup narrows: the policy must follow, never widen.
  applied(PodBound{decode_pod(CpuSet::range(4, 7))});
  EXPECT_EQ(entry(4107)->value.allowed, CpuSet::range(4, 5));
}

TEST_F(DraScenario, Inv6_AllocationOutsideTheEnvelopeFailsClosed) {
  applied(ClaimUpdated{cpu_claim(CpuSet::range(10, 11), 2)});
  EXPECT_EQ(entry(4107), nullptr) << "no CPU of the allocation lies inside the cgroup cpuset";
}

TEST_F(DraScenario, Inv6_PreferSamePcieRootNarrowsPreference) {
  auto p = decode_policy(2);
  p.prefer_same_pcie_root = true;
  applied(DraPolicyUpsert{p});
  const auto* e = entry(4107);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->value.preferred, CpuSet::range(2, 3)) << "allowed 2-5 ∩ NUMA0 0-7 ∩ root-local 0-3";
  EXPECT_TRUE(e->value.flags & kFlagPreferredCpus);
}

// ---- INV-7: restart rebuilds only valid state ---------------------------------------------

TEST_F(CoreTest, Inv7_RestartDefersPruningThenRemovesWhatWasNotReobserved) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy()});
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  applied(TaskSeen{task(102, 101, 6, "EngineCore_DP1")});
  sync();
  applied(DaemonRestart{core.generation()});
  EXPECT_TRUE(core.loading());
  EXPECT_EQ(core.desired_size(), 0u);
  EXPECT_TRUE(core.plan().ops.empty()) << "nothing is pruned before the desired state is loaded";
  EXPECT_EQ(core.plan().deferred_deletes.size(), 2u);
  // Only tid 101 still exists after the restart.
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  applied(SyncComplete{});
  Plan p = core.plan();
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::Update);  // same task, new generation
  EXPECT_EQ(p.ops[1].kind, PlanOp::Kind::Delete);
  EXPECT_EQ(p.ops[1].tid, 102u);
  sync();
  EXPECT_EQ(core.actual().size(), 1u);
}

TEST_F(CoreTest, Inv7_PoliciesSurviveRestartObservationsDoNot) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy()});
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  applied(DaemonRestart{0});
  EXPECT_TRUE(core.node_policy("vllm-enginecore").has_value());
  EXPECT_TRUE(core.tasks().empty());
}

// ---- INV-8: bounded boost ------------------------------------------------------------------

TEST_F(CoreTest, Inv8_BoostLeaseIsBoundedAndRenewedOnlyWhileValid) {
  auto n = node_info();
  n.default_max_boost = 10'000'000'000ull;  // 10 s
  applied(NodeInfoEvent{n});
  applied(TimeAdvance{1'000'000'000});
  applied(NodePolicyUpsert{engine_policy()});
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  EXPECT_EQ(entry(101)->value.boost_until, 11'000'000'000ull);
  applied(TimeAdvance{5'000'000'000});
  EXPECT_EQ(entry(101)->value.boost_until, 11'000'000'000ull) << "renewal only at half-life";
  applied(TimeAdvance{6'500'000'000});
  EXPECT_EQ(entry(101)->value.boost_until, 16'500'000'000ull);
  // A jump far past the deadline: the lease is renewed from now, never left expired.
  applied(TimeAdvance{100'000'000'000});
  EXPECT_GT(entry(101)->value.boost_until, 100'000'000'000ull);
  EXPECT_LE(entry(101)->value.boost_until, 110'000'000'000ull);
  refused(TimeAdvance{50}, Status::Invalid);
  // Once the lineage is gone there is no entry and so no renewal.
  applied(PolicyDelete{PolicyKind::Node, "vllm-enginecore", 0});
  EXPECT_EQ(entry(101), nullptr);
}

TEST_F(CoreTest, Inv8_SliceOnlyPolicyNeverBoosts) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy(1, 0)});
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  const auto* e = entry(101);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->value.exec_class, ExecClass::Normal);
  EXPECT_FALSE(e->value.flags & kFlagBoost);
  EXPECT_EQ(e->value.boost_until, 0u);
  EXPECT_EQ(e->value.slice_ns, 2'000'000u);
  EXPECT_TRUE(e->value.flags & kFlagCustomSlice);
}

// ---- conflicts and strategies --------------------------------------------------------------

TEST_F(DraScenario, TwoPoliciesOnOneThreadResolveDeterministicallyAndReportTheConflict) {
  auto np = engine_policy();
  np.command_regex = "^decode";
  applied(NodePolicyUpsert{np});
  const auto* e = entry(4107);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->origin->kind, PolicyKind::Dra) << "DRA-derived intent wins over a node-wide name match";
  auto conflicts = core.conflicts();
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0].rule, "dra-before-node");
  EXPECT_EQ(conflicts[0].losers.size(), 1u);
}

TEST_F(CoreTest, TwoNodePoliciesPickHigherPriorityThenName) {
  applied(NodeInfoEvent{node_info()});
  auto a = engine_policy();
  a.name = "a-low";
  a.priority = 1;
  auto b = engine_policy();
  b.name = "b-high";
  b.priority = 5;
  applied(NodePolicyUpsert{a});
  applied(NodePolicyUpsert{b});
  applied(TaskSeen{task(101, 101, 5, "EngineCore_DP0")});
  EXPECT_EQ(entry(101)->origin->policy, "b-high");
  EXPECT_EQ(core.conflicts().at(0).rule, "higher-priority");
}

TEST_F(LeaderAndEngine, ExactTidBeatsTgidAndLeaderMatchIsInherited) {
  applied(TaskSeen{task(3786010, 3785998, 12, "tokenizer")});
  EXPECT_EQ(entry(3786004)->origin->policy, "vllm-enginecore");
  EXPECT_EQ(entry(3786004)->strategy, Strategy::ExactTid);
  ASSERT_NE(entry(3786010), nullptr);
  EXPECT_EQ(entry(3786010)->origin->policy, "python-leader");
  EXPECT_EQ(entry(3786010)->strategy, Strategy::Tgid);
  EXPECT_TRUE(entry(3786010)->value.flags & kFlagInherited);
  // Renaming the leader withdraws the inherited entries.
  applied(TaskRenamed{{3785998, 10}, "vllm"});
  EXPECT_EQ(entry(3786010), nullptr);
  EXPECT_NE(entry(3786004), nullptr);
}

TEST_F(CoreTest, PreviewIsReadOnlyAndShowsMatchesConflictsAndWarnings) {
  applied(NodeInfoEvent{node_info()});
  applied(TaskSeen{task(101, 100, 5, "EngineCore_DP0")});
  applied(TaskSeen{task(102, 100, 6, "EngineCore_DP1")});
  applied(TaskSeen{task(100, 100, 4, "python3.12")});
  const std::string before = core.digest();
  PreviewResult pr = core.preview(engine_policy());
  EXPECT_EQ(core.digest(), before);
  ASSERT_EQ(pr.matched.size(), 2u);
  EXPECT_EQ(pr.matched[0].comm, "EngineCore_DP0");
  ASSERT_TRUE(pr.matched[0].intended.has_value());
  EXPECT_EQ(pr.matched[0].intended->slice_ns, 2'000'000u);
  EXPECT_FALSE(pr.matched[0].actual.has_value());
  auto none = engine_policy();
  none.command_regex = "^nothing-here$";
  auto pr2 = core.preview(none);
  EXPECT_TRUE(pr2.matched.empty());
  ASSERT_FALSE(pr2.warnings.empty());
  EXPECT_NE(pr2.warnings.back().find("matches no task"), std::string::npos);
  auto bad = engine_policy();
  bad.command_regex = "(unclosed";
  EXPECT_EQ(core.preview(bad).invalid_field, "commandRegex");
}

// ---- bad input leaves the state unchanged ------------------------------------------------

TEST_F(CoreTest, InvalidInputsNameTheFieldAndChangeNothing) {
  applied(NodeInfoEvent{node_info()});
  auto bad_regex = engine_policy();
  bad_regex.command_regex = "([";
  EXPECT_EQ(refused(NodePolicyUpsert{bad_regex}, Status::Invalid).field, "commandRegex");
  auto bad_slice = engine_policy();
  bad_slice.execution_time = 5;
  EXPECT_EQ(refused(NodePolicyUpsert{bad_slice}, Status::Invalid).field, "executionTime");
  auto unscoped = engine_policy();
  unscoped.node_names.clear();
  EXPECT_EQ(refused(NodePolicyUpsert{unscoped}, Status::Invalid).field, "nodeNames");
  EXPECT_EQ(refused(TaskSeen{task(0, 1, 1, "x")}, Status::Invalid).field, "task.tid");
  EXPECT_EQ(refused(TaskSeen{task(5, 5, 1, "a-comm-that-is-too-long")}, Status::Invalid).field, "task.comm");
  auto dra = decode_policy();
  dra.resource_claims.clear();
  EXPECT_EQ(refused(DraPolicyUpsert{dra}, Status::Invalid).field, "spec.resourceClaims");
  Pod p = decode_pod();
  applied(PodBound{p});
  Pod twin = decode_pod();
  twin.uid = "another";
  EXPECT_EQ(refused(PodBound{twin}, Status::Invalid).field, "pod.cgroup");
}

}  // namespace
}  // namespace c2c::testing
