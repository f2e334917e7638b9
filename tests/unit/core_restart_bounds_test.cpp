// Issue #12 in the core: a restart rebuilds everything still valid (INV-7 completeness), claim
// tombstones only for deallocations, ignored inputs leave nothing behind, generations are bounded
// and never wrap (INV-4), text fields without NUL bytes, an exact-TID winner reports the TGID match
// it shadows.
#include <cstdint>
#include <limits>

#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

using Status = ApplyResult::Status;

class DraRestart : public CoreTest {
 protected:
  void SetUp() override {
    applied(NodeInfoEvent{node_info()});
    applied(DraPolicyUpsert{decode_policy()});
    observe_world();
    sync();
    ASSERT_NE(entry(4107), nullptr);
  }
  // What the observer and the host plane report after a restart: the same objects, unchanged.
  void observe_world() {
    apply(NodeInfoEvent{node_info()});
    apply(ClaimAllocated{gpu_claim()});
    apply(ClaimAllocated{cpu_claim(CpuSet::range(2, 5))});
    apply(PodBound{decode_pod()});
    apply(TaskSeen{pod_task(4107, 800, "decode_loop", "decode")});
  }
};

TEST_F(DraRestart, Inv7_ClaimReListedAtItsGenerationAfterARestartIsLiveAgain) {
  const RuntimeValue before = entry(4107)->value;
  applied(DaemonRestart{core.generation()});
  ASSERT_EQ(entry(4107), nullptr);
  // Re-listing a claim that was live before the restart, at its unchanged generation, is an
  // observation of the same claim, not a resurrection.
  EXPECT_EQ(apply(ClaimAllocated{gpu_claim()}).status, Status::Applied);
  EXPECT_EQ(apply(ClaimAllocated{cpu_claim(CpuSet::range(2, 5))}).status, Status::Applied);
  applied(PodBound{decode_pod()});
  applied(TaskSeen{pod_task(4107, 800, "decode_loop", "decode")});
  applied(SyncComplete{});
  ASSERT_NE(entry(4107), nullptr) << "the claim-derived entry was lost by the restart";
  EXPECT_EQ(entry(4107)->origin->claims.size(), 2u);
  EXPECT_EQ(entry(4107)->value.allowed, before.allowed);
  EXPECT_GT(entry(4107)->value.generation, before.generation);
  const Plan p = core.plan();
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::Update) << "rewritten at the new generation, never deleted";
}

TEST_F(DraRestart, Inv3_ClaimDeallocatedBeforeTheRestartStaysDeadAtItsGeneration) {
  applied(ClaimDeallocated{kGpuClaim, 1});
  applied(DaemonRestart{core.generation()});
  refused(ClaimAllocated{gpu_claim(1)}, Status::Ignored);
  applied(ClaimAllocated{cpu_claim(CpuSet::range(2, 5))});
  applied(PodBound{decode_pod()});
  applied(TaskSeen{pod_task(4107, 800, "decode_loop", "decode")});
  EXPECT_EQ(entry(4107), nullptr) << "failClosedOnStaleClaim: the gpu claim is dead";
  applied(ClaimAllocated{gpu_claim(2)});  // a new allocation, newer generation
  EXPECT_NE(entry(4107), nullptr);
}

TEST_F(DraRestart, Inv3_ClaimNotYetReListedThenDeallocatedKeepsItsTombstone) {
  applied(DaemonRestart{core.generation()});
  // The claim was deallocated while the daemon was down; the observer reports the deletion.
  applied(ClaimDeallocated{kGpuClaim, 0});
  refused(ClaimAllocated{gpu_claim(1)}, Status::Ignored);
  refused(ClaimDeallocated{kGpuClaim, 1}, Status::Ignored);
}

TEST_F(CoreTest, Inv3_DeallocationOfANeverSeenClaimChangesNothingAndBlocksNothing) {
  applied(NodeInfoEvent{node_info()});
  for (int i = 0; i < 100; ++i) refused(ClaimDeallocated{"never-" + std::to_string(i), 1000}, Status::Ignored);
  // No tombstone was created: a later allocation at any generation goes ahead.
  Claim c = gpu_claim(3);
  c.uid = "never-7";
  applied(ClaimAllocated{c});
  ASSERT_TRUE(core.claim("never-7").has_value());
}

