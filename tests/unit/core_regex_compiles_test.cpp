// One validation whose compiled result the core reuses (issue 44): each RE2 pattern of a policy or
// pod is compiled once on its way in (validation compiles it, the stored state keeps that
// object), counted by regex_compiles(). Before, validate() compiled a throw-away copy and the
// stored state compiled the pattern again (2 per pattern).
#include <gtest/gtest.h>

#include "core/core_impl.hpp"
#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

// RE2 compiles of one Core::apply (without the fixture's invariant checks, which are not the
// policy's way in).
uint64_t compiles_of(Core& core, const Event& e, ApplyResult::Status want = ApplyResult::Status::Applied) {
  const uint64_t before = regex_compiles();
  auto r = core.apply(e);
  EXPECT_EQ(r.status, want) << r.field << ": " << r.message;
  return regex_compiles() - before;
}

class RegexCompiles : public CoreTest {
 protected:
  void SetUp() override { applied(NodeInfoEvent{node_info()}); }
};

TEST_F(RegexCompiles, ANodePolicyCompilesEachPatternOnce) {
  auto p = engine_policy();
  p.process_regex = "vllm serve";
  EXPECT_EQ(compiles_of(core, NodePolicyUpsert{p}), 2u) << "commandRegex and processRegex, once each";
  ASSERT_EQ(core.apply(TaskSeen{task(100, 100, 1, "EngineCore_DP0")}).status, ApplyResult::Status::Applied);
}

TEST_F(RegexCompiles, AStoredPatternStillMatches) {
  EXPECT_EQ(compiles_of(core, NodePolicyUpsert{engine_policy()}), 1u);
  ASSERT_EQ(core.apply(TaskSeen{task(100, 100, 1, "EngineCore_DP0")}).status, ApplyResult::Status::Applied);
  ASSERT_EQ(core.apply(TaskSeen{task(101, 101, 1, "python3")}).status, ApplyResult::Status::Applied);
  EXPECT_EQ(core.desired().count(100), 1u) << "the pattern the validation compiled is the one that matches";
  EXPECT_EQ(core.desired().count(101), 0u);
}

TEST_F(RegexCompiles, ADraPolicyCompilesEachRolePatternOnce) {
  auto p = decode_policy();
  p.task_roles.push_back(TaskRole{"prefill", "", "^prefill$", ExecClass::LatencyCritical});
  p.task_roles.back().process_regex = "vllm";
  EXPECT_EQ(compiles_of(core, DraPolicyUpsert{p}), 2u) << "the prefill role's commandRegex and processRegex";
}

TEST_F(RegexCompiles, APodCompilesEachTaskRoleOnce) {
  auto pod = decode_pod();
  pod.task_roles = {{"decode", "^decode$"}, {"prefill", "^prefill"}};
  EXPECT_EQ(compiles_of(core, PodBound{pod}), 2u);
}

TEST_F(RegexCompiles, APreviewCompilesEachPatternOnce) {
  const uint64_t before = regex_compiles();
  auto r = core.preview(engine_policy());
  EXPECT_TRUE(r.invalid_field.empty()) << r.invalid_message;
  EXPECT_EQ(regex_compiles() - before, 1u);
}

TEST_F(RegexCompiles, ARefusedPatternIsCompiledOnceAndNothingIsKept) {
  auto p = engine_policy();
  p.command_regex = "(";
  EXPECT_EQ(compiles_of(core, NodePolicyUpsert{p}, ApplyResult::Status::Invalid), 1u);
  EXPECT_FALSE(core.node_policy(p.name));
}

}  // namespace
}  // namespace c2c::testing
