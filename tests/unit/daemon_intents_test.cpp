// The intents' pure pieces (issue #14, "intents that tell the truth"): the states (APPLIED only
// after a read-back, nothing in the map is PENDING), the confirmed counts, the reasons from the
// core's own accounts. Built from the daemon's sources against the core alone
// (tests/unit/daemon_intents.cmake), so tests/mutants/mutate.py mirror seeds bugs in them cheaply.
#include <gtest/gtest.h>

#include "core_fixture.hpp"
#include "daemon/node_state/intent_reasons.hpp"
#include "daemon/node_state/intents.hpp"
#include "daemon/node_state/policy_facts.hpp"

namespace c2c::daemon {
namespace {

using namespace c2c::testing;

TEST(DaemonIntents, Transitions) {
  IntentTable t;
  t.accepted(PolicyKind::Node, "a", 1, "n", {}, 10);
  t.accepted(PolicyKind::Dra, "b", 4, "n", {}, 10);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Pending);
  t.waiting(PolicyKind::Dra, "b", "requirePreview: waiting", 11);

  // Written, not read back: SENT, never APPLIED.
  std::map<PolicyId, PolicyApplyFacts> facts;
  facts[{PolicyKind::Node, "a"}] = PolicyApplyFacts{3, 3, 0, ""};
  t.settled(facts, "", 12);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Sent);
  EXPECT_NE(t.find(PolicyKind::Node, "a")->reason.find("not yet read back"), std::string::npos);
  EXPECT_EQ(t.find(PolicyKind::Dra, "b")->state, IntentState::Pending);
  EXPECT_EQ(t.find(PolicyKind::Dra, "b")->reason, "requirePreview: waiting");
  // Two of three read back: still SENT; all three: APPLIED.
  facts[{PolicyKind::Node, "a"}] = PolicyApplyFacts{3, 3, 2, ""};
  t.settled(facts, "", 13);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Sent);
  facts[{PolicyKind::Node, "a"}] = PolicyApplyFacts{3, 3, 3, ""};
  t.settled(facts, "", 13);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Applied);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->matched_tasks, 3u);
  EXPECT_NE(t.find(PolicyKind::Node, "a")->reason.find("read back"), std::string::npos);

  // A write failure of one of its entries: FAILED with the reason; owed writes (the lease) too.
  facts[{PolicyKind::Node, "a"}] = PolicyApplyFacts{3, 2, 2, "tid 7 add: failed (E2BIG): map full (2/2)"};
  t.settled(facts, "map full", 14);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Failed);
  EXPECT_NE(t.find(PolicyKind::Node, "a")->reason.find("map full"), std::string::npos);
  facts[{PolicyKind::Node, "a"}] = PolicyApplyFacts{3, 2, 2, ""};
  t.settled(facts, "generation lease: no space", 14);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->reason, "generation lease: no space");
  // Nothing to write is not applied: PENDING, with the diagnosis or "matches no task".
  facts.erase({PolicyKind::Node, "a"});
  t.settled(facts, "", 15);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Pending);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->reason, "matches no task on this node");
  t.diagnosed(PolicyKind::Node, "a", "lost the conflict to NodeSchedulingPolicy/z (higher-priority) on tid 7");
  t.settled(facts, "", 15);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Pending);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->reason, "lost the conflict to NodeSchedulingPolicy/z (higher-priority) on tid 7");
  // A part lost, the rest read back: APPLIED, and the reason says what was lost.
  facts[{PolicyKind::Node, "a"}] = PolicyApplyFacts{1, 1, 1, ""};
  t.settled(facts, "", 16);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Applied);
  EXPECT_NE(t.find(PolicyKind::Node, "a")->reason.find("; lost the conflict to NodeSchedulingPolicy/z"), std::string::npos);

  // A new generation replaces the intent; a delete removes it.
  t.accepted(PolicyKind::Node, "a", 2, "n", {"w"}, 16);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->generation, 2);
  EXPECT_EQ(t.find(PolicyKind::Node, "a")->state, IntentState::Pending);
  EXPECT_EQ(t.size(), 2u);
  t.removed(PolicyKind::Node, "a");
  EXPECT_EQ(t.find(PolicyKind::Node, "a"), nullptr);
  EXPECT_EQ(t.list("b").size(), 1u);
  EXPECT_EQ(t.list("", PolicyKind::Node).size(), 0u);
}

// APPLIED needs a read-back (issue #14): an entry counts as confirmed only after confirm(), keeps
// it across a rewrite for the same policy generation, and loses it for a new generation.
// The version grows with every change of what list() returns, and only then: the loop publishes
// (Watch, the log) by comparing lists only when it moved.
TEST(DaemonIntents, TheVersionMovesExactlyWhenAnIntentChanges) {
  IntentTable t;
  uint64_t v = t.version();
  t.accepted(PolicyKind::Node, "a", 1, "n", {}, 10);
  EXPECT_GT(t.version(), v);
  std::map<PolicyId, PolicyApplyFacts> facts;
  facts[{PolicyKind::Node, "a"}] = PolicyApplyFacts{2, 2, 0, ""};
  v = t.version();
  t.settled(facts, "", 11);
  EXPECT_GT(t.version(), v) << "PENDING -> SENT";
  const auto before = t.list();
  v = t.version();
  t.settled(facts, "", 12);
  t.diagnosed(PolicyKind::Node, "a", "");
  EXPECT_EQ(t.version(), v) << "the same facts again: nothing changed";
  EXPECT_EQ(t.list(), before);
  facts[{PolicyKind::Node, "a"}] = PolicyApplyFacts{2, 2, 2, ""};
  t.settled(facts, "", 13);
  EXPECT_GT(t.version(), v) << "SENT -> APPLIED";
  v = t.version();
  t.waiting(PolicyKind::Node, "a", "requirePreview: waiting", 14);
  EXPECT_GT(t.version(), v);
  v = t.version();
  t.removed(PolicyKind::Node, "nothing");
  EXPECT_EQ(t.version(), v) << "removing what is not there changes nothing";
  t.removed(PolicyKind::Node, "a");
  EXPECT_GT(t.version(), v);
  v = t.version();
  t.restore({});
  EXPECT_GT(t.version(), v);
}

