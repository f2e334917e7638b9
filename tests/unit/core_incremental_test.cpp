// The incremental half of the Core API (issue #13): take_plan_delta(), next_deadline(),
// apply_all(). The property suite (tests/property, IncrementalOracle) checks the delta against the
// full plan on random traces; these are the readable cases.
#include <gtest/gtest.h>

#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

std::vector<uint32_t> tids_of(const Plan& p) {
  std::vector<uint32_t> out;
  for (const auto& op : p.ops) out.push_back(op.tid);
  return out;
}

class Incremental : public CoreTest {
 protected:
  void SetUp() override {
    applied(NodeInfoEvent{node_info()});
    applied(NodePolicyUpsert{engine_policy()});
    applied(TaskSeen{task(100, 100, 10, "EngineCore_DP0")});
    applied(TaskSeen{task(200, 200, 20, "EngineCore_DP1")});
  }
};

TEST_F(Incremental, DeltaHoldsOnlyWhatChangedSinceTheLastCall) {
  Plan first = core.take_plan_delta();
  EXPECT_EQ(tids_of(first), (std::vector<uint32_t>{100, 200}));
  EXPECT_EQ(tids_of(core.plan()), (std::vector<uint32_t>{100, 200}));
  EXPECT_TRUE(core.take_plan_delta().ops.empty()) << "a second call with nothing changed yields nothing";

  applied(TaskSeen{task(300, 300, 30, "EngineCore_DP2")});
  Plan second = core.take_plan_delta();
  ASSERT_EQ(tids_of(second), (std::vector<uint32_t>{300}));
  EXPECT_EQ(second.ops[0].kind, PlanOp::Kind::Add);
  // Exactly the op the full plan has for that tid.
  const Plan full = core.plan();
  auto it = std::find_if(full.ops.begin(), full.ops.end(), [](const PlanOp& op) { return op.tid == 300; });
  ASSERT_NE(it, full.ops.end());
  EXPECT_EQ(it->value, second.ops[0].value);
  EXPECT_EQ(it->reason, second.ops[0].reason);
}

TEST_F(Incremental, SyncThenExitYieldsTheDeleteWithItsReason) {
  sync();
  core.take_plan_delta();
  EXPECT_TRUE(core.plan().ops.empty());
  applied(TaskExited{TaskKey{200, 20}});
  Plan d = core.take_plan_delta();
  ASSERT_EQ(d.ops.size(), 1u);
  EXPECT_EQ(d.ops[0].kind, PlanOp::Kind::Delete);
  EXPECT_EQ(d.ops[0].tid, 200u);
  EXPECT_EQ(d.ops[0].reason, "task 200 exited");
}

TEST_F(Incremental, DeletesWaitForLoadingAndComeWithSyncComplete) {
  sync();
  core.take_plan_delta();
  applied(DaemonRestart{});
  Plan loading = core.take_plan_delta();
  EXPECT_TRUE(loading.ops.empty()) << "nothing is pruned while loading (INV-7)";
  EXPECT_EQ(loading.deferred_deletes, (std::vector<uint32_t>{100, 200}));
  applied(TaskSeen{task(100, 100, 10, "EngineCore_DP0")});
  Plan reobserved = core.take_plan_delta();
  ASSERT_EQ(tids_of(reobserved), (std::vector<uint32_t>{100}));
  EXPECT_EQ(reobserved.ops[0].kind, PlanOp::Kind::Update);
  applied(SyncComplete{});
  Plan pruned = core.take_plan_delta();
  ASSERT_EQ(tids_of(pruned), (std::vector<uint32_t>{200}));
  EXPECT_EQ(pruned.ops[0].kind, PlanOp::Kind::Delete);
}

TEST_F(Incremental, AReadBackRestoresWhatTheMapLost) {
  sync();
  core.take_plan_delta();
  applied(BpfObserved{{}});  // the map was emptied behind the daemon's back
  EXPECT_EQ(tids_of(core.take_plan_delta()), (std::vector<uint32_t>{100, 200}));
}

TEST_F(Incremental, NextDeadlineIsTheEarliestLeaseRenewal) {
  // Both entries boost (priority 1): max boost is the node default, renewed at half-life.
  const Nanos half = node_info().default_max_boost / 2;
  ASSERT_TRUE(core.next_deadline());
  EXPECT_EQ(*core.next_deadline(), half);
  applied(TimeAdvance{half});
  EXPECT_EQ(*core.next_deadline(), 2 * half) << "the renewed leases move the deadline";
  applied(TaskExited{TaskKey{100, 10}});
  applied(TaskExited{TaskKey{200, 20}});
  EXPECT_FALSE(core.next_deadline()) << "no lease, no deadline";
}

TEST_F(Incremental, ABatchWithOneRefusedEventChangesNothing) {
  const std::string before = core.digest();
  Pod a = decode_pod();
  Pod b = decode_pod();
  b.uid = "other-pod";  // same cgroup as a: refused (pod.cgroup)
  BatchResult r = core.apply_all({Event{PodBound{a}}, Event{TaskSeen{task(300, 300, 30, "EngineCore_DP2")}},
                                  Event{PodBound{b}}});
  EXPECT_FALSE(r.ok());
  ASSERT_TRUE(r.invalid);
  EXPECT_EQ(*r.invalid, 2u);
  EXPECT_EQ(r.refusal.field, "pod.cgroup");
  EXPECT_TRUE(r.results.empty());
  EXPECT_EQ(core.digest(), before) << "all or nothing: the first two events were not applied";
}

TEST_F(Incremental, ABatchThatIsValidEqualsTheEventsOneByOne) {
  Core one_by_one = core;
  std::vector<Event> batch{Event{ClaimAllocated{gpu_claim()}}, Event{PodBound{decode_pod()}},
                           Event{TaskSeen{task(300, 300, 30, "EngineCore_DP2")}},
                           Event{TaskSeen{task(300, 300, 30, "EngineCore_DP2")}}};
  BatchResult r = core.apply_all(batch);
  ASSERT_TRUE(r.ok()) << r.refusal.field << " " << r.refusal.message;
  ASSERT_EQ(r.results.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    ApplyResult want = one_by_one.apply(batch[i]);
    EXPECT_EQ(r.results[i].status, want.status) << i;
    EXPECT_EQ(r.results[i].changed_tids, want.changed_tids) << i;
  }
  EXPECT_EQ(r.results[3].status, ApplyResult::Status::Ignored) << "a duplicate in the batch is ignored, not refused";
  EXPECT_EQ(core.digest(), one_by_one.digest());
  EXPECT_TRUE(core.check().empty());
}

TEST_F(Incremental, ARefusalLaterInTheBatchSeesWhatEarlierEventsDid) {
  // The second upsert of the same claim changes it without a new generation: refused because the
  // first one (in the same batch) put that generation in place.
  Claim changed = gpu_claim();
  changed.devices[0].device = "gpu-1";
  const std::string before = core.digest();
  BatchResult r = core.apply_all({Event{ClaimAllocated{gpu_claim()}}, Event{ClaimUpdated{changed}}});
  ASSERT_TRUE(r.invalid);
  EXPECT_EQ(*r.invalid, 1u);
  EXPECT_EQ(r.refusal.field, "claim.generation");
  EXPECT_EQ(core.digest(), before);
}

}  // namespace
}  // namespace c2c::testing
