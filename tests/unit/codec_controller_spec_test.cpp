// spec.controller (issue 46): the manifest form round-trips, and every bad combination is refused
// naming its field, on both policy kinds (core/controller.hpp, core/validate.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "codec/json_reader.hpp"
#include "codec/policy_codec.hpp"
#include "codec/yaml_json.hpp"
#include "source_dir.hpp"
#include "core/core.hpp"

namespace c2c::codec {
namespace {

using nlohmann::json;

json good_controller() {
  return json::parse(R"({"role": "decode", "target": {"runDelayP99": "2ms"},
    "actions": {"slice": {"from": "4ms", "to": "1ms", "step": "1ms"}, "preferredCPUs": "2-3"},
    "cooldown": "5s", "hysteresis": "500us", "maxRaised": "30s", "window": "1s", "windowsWithoutSignal": 3})");
}

json dra(const json& controller) {
  json p = json::parse(R"({"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "DRAExecutionPolicy",
    "metadata": {"name": "d"}, "spec": {"resourceClaims": ["gpu"], "taskRoles": [
      {"name": "decode", "selector": {"registeredRole": "decode"}, "executionClass": "latency-critical"},
      {"name": "bg", "selector": {"commandRegex": "^bg$"}, "executionClass": "background"}],
      "safety": {"maxBoostDuration": "30s"}}})");
  p["spec"]["controller"] = controller;
  return p;
}

json node(const json& controller, int priority = 0) {
  json p = json::parse(R"({"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "NodeSchedulingPolicy",
    "metadata": {"name": "n"}, "spec": {"nodeNames": ["a"], "commandRegex": "^w$"}})");
  p["spec"]["priority"] = priority;
  p["spec"]["controller"] = controller;
  return p;
}

// The field a refused manifest names ("" when it was accepted).
std::string refused(const json& manifest) {
  try {
    decode_policy(manifest, "");
  } catch (const DecodeError& e) {
    return e.field;
  }
  return "";
}

json with(json c, const std::string& pointer, const json& v) {
  if (v.is_null())
    c[json::json_pointer(pointer).parent_pointer()].erase(json::json_pointer(pointer).back());
  else
    c[json::json_pointer(pointer)] = v;
  return c;
}

