// The task-event path's memo (CoreImpl::derivation, DeriveMemo, issue #13): a task derives exactly
// what the plain computation gives, whatever the memo holds from earlier tasks. Each test makes a
// memoized result wrong for the next task in one way (a reused intern id, a policy, pod, claim or
// node change, a leader that changed) and checks the next task's entry.
#include <gtest/gtest.h>

#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

class DeriveMemo : public CoreTest {
 protected:
  void SetUp() override {
    applied(NodeInfoEvent{node_info()});
    applied(NodePolicyUpsert{engine_policy()});
  }
  bool has_entry(uint32_t tid) const { return core.desired().count(tid) == 1; }
};

// The memo names a text by its intern id and serial: an id that the pool hands to another text
// after the last task holding the first one left is another key.
TEST_F(DeriveMemo, AReusedInternIdIsAnotherText) {
  applied(TaskSeen{task(100, 100, 1, "EngineCore_DP0")});
  ASSERT_TRUE(has_entry(100));
  applied(TaskExited{{100, 1}});  // EngineCore_DP0's id is free again
  // The next new text takes that id (its cgroup is the one the pool still holds).
  applied(TaskSeen{task(101, 101, 2, "python3")});
  EXPECT_FALSE(has_entry(101)) << "a thread named python3 got the entry the freed EngineCore_DP0 had derived";
  applied(TaskSeen{task(102, 102, 3, "EngineCore_DP0")});
  EXPECT_TRUE(has_entry(102));
}

// A policy event clears the memo: the same inputs derive anew under the new spec.
TEST_F(DeriveMemo, APolicyChangeDerivesAnew) {
  applied(TaskSeen{task(100, 100, 1, "EngineCore_DP0")});
  ASSERT_TRUE(has_entry(100));
  EXPECT_EQ(core.desired().at(100).value.slice_ns, 2'000'000u);
  NodeSchedulingPolicy p = engine_policy(2);
  p.execution_time = 5'000'000;
  applied(NodePolicyUpsert{p});
  applied(TaskSeen{task(101, 101, 2, "EngineCore_DP0")});
  EXPECT_EQ(core.desired().at(101).value.slice_ns, 5'000'000u) << "the new thread got the old generation's slice";
  applied(PolicyDelete{PolicyKind::Node, p.name, 0});
  applied(TaskSeen{task(102, 102, 3, "EngineCore_DP0")});
  EXPECT_FALSE(has_entry(102)) << "a deleted policy still derives entries";
}

// The node's labels decide whether a selector-bearing policy selects it: a NodeLabels event must
// not leave a memoized "selected".
TEST_F(DeriveMemo, ANodeThatStopsBeingSelectedDerivesNothing) {
  NodeSchedulingPolicy p = engine_policy(2);
  p.node_selectors = {{"gpu", "h100"}};
  applied(NodeLabels{{{"gpu", "h100"}}});
  applied(NodePolicyUpsert{p});
  applied(TaskSeen{task(100, 100, 1, "EngineCore_DP0")});
  ASSERT_TRUE(has_entry(100));
  applied(NodeLabels{{{"gpu", "a100"}}});
  EXPECT_FALSE(has_entry(100));
  applied(TaskSeen{task(101, 101, 2, "EngineCore_DP0")});
  EXPECT_FALSE(has_entry(101)) << "a thread derived from the node's former labels";
}

// A thread's TGID fallback depends on its leader's name: threads of two leaders named differently
// share every input but the leader's, and must not share a result.
TEST_F(DeriveMemo, TheLeadersNameIsPartOfTheInputs) {
  applied(TaskSeen{task(200, 200, 1, "EngineCore_DP0")});
  applied(TaskSeen{task(201, 200, 2, "worker")});
  ASSERT_TRUE(has_entry(201));
  EXPECT_EQ(core.desired().at(201).strategy, Strategy::Tgid);
  applied(TaskSeen{task(300, 300, 3, "python3")});
  applied(TaskSeen{task(301, 300, 4, "worker")});
  EXPECT_FALSE(has_entry(301)) << "a thread inherited a match its own leader does not have";
  // The leader renames itself: its threads follow (re-derived), new ones too.
  applied(TaskRenamed{{300, 3}, "EngineCore_DP1"});
  EXPECT_TRUE(has_entry(301));
  applied(TaskSeen{task(302, 300, 5, "worker")});
  EXPECT_TRUE(has_entry(302));
  // A thread whose leader is not (or no longer) a live task inherits nothing.
  applied(TaskExited{{300, 3}});
  applied(TaskSeen{task(303, 300, 6, "worker")});
  EXPECT_FALSE(has_entry(303));
}

// The claims behind a DRA entry: a deallocation clears the memo, so a pod thread seen afterwards
// gets no entry from the dead claim (INV-1).
TEST_F(DeriveMemo, ADeallocatedClaimDerivesNothingForTheNextThread) {
  applied(ClaimAllocated{gpu_claim()});
  applied(ClaimAllocated{cpu_claim(CpuSet::range(0, 3))});
  applied(PodBound{decode_pod()});
  applied(DraPolicyUpsert{decode_policy()});
  applied(TaskSeen{pod_task(4102, 1, "decode_loop", "decode")});
  ASSERT_TRUE(has_entry(4102));
  applied(ClaimDeallocated{kGpuClaim, 1});
  applied(ClaimDeallocated{kCpuClaim, 1});
  applied(TaskSeen{pod_task(4103, 2, "decode_loop", "decode")});
  EXPECT_FALSE(has_entry(4103)) << "INV-1: a thread derived an entry from deallocated claims";
}

// The memo is given back as tasks leave (issue #13: memory is returned when tasks exit), and a
// copy of the core derives the same as the original (the copy starts with an empty memo).
TEST_F(DeriveMemo, ACopyDerivesAsTheOriginal) {
  for (uint32_t i = 0; i < 50; ++i) applied(TaskSeen{task(1000 + i, 1000 + i, i + 1, "EngineCore_DP" + std::to_string(i))});
  Core copy = core;
  copy.apply(TaskSeen{task(2000, 2000, 100, "EngineCore_DP3")});
  core.apply(TaskSeen{task(2000, 2000, 100, "EngineCore_DP3")});
  EXPECT_EQ(copy.digest(), core.digest());
}

// Core::prefetch is a hint: it changes nothing, for a known task, an unknown one or a non-task event.
TEST_F(DeriveMemo, APrefetchChangesNothing) {
  applied(TaskSeen{task(100, 100, 1, "EngineCore_DP0")});
  const std::string before = core.digest();
  core.prefetch(TaskSeen{task(101, 100, 2, "worker")});
  core.prefetch(TaskExited{{100, 1}});
  core.prefetch(TaskExited{{999, 1}});
  core.prefetch(NodePolicyUpsert{engine_policy(2)});
  core.prefetch_task(0, 0);
  core.prefetch_task(4242, 4242);
  EXPECT_EQ(core.digest(), before);
}

}  // namespace
}  // namespace c2c::testing
