// The engine's incremental reconcile pieces (spec/daemon.md, "Incremental reconcile"): the
// per-policy counts kept from the TIDs a turn touched must equal a full recount after every
// step (the recount is the oracle), and the retry queue backs off without anybody sleeping.
#include <gtest/gtest.h>

#include "core_fixture.hpp"
#include "daemon/node_state/policy_facts.hpp"
#include "daemon/reconciler/retry_queue.hpp"

namespace c2c::daemon {
namespace {

using namespace c2c::testing;

// Applies e and feeds its changed TIDs plus every TID of the plan delta to the incremental
// counter, as the engine does. A turn that does not write (sync false) keeps its delta's TIDs
// owed, like the engine's retry queue, and the next write carries them. Then compares the
// counter with a fresh full recount.
void step(Core& core, PolicyFacts& inc, std::vector<uint32_t>& owed, const Event& e, bool sync) {
  auto r = core.apply(e);
  ASSERT_TRUE(r.ok()) << r.field << ": " << r.message;
  std::vector<uint32_t> tids = r.changed_tids;
  Plan delta = core.take_plan_delta();
  for (const auto& op : delta.ops) owed.push_back(op.tid);
  if (sync && !owed.empty()) {
    core.apply(BpfSynced{});
    tids.insert(tids.end(), owed.begin(), owed.end());
    owed.clear();
  }
  inc.update(core, tids);
  PolicyFacts full;
  full.recount(core);
  auto a = inc.facts(), b = full.facts();
  ASSERT_EQ(a.size(), b.size()) << event_kind(e);
  for (const auto& [id, f] : b) {
    ASSERT_TRUE(a.count(id)) << id.second;
    EXPECT_EQ(a[id].matched, f.matched) << id.second << " after " << event_kind(e);
    EXPECT_EQ(a[id].in_map, f.in_map) << id.second << " after " << event_kind(e);
  }
}

TEST(PolicyFacts, IncrementalCountsEqualAFullRecountAfterEveryStep) {
  Core core;
  ASSERT_TRUE(core.apply(NodeInfoEvent{node_info()}).ok());
  ASSERT_TRUE(core.apply(SyncComplete{}).ok());
  PolicyFacts inc;
  inc.recount(core);
  std::vector<uint32_t> owed;
  step(core, inc, owed, NodePolicyUpsert{comm_policy("a", 1, "^w", 1)}, true);
  for (uint32_t t = 100; t < 110; ++t) step(core, inc, owed, TaskSeen{task(t, 100, 1000 + t, "worker")}, t % 2 == 0);
  auto f = inc.facts();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f.begin()->second.matched, 10u);
  EXPECT_LT(f.begin()->second.in_map, 10u) << "unsynced turns leave entries out of the map";
  step(core, inc, owed, TimeAdvance{1}, true);  // the next write carries what was owed
  EXPECT_EQ(inc.facts().begin()->second.in_map, 10u);
  // A higher-priority policy takes the same TIDs over: they move between policies.
  step(core, inc, owed, NodePolicyUpsert{comm_policy("b", 1, "^work", 5)}, true);
  EXPECT_EQ(inc.facts().size(), 1u);
  EXPECT_EQ(inc.facts().begin()->first.second, "b");
  step(core, inc, owed, TaskRenamed{TaskKey{103, 1103}, "idle"}, true);
  step(core, inc, owed, TaskExited{TaskKey{104, 1104}}, false);
  step(core, inc, owed, PolicyDelete{PolicyKind::Node, "b", 1}, true);
  EXPECT_EQ(inc.facts().begin()->first.second, "a");
  step(core, inc, owed, PolicyDelete{PolicyKind::Node, "a", 1}, true);
  EXPECT_TRUE(inc.facts().empty());
}

TEST(RetryQueue, BacksOffPerTidAndForgetsResolvedOnes) {
  RetryQueue q(mirror::RetryPolicy{1, std::chrono::milliseconds(1), std::chrono::milliseconds(4)});
  EXPECT_FALSE(q.next_due());
  q.failed(7, 1'000'000);
  q.failed(9, 1'500'000);
  EXPECT_EQ(q.next_due(), 2'000'000u);
  EXPECT_TRUE(q.due(1'999'999).empty());
  EXPECT_EQ(q.due(2'600'000), (std::vector<uint32_t>{7, 9}));
  q.failed(7, 2'000'000);  // second failure: 2 ms
  q.failed(7, 4'000'000);  // third: 4 ms (the cap)
  q.failed(7, 8'000'000);  // still 4 ms
  EXPECT_EQ(q.due(11'999'999), (std::vector<uint32_t>{9}));
  EXPECT_EQ(q.due(12'000'000), (std::vector<uint32_t>{9, 7}));
  q.resolved(9);
  q.resolved(42);  // unknown: nothing
  EXPECT_EQ(q.size(), 1u);
  q.resolved(7);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.next_due());
}

}  // namespace
}  // namespace c2c::daemon