TEST(ControllerSpec, DecodesEncodesAndDecodesAgain) {
  const auto p = std::get<DraExecutionPolicy>(decode_policy(dra(good_controller()), ""));
  ASSERT_TRUE(p.controller);
  const ControllerSpec& c = *p.controller;
  EXPECT_EQ(c.target, ControllerTarget::RunDelayP99);
  EXPECT_EQ(c.target_ns, 2'000'000u);
  EXPECT_EQ(c.role, "decode");
  EXPECT_FALSE(c.boost);
  ASSERT_TRUE(c.slice);
  EXPECT_EQ(c.slice->from, 4'000'000u);
  EXPECT_EQ(c.slice->to, 1'000'000u);
  EXPECT_EQ(c.hysteresis, 500'000u);
  EXPECT_EQ(c.preferred_cpus, CpuSet::range(2, 3));
  EXPECT_EQ(c.windows_without_signal, 3u);
  EXPECT_EQ(max_level(c), 4u + 1u);  // slice 4, 3, 2, 1 ms, then the CPUs
  const auto again = std::get<DraExecutionPolicy>(decode_policy(encode_policy(p), ""));
  EXPECT_EQ(again, p);

  json nc = with(with(good_controller(), "/role", nullptr), "/actions/boost", true);
  nc["target"] = {{"stepP99", "50ms"}};
  const auto n = std::get<NodeSchedulingPolicy>(decode_policy(node(nc), ""));
  ASSERT_TRUE(n.controller);
  EXPECT_EQ(n.controller->target, ControllerTarget::StepP99);
  EXPECT_TRUE(n.controller->boost);
  EXPECT_EQ(std::get<NodeSchedulingPolicy>(decode_policy(encode_policy(n), "")), n);
  // Absent: off, and encoded without it.
  json plain = node(nullptr);
  plain["spec"].erase("controller");
  const auto off = std::get<NodeSchedulingPolicy>(decode_policy(plain, ""));
  EXPECT_FALSE(off.controller);
  EXPECT_FALSE(encode_policy(off)["spec"].contains("controller"));
}

TEST(ControllerSpec, EveryBadCombinationNamesItsField) {
  const json c = good_controller();
  const std::vector<std::pair<json, std::string>> cases = {
      {with(c, "/role", nullptr), "spec.controller.role"},
      {with(c, "/role", "prefill"), "spec.controller.role"},
      {with(c, "/target", json::object()), "spec.controller.target"},
      {with(c, "/target/stepP99", "1ms"), "spec.controller.target"},
      {with(c, "/target/runDelayP99", "0"), "spec.controller.target.runDelayP99"},
      {with(c, "/target/runDelayP99", "2m"), "spec.controller.target.runDelayP99"},
      {with(c, "/target/runDelayP99", "soon"), "spec.controller.target.runDelayP99"},
      {with(c, "/hysteresis", "2ms"), "spec.controller.hysteresis"},
      {with(c, "/hysteresis", nullptr), "spec.controller.hysteresis"},
      {with(c, "/window", "1ms"), "spec.controller.window"},
      {with(c, "/window", "2h"), "spec.controller.window"},
      {with(c, "/cooldown", "500ms"), "spec.controller.cooldown"},
      {with(c, "/cooldown", nullptr), "spec.controller.cooldown"},
      {with(c, "/maxRaised", "4s"), "spec.controller.maxRaised"},
      {with(c, "/windowsWithoutSignal", 0), "spec.controller.windowsWithoutSignal"},
      {with(c, "/windowsWithoutSignal", 1001), "spec.controller.windowsWithoutSignal"},
      {with(c, "/actions", json::object()), "spec.controller.actions"},
      {with(c, "/actions/boost", true), "spec.controller.actions.boost"},  // decode is latency-critical
      {with(c, "/actions/slice/from", "5us"), "spec.controller.actions.slice.from"},
      {with(c, "/actions/slice/to", "200ms"), "spec.controller.actions.slice.to"},
      {with(c, "/actions/slice/to", "4ms"), "spec.controller.actions.slice.to"},
      {with(c, "/actions/slice/step", "0"), "spec.controller.actions.slice.step"},
      {with(c, "/actions/slice/step", "5ms"), "spec.controller.actions.slice.step"},
      {with(with(c, "/actions/slice/to", "100ms"), "/actions/slice/step", "1ms"), "spec.controller.actions.slice.step"},
      {with(c, "/actions/slice/step", nullptr), "spec.controller.actions.slice.step"},
      {with(c, "/actions/preferredCPUs", ""), "spec.controller.actions.preferredCPUs"},
      {with(c, "/actions/preferredCPUs", "9999"), "spec.controller.actions.preferredCPUs"},
      {with(c, "/actions/turbo", true), "spec.controller.actions.turbo"},
      {with(c, "/gain", 2), "spec.controller.gain"},
  };
  for (const auto& [bad, field] : cases) EXPECT_EQ(refused(dra(bad)), field) << bad.dump();

  // The boost's bound: maxRaised within the policy's maxBoostDuration when boost is an action.
  json boosting = with(with(c, "/role", "bg"), "/actions/boost", true);
  EXPECT_EQ(refused(dra(boosting)), "");
  EXPECT_EQ(refused(dra(with(boosting, "/maxRaised", "31s"))), "spec.controller.maxRaised");

  // Node policies: no role, and boost only for a class that does not boost already (priority 0).
  json n = with(c, "/role", nullptr);
  EXPECT_EQ(refused(node(n)), "");
  EXPECT_EQ(refused(node(c)), "spec.controller.role");
  EXPECT_EQ(refused(node(with(n, "/actions/boost", true), 5)), "spec.controller.actions.boost");
  EXPECT_EQ(refused(node(with(n, "/actions/boost", true), 0)), "");
  EXPECT_EQ(refused(node(with(n, "/cooldown", "100ms"))), "spec.controller.cooldown");
}

// The commented example decodes to the ladder its comments describe.
TEST(ControllerSpec, TheVllmExampleReadsAsItsCommentsSay) {
  std::ifstream in(c2c::test::source_dir() + "/examples/policies/vllm/workers-controlled.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const auto docs = yaml_to_json(text.str());
  ASSERT_EQ(docs.size(), 1u);
  const auto p = std::get<NodeSchedulingPolicy>(decode_policy(docs[0], ""));
  ASSERT_TRUE(p.controller);
  const ControllerSpec& c = *p.controller;
  EXPECT_EQ(max_level(c), 6u);
  const std::optional<CpuSet> allowed = CpuSet::range(0, 5);
  EXPECT_EQ(level_action(c, 0, allowed), LevelAction{});
  EXPECT_EQ(level_action(c, 1, allowed), (LevelAction{true, std::nullopt, std::nullopt}));
  EXPECT_EQ(level_action(c, 2, allowed).slice, 8'000'000u);
  EXPECT_EQ(level_action(c, 5, allowed).slice, 2'000'000u);
  EXPECT_EQ(level_action(c, 6, allowed).preferred, CpuSet::range(4, 5));  // 4-7 cut to allowed 0-5
  EXPECT_EQ(level_action(c, 6, CpuSet::range(0, 3)).preferred, std::nullopt);  // nothing left: skipped
}

// The core's validation holds the rules (the codec only reads the form): a policy built in code
// is refused the same way, and apply() leaves the state unchanged.
TEST(ControllerSpec, TheCoreRefusesABadControllerAndChangesNothing) {
  NodeSchedulingPolicy p;
  p.name = "n";
  p.node_names = {"a"};
  p.command_regex = "^w$";
  ControllerSpec c;
  c.target_ns = 2'000'000;
  c.hysteresis = 500'000;
  c.window = 1'000'000'000;
  c.cooldown = 5'000'000'000;
  c.max_raised = 30'000'000'000;
  c.windows_without_signal = 3;
  c.boost = true;
  p.controller = c;
  EXPECT_FALSE(validate(p));
  p.controller->max_raised = 1'000'000'000;  // below the cooldown
  auto e = validate(p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "controller.maxRaised");
  Core core;
  const std::string before = core.digest();
  auto r = core.apply(NodePolicyUpsert{p});
  EXPECT_EQ(r.status, ApplyResult::Status::Invalid);
  EXPECT_EQ(r.field, "controller.maxRaised");
  EXPECT_EQ(core.digest(), before);
}

}  // namespace
}  // namespace c2c::codec
