// The controller inside the core (issue 46, spec/state-machine.md "The controller"): windows and
// ticks decide levels from the state the core keeps, every decision is reported, and a trace of
// the events replays every decision exactly (examples/controller.jsonl).
#include <gtest/gtest.h>

#include <fstream>

#include "codec/trace_codec.hpp"
#include "core/core.hpp"
#include "source_dir.hpp"
#include "trace/replay.hpp"

namespace c2c {
namespace {

std::vector<codec::TraceEvent> example_trace() {
  std::ifstream f(c2c::test::source_dir() + "/examples/controller.jsonl");
  EXPECT_TRUE(f) << "examples/controller.jsonl";
  auto parsed = codec::parse_trace(f);
  EXPECT_TRUE(std::holds_alternative<std::vector<codec::TraceEvent>>(parsed));
  if (!std::holds_alternative<std::vector<codec::TraceEvent>>(parsed)) return {};
  return std::get<std::vector<codec::TraceEvent>>(parsed);
}

struct Step {
  Nanos at_s;
  uint32_t from, to;
  ControllerRule rule;
  bool operator==(const Step&) const = default;
};

std::ostream& operator<<(std::ostream& o, const Step& s) {
  return o << s.at_s << "s " << s.from << "->" << s.to << " " << to_string(s.rule);
}

TEST(Controller, TheExampleTraceMakesTheseDecisionsAndReplaysThemExactly) {
  const auto events = example_trace();
  ASSERT_FALSE(events.empty());
  const auto first = trace::replay(events);
  EXPECT_TRUE(first.violations.empty()) << first.violations.front().violation.message;
  EXPECT_FALSE(first.invalid);
  std::vector<Step> got;
  for (const auto& d : first.decisions) got.push_back({d.decision.at / 1'000'000'000, d.decision.from, d.decision.to, d.decision.rule});
  using R = ControllerRule;
  const std::vector<Step> want = {
      {1, 0, 1, R::Raise},   {2, 1, 1, R::Cooldown}, {3, 1, 2, R::Raise},    {4, 2, 2, R::InBand},
      {5, 2, 1, R::Lower},   {6, 1, 1, R::Silent},   {8, 1, 0, R::NoSignal},  // tick: 3 windows quiet
      {9, 0, 0, R::Cooldown}, {10, 0, 1, R::Raise},  {12, 1, 2, R::Raise},   {14, 2, 3, R::Raise},
      {16, 3, 3, R::AtMax},  {20, 3, 0, R::Expired},                          // tick: maxRaised 10s
  };
  EXPECT_EQ(got, want);
  // The window for a policy that does not exist is ignored, and decides nothing.
  ASSERT_EQ(first.ignored.size(), 1u);
  EXPECT_EQ(first.ignored[0].event_kind, "controller_window");
  // Every event round-trips through the codec, and a second replay decides exactly the same.
  for (const auto& te : events) {
    const Event again = codec::decode_event(codec::encode_event(te.event));
    EXPECT_EQ(codec::encode_event(again).dump(), codec::encode_event(te.event).dump()) << "line " << te.line;
  }
  const auto second = trace::replay(events);
  ASSERT_EQ(second.decisions.size(), first.decisions.size());
  for (size_t i = 0; i < first.decisions.size(); ++i) EXPECT_EQ(second.decisions[i].decision, first.decisions[i].decision);
  EXPECT_EQ(second.core.digest(), first.core.digest());
  const auto json = trace::to_json(first);
  ASSERT_TRUE(json.contains("decisions"));
  EXPECT_EQ(json["decisions"][0]["rule"], "raise");
  EXPECT_EQ(json["decisions"][0]["reason"], "level 0 -> 1: runDelayP99 5ms > target 2ms");
  EXPECT_NE(trace::to_table(first).find("CONTROLLER DECISIONS"), std::string::npos);
}

// The state lives in the core: a restart, a new generation and a delete each start it over or
// drop it; a raised level shows in next_deadline(); a bad window is refused naming its field.
TEST(Controller, StateFollowsThePolicyAndTheRestart) {
  auto events = example_trace();
  ASSERT_GE(events.size(), 8u);
  Core core;
  for (size_t i = 0; i < 5; ++i) ASSERT_TRUE(core.apply(events[i].event).ok()) << i;  // up to the first raise
  ASSERT_EQ(core.controllers().size(), 1u);
  EXPECT_EQ(core.controllers()[0].state.level, 1u);
  EXPECT_EQ(core.controllers()[0].max_level, 3u);
  // Raised at 1s: the fallback is due 3 windows after the last signal (4s), before maxRaised (11s).
  EXPECT_EQ(core.next_deadline(), std::optional<Nanos>{4'000'000'000});

  const std::string before = core.digest();
  auto bad = core.apply(ControllerWindow{PolicyKind::Node, "", 1});
  EXPECT_EQ(bad.status, ApplyResult::Status::Invalid);
  EXPECT_EQ(bad.field, "policy");
  bad = core.apply(ControllerWindow{PolicyKind::Node, "workers", 3'600'000'000'001ull});
  EXPECT_EQ(bad.field, "signal");
  auto stale = core.apply(ControllerWindow{PolicyKind::Dra, "workers", 1});
  EXPECT_EQ(stale.status, ApplyResult::Status::Ignored);
  EXPECT_EQ(core.digest(), before);

  Core restarted = core;
  ASSERT_TRUE(restarted.apply(DaemonRestart{}).ok());
  EXPECT_EQ(restarted.controllers()[0].state, ControllerState{}) << "a restart starts at the static policy";
  EXPECT_TRUE(restarted.check().empty());

  auto upsert = std::get<NodePolicyUpsert>(events[1].event);
  upsert.policy.generation = 2;
  upsert.policy.controller->cooldown = 3'000'000'000;
  Core regen = core;
  ASSERT_TRUE(regen.apply(upsert).ok());
  EXPECT_EQ(regen.controllers()[0].state.level, 0u) << "a new generation starts at level 0";
  upsert.policy.generation = 3;
  upsert.policy.controller.reset();
  ASSERT_TRUE(regen.apply(upsert).ok());
  EXPECT_TRUE(regen.controllers().empty());
  EXPECT_EQ(regen.apply(ControllerWindow{PolicyKind::Node, "workers", 1}).status, ApplyResult::Status::Ignored);

  ASSERT_TRUE(core.apply(PolicyDelete{PolicyKind::Node, "workers", 0}).ok());
  EXPECT_TRUE(core.controllers().empty());
  EXPECT_TRUE(core.check().empty());
}

}  // namespace
}  // namespace c2c
