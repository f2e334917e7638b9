// The intent reasons (issue #14: "reasons name the cause, per task"): lost conflicts and stale
// claims from the core's own accounts.
#include <gtest/gtest.h>

#include "core_fixture.hpp"
#include "daemon/intent_reasons.hpp"

namespace c2c::daemon {
namespace {

using namespace c2c::testing;

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