TEST_F(CoreTest, Inv4_PolicyGenerationsAreBoundedAndTheNextOneNeverWraps) {
  applied(NodeInfoEvent{node_info()});
  EXPECT_EQ(refused(NodePolicyUpsert{engine_policy(std::numeric_limits<int64_t>::max())}, Status::Invalid).field,
            "metadata.generation");
  EXPECT_EQ(refused(NodePolicyUpsert{engine_policy(kMaxGeneration + 1)}, Status::Invalid).field,
            "metadata.generation");
  applied(NodePolicyUpsert{engine_policy(kMaxGeneration)});
  auto changed = engine_policy(0);  // "the next one" after 2^53 does not exist
  changed.priority = 7;
  const auto r = refused(NodePolicyUpsert{changed}, Status::Invalid);
  EXPECT_EQ(r.field, "metadata.generation");
  EXPECT_EQ(core.node_policy("vllm-enginecore")->generation, kMaxGeneration);
  // Deletes, previews and deallocations are bounded alike.
  EXPECT_EQ(refused(PolicyDelete{PolicyKind::Node, "vllm-enginecore", kMaxGeneration + 1}, Status::Invalid).field,
            "generation");
  EXPECT_EQ(refused(PreviewAck{PolicyKind::Dra, "llm-decode", -1}, Status::Invalid).field, "generation");
  EXPECT_EQ(refused(ClaimAllocated{gpu_claim(kMaxGeneration + 1)}, Status::Invalid).field, "claim.generation");
  EXPECT_EQ(refused(DaemonRestart{std::numeric_limits<uint64_t>::max()}, Status::Invalid).field,
            "persistedGeneration");
}

TEST_F(CoreTest, Inv4_AForeignKernelEntryAtTheLargestGenerationDoesNotWrapTheRestart) {
  applied(NodeInfoEvent{node_info()});
  applied(NodePolicyUpsert{engine_policy()});
  const uint64_t g = core.generation();
  RuntimeValue foreign;
  foreign.start = 1;
  foreign.generation = std::numeric_limits<uint64_t>::max();
  core.apply(BpfObserved{{ActualEntry{999, foreign}}});  // a foreign writer (INV-4/5 report it)
  const ApplyResult r = core.apply(DaemonRestart{0});
  ASSERT_EQ(r.status, Status::Applied);
  EXPECT_GT(core.generation(), g) << "the generation wrapped";
  EXPECT_LE(core.generation(), static_cast<uint64_t>(kMaxGeneration) + 1);
}

// Issue 45 (b): the bound applies to the node generation, not only to inputs. In-bound inputs (a
// restart at 2^53 - 2) used to carry G past 2^53; the next restart then ignored the node's own
// entries above the bound and G went back (INV-4 in `claim2core replay`).
TEST_F(CoreTest, Inv4_TheNodeGenerationStopsAtTheBoundWithAClearRefusal) {
  constexpr uint64_t kBound = static_cast<uint64_t>(kMaxGeneration);
  applied(NodeInfoEvent{node_info()});
  applied(DaemonRestart{kBound - 2});
  ASSERT_EQ(core.generation(), kBound - 1);
  applied(SyncComplete{});
  applied(NodePolicyUpsert{engine_policy()});
  applied(TaskSeen{task(3786004, 3786004, 11, "EngineCore_DP0")});
  ASSERT_EQ(core.generation(), kBound) << "the last generation is usable";
  ASSERT_NE(entry(3786004), nullptr);
  EXPECT_EQ(entry(3786004)->value.generation, kBound);
  sync();
  // Every event that could change the desired table is refused now, naming INV-4; state unchanged.
  for (const Event& e : std::vector<Event>{TaskSeen{task(3786005, 3786005, 12, "EngineCore_DP1")},
                                           TaskExited{TaskKey{3786004, 11}},
                                           NodePolicyUpsert{engine_policy(2)},
                                           TimeAdvance{core.now() + 1}}) {
    const ApplyResult r = refused(e, Status::Invalid);
    EXPECT_EQ(r.field, "generation") << event_kind(e);
    EXPECT_NE(r.message.find("INV-4"), std::string::npos) << r.message;
  }
  EXPECT_EQ(core.generation(), kBound);
  EXPECT_TRUE(core.check().empty());
  // The map's own accounts still apply (they never move G).
  EXPECT_NE(core.apply(BpfObserved{{}}).status, Status::Invalid);
  EXPECT_NE(core.apply(BpfSynced{}).status, Status::Invalid);
  // A restart has no generation above the bound: refused, naming the field, never a step back.
  const ApplyResult r = refused(DaemonRestart{kBound}, Status::Invalid);
  EXPECT_EQ(r.field, "persistedGeneration");
  EXPECT_NE(r.message.find("INV-4"), std::string::npos) << r.message;
  EXPECT_EQ(core.generation(), kBound);
}

TEST_F(CoreTest, Inv4_ARestartAtOrNextToTheBoundIsRefusedOrStopsAtIt) {
  constexpr uint64_t kBound = static_cast<uint64_t>(kMaxGeneration);
  applied(NodeInfoEvent{node_info()});
  // Persisted exactly 2^53: the restart's G would be 2^53 + 1.
  EXPECT_EQ(refused(DaemonRestart{kBound}, Status::Invalid).field, "persistedGeneration");
  // A kernel entry at exactly 2^53 (in bound as an input): the same. (core.apply: a foreign entry
  // above G is an INV-4/INV-5 report of check(), which the fixture's apply would fail on.)
  RuntimeValue at;
  at.start = 1;
  at.generation = kBound;
  core.apply(BpfObserved{{ActualEntry{999, at}}});
  const std::string before = core.digest();
  const ApplyResult r = core.apply(DaemonRestart{5});
  EXPECT_EQ(r.status, Status::Invalid);
  EXPECT_EQ(r.field, "entries.generation");
  EXPECT_EQ(core.digest(), before);
  // One below: G = 2^53, the last one.
  at.generation = kBound - 1;
  core.apply(BpfObserved{{ActualEntry{999, at}}});
  EXPECT_EQ(core.apply(DaemonRestart{5}).status, Status::Applied);
  EXPECT_EQ(core.generation(), kBound);
}