TEST(PolicyFacts, ConfirmedOnlyAfterAReadBackAndPerPolicyGeneration) {
  Core core;
  ASSERT_TRUE(core.apply(NodeInfoEvent{node_info()}).ok());
  ASSERT_TRUE(core.apply(SyncComplete{}).ok());
  PolicyFacts f;
  f.recount(core);
  auto write = [&](const Event& e) {
    auto r = core.apply(e);
    ASSERT_TRUE(r.ok()) << r.field << ": " << r.message;
    std::vector<uint32_t> tids = r.changed_tids;
    for (const auto& op : core.take_plan_delta().ops) tids.push_back(op.tid);
    core.apply(BpfSynced{});
    f.update(core, tids);
  };
  write(NodePolicyUpsert{comm_policy("a", 1, "^w", 1)});
  write(TaskSeen{task(100, 100, 1100, "worker")});
  write(TaskSeen{task(101, 100, 1101, "worker")});
  auto a = [&] { return f.facts().at({PolicyKind::Node, "a"}); };
  EXPECT_EQ(a().in_map, 2u);
  EXPECT_EQ(a().confirmed, 0u) << "written is not read back";
  EXPECT_TRUE(f.confirm());
  EXPECT_EQ(a().confirmed, 2u);
  EXPECT_FALSE(f.confirm()) << "nothing new to confirm";
  write(TaskSeen{task(102, 100, 1102, "worker")});
  EXPECT_EQ(a().matched, 3u);
  EXPECT_EQ(a().confirmed, 2u) << "a task that joins the policy waits for the next read-back";
  PolicyFacts full;  // a recount carries what was confirmed, never confirms by itself
  full.recount(core);
  EXPECT_EQ(full.facts().at({PolicyKind::Node, "a"}).confirmed, 0u);
  f.recount(core);
  EXPECT_EQ(a().confirmed, 2u);
  write(NodePolicyUpsert{comm_policy("a", 2, "^w", 1)});
  EXPECT_EQ(a().in_map, 3u);
  EXPECT_EQ(a().confirmed, 0u) << "a new policy generation is not read back yet";
}

TEST(IntentReasons, LostConflictsNameTheWinnerTheRuleAndTheTids) {
  Core core;
  ASSERT_TRUE(core.apply(NodeInfoEvent{node_info()}).ok());
  ASSERT_TRUE(core.apply(SyncComplete{}).ok());
  NodeSchedulingPolicy lo = engine_policy(1, 1), hi = engine_policy(1, 5);
  lo.name = "low";
  hi.name = "high";
  lo.command_regex = hi.command_regex = "^w";
  ASSERT_TRUE(core.apply(NodePolicyUpsert{lo}).ok());
  ASSERT_TRUE(core.apply(NodePolicyUpsert{hi}).ok());
  for (uint32_t t = 200; t < 203; ++t) ASSERT_TRUE(core.apply(TaskSeen{task(t, t, 1000 + t, "worker")}).ok());
  auto lost = lost_conflicts(core.conflicts());
  ASSERT_EQ(lost.count("NodeSchedulingPolicy/low"), 1u);
  EXPECT_EQ(lost.count("NodeSchedulingPolicy/high"), 0u);
  EXPECT_EQ(intent_diagnosis("NodeSchedulingPolicy/low", {}, lost),
            "lost the conflict to NodeSchedulingPolicy/high (higher-priority) on tids 200, 201, 202");
  EXPECT_EQ(intent_diagnosis("NodeSchedulingPolicy/high", {}, lost), "");
}

TEST(IntentReasons, StaleClaimLeadsWithTheClaimUidAndFailsClosed) {
  Core core;
  ASSERT_TRUE(core.apply(NodeInfoEvent{node_info()}).ok());
  ASSERT_TRUE(core.apply(SyncComplete{}).ok());
  DraExecutionPolicy p = decode_policy(1);
  p.fail_closed_on_stale_claim = true;
  ASSERT_TRUE(core.apply(DraPolicyUpsert{p}).ok());
  Pod pod = decode_pod();
  ASSERT_TRUE(core.apply(PodBound{pod}).ok());  // its claims were never allocated: stale
  auto stale = core.stale_claims(p);
  ASSERT_FALSE(stale.empty());
  const std::string key = "DRAExecutionPolicy/" + p.name;
  std::string why = intent_diagnosis(key, stale, {});
  const std::string uid = pod.claims.begin()->second;
  EXPECT_EQ(why.rfind("claim " + uid + " stale (fail closed)", 0), 0u) << why;
  EXPECT_EQ(why.find(key), std::string::npos) << "the policy's own name is not repeated: " << why;
}

}  // namespace
}  // namespace c2c::daemon