TEST_F(CoreTest, NulBytesAreRefusedInEveryTextField) {
  applied(NodeInfoEvent{node_info()});
  const std::string nul("a\0b", 3);
  Claim c = gpu_claim();
  c.uid = nul;
  EXPECT_EQ(refused(ClaimAllocated{c}, Status::Invalid).field, "claim.uid");
  c = gpu_claim();
  c.reserved_for = {nul};
  EXPECT_EQ(refused(ClaimAllocated{c}, Status::Invalid).field, "claim.reservedFor[0]");
  c = gpu_claim();
  c.devices[0].driver = nul;
  EXPECT_EQ(refused(ClaimAllocated{c}, Status::Invalid).field, "claim.devices[0].driver");
  EXPECT_EQ(refused(ClaimDeallocated{nul, 0}, Status::Invalid).field, "uid");
  Pod p = decode_pod();
  p.uid = nul;
  EXPECT_EQ(refused(PodBound{p}, Status::Invalid).field, "pod.uid");
  p = decode_pod();
  p.labels = {{"role", nul}};
  EXPECT_EQ(refused(PodBound{p}, Status::Invalid).field, "pod.labels[role]");
  EXPECT_EQ(refused(PodRemoved{nul}, Status::Invalid).field, "uid");
  EXPECT_EQ(refused(TaskSeen{task(5, 5, 1, nul)}, Status::Invalid).field, "task.comm");
  EXPECT_EQ(refused(TaskSeen{task(5, 5, 1, "ok", "/a" + nul)}, Status::Invalid).field, "task.cgroup");
  EXPECT_EQ(refused(TaskSeen{task(5, 5, 1, "ok", "/a", nul)}, Status::Invalid).field, "task.role");
  applied(TaskSeen{task(5, 5, 1, "ok")});
  // A newline is a byte of a comm like any other (the kernel keeps it; names are bytes, issue 42).
  applied(TaskRenamed{{5, 1}, "x\ny"});
  EXPECT_EQ(refused(TaskRenamed{{5, 1}, nul}, Status::Invalid).field, "comm");
  auto np = engine_policy();
  np.node_names = {nul};
  EXPECT_EQ(refused(NodePolicyUpsert{np}, Status::Invalid).field, "nodeNames[0]");
  auto dra = decode_policy();
  dra.task_roles[0].registered_role = nul;
  EXPECT_EQ(refused(DraPolicyUpsert{dra}, Status::Invalid).field, "spec.taskRoles[0].selector.registeredRole");
  EXPECT_EQ(refused(PolicyDelete{PolicyKind::Node, nul, 0}, Status::Invalid).field, "name");
  NodeInfo n = node_info();
  n.name = nul;
  EXPECT_EQ(refused(NodeInfoEvent{n}, Status::Invalid).field, "node.name");
}

TEST_F(CoreTest, AnEmptyPodCpusetIsInvalidLikeAnEmptyTaskCpuset) {
  applied(NodeInfoEvent{node_info()});
  applied(DraPolicyUpsert{decode_policy()});
  applied(ClaimAllocated{gpu_claim()});
  applied(ClaimAllocated{cpu_claim(CpuSet::range(2, 5))});
  EXPECT_EQ(refused(PodBound{decode_pod(CpuSet{})}, Status::Invalid).field, "pod.cpuset");
}

TEST_F(LeaderAndEngine, AnExactTidWinnerReportsTheTgidMatchItShadows) {
  EXPECT_EQ(entry(3786004)->origin->policy, "vllm-enginecore");
  const auto cs = core.conflicts();
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].task.tid, 3786004u);
  EXPECT_EQ(cs[0].winner, "NodeSchedulingPolicy/vllm-enginecore");
  EXPECT_EQ(cs[0].losers, std::vector<std::string>{"NodeSchedulingPolicy/python-leader"});
  EXPECT_EQ(cs[0].rule, "exact-tid-before-tgid");
  // The preview of the shadowed policy shows the thread, with no value: it loses.
  const PreviewResult pr = core.preview(leader_policy);
  bool shown = false;
  for (const auto& m : pr.matched)
    if (m.key.tid == 3786004) {
      shown = true;
      EXPECT_EQ(m.strategy, Strategy::Tgid);
      EXPECT_FALSE(m.intended.has_value());
    }
  EXPECT_TRUE(shown);
  // A policy that matches the thread itself and its leader is not listed as its own loser.
  auto both = engine_policy(2);
  both.command_regex = "^(python3\\.12|EngineCore_DP0)$";
  applied(NodePolicyUpsert{both});
  for (const auto& c : core.conflicts())
    for (const auto& l : c.losers) EXPECT_NE(l, c.winner);
}

}  // namespace
}  // namespace c2c::testing
