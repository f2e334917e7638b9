// Boost inheritance in the policy language (issue 43 item 3; spec/state-machine.md §3 "Boost
// leases"): spec.boost.inherit.depth on a node policy and spec.taskRoles[].boost.inherit.depth on
// a DRA task role. The manifest round-trips; a depth outside 1..2, or an inheritance on a policy or
// role that does not boost, is refused naming the field; the derived entry carries the flags
// (wakee-boost, wakee-depth-2) beside boost only, and check() holds it to that (INV-8).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "codec/json_reader.hpp"
#include "codec/policy_codec.hpp"
#include "codec/yaml_json.hpp"
#include "core_fixture.hpp"
#include "source_dir.hpp"

namespace c2c {
namespace {

using nlohmann::json;
using testing::CoreTest;
using testing::comm_policy;
using testing::engine_policy;
using testing::node_info;
using testing::task;

json node_manifest(int priority, const json& boost) {
  json p = json::parse(R"({"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "NodeSchedulingPolicy",
    "metadata": {"name": "n"}, "spec": {"nodeNames": ["a"], "commandRegex": "^w$"}})");
  p["spec"]["priority"] = priority;
  if (!boost.is_null()) p["spec"]["boost"] = boost;
  return p;
}

json dra_manifest(const std::string& cls, const json& boost) {
  json p = json::parse(R"({"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "DRAExecutionPolicy",
    "metadata": {"name": "d"}, "spec": {"resourceClaims": ["gpu"], "taskRoles": [
      {"name": "loop", "selector": {"registeredRole": "loop"}, "executionClass": "latency-critical"},
      {"name": "other", "selector": {"commandRegex": "^o$"}, "executionClass": "throughput"}]}})");
  p["spec"]["taskRoles"][1]["executionClass"] = cls;
  if (!boost.is_null()) p["spec"]["taskRoles"][1]["boost"] = boost;
  return p;
}

json depth(const json& d) { return {{"inherit", {{"depth", d}}}}; }

// The field a refused manifest names, and its message ("" when accepted).
std::pair<std::string, std::string> refusal(const json& manifest) {
  try {
    codec::decode_policy(manifest, "");
  } catch (const codec::DecodeError& e) {
    return {e.field, e.what()};
  }
  return {"", ""};
}

TEST(BoostInheritManifest, NodePolicyDepthsOneAndTwoRoundTrip) {
  for (int d : {1, 2}) {
    const AnyPolicy p = codec::decode_policy(node_manifest(1, depth(d)), "");
    const auto& n = std::get<NodeSchedulingPolicy>(p);
    EXPECT_EQ(n.boost_inherit_depth, static_cast<uint32_t>(d));
    const json back = codec::encode_policy(n);
    EXPECT_EQ(back["spec"]["boost"]["inherit"]["depth"], d);
    EXPECT_EQ(std::get<NodeSchedulingPolicy>(codec::decode_policy(back, "")), n);
  }
  // Absent: off, and nothing is written back.
  const auto off = std::get<NodeSchedulingPolicy>(codec::decode_policy(node_manifest(1, nullptr), ""));
  EXPECT_EQ(off.boost_inherit_depth, 0u);
  EXPECT_FALSE(codec::encode_policy(off)["spec"].contains("boost"));
}

TEST(BoostInheritManifest, DraTaskRoleDepthRoundTrips) {
  const auto p = std::get<DraExecutionPolicy>(
      codec::decode_policy(dra_manifest("communication-progress", depth(2)), ""));
  EXPECT_EQ(p.task_roles[0].boost_inherit_depth, 0u);
  EXPECT_EQ(p.task_roles[1].boost_inherit_depth, 2u);
  EXPECT_EQ(std::get<DraExecutionPolicy>(codec::decode_policy(codec::encode_policy(p), "")), p);
}

TEST(BoostInheritManifest, DepthOutsideOneToTwoIsRefusedNamingTheField) {
  for (const json& d : {json(0), json(3), json(-1), json(1ll << 40)}) {
    auto [field, why] = refusal(node_manifest(1, depth(d)));
    EXPECT_EQ(field, "spec.boost.inherit.depth") << d << ": " << why;
    std::tie(field, why) = refusal(dra_manifest("latency-critical", depth(d)));
    EXPECT_EQ(field, "spec.taskRoles[1].boost.inherit.depth") << d << ": " << why;
  }
  EXPECT_EQ(refusal(node_manifest(1, {{"inherit", json::object()}})).first, "spec.boost.inherit.depth");
  EXPECT_EQ(refusal(node_manifest(1, {{"inherit", {{"depth", 1}, {"lease", "1ms"}}}})).first, "spec.boost.inherit.lease");
  EXPECT_EQ(refusal(node_manifest(1, {{"pass", true}})).first, "spec.boost.pass");
}

TEST(BoostInheritManifest, OnlyABoostingPolicyOrRolePassesABoostOn) {
  auto [field, why] = refusal(node_manifest(0, depth(1)));  // priority 0: slice-only, never boosted
  EXPECT_EQ(field, "spec.boost.inherit") << why;
  EXPECT_NE(why.find("priority > 0"), std::string::npos) << why;
  for (const char* cls : {"throughput", "background", "normal"}) {
    std::tie(field, why) = refusal(dra_manifest(cls, depth(1)));
    EXPECT_EQ(field, "spec.taskRoles[1].boost.inherit") << cls << ": " << why;
  }
  EXPECT_EQ(refusal(dra_manifest("latency-critical", depth(1))).first, "");
}

TEST(BoostInheritCore, TheCoreRefusesWhatTheManifestCannotSay) {
  NodeSchedulingPolicy p = engine_policy();
  p.boost_inherit_depth = 3;
  auto e = validate(p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "boost.inherit.depth");
  p.boost_inherit_depth = 1;
  p.priority = 0;
  e = validate(p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "boost.inherit");
  DraExecutionPolicy d = testing::decode_policy();
  d.task_roles[0].boost_inherit_depth = 7;
  e = validate(d);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->field, "spec.taskRoles[0].boost.inherit.depth");
}

class BoostInheritEntries : public CoreTest {};

TEST_F(BoostInheritEntries, TheEntryCarriesTheDepthBesideItsBoostOnly) {
  applied(NodeInfoEvent{node_info()});
  applied(TimeAdvance{1'000'000'000});
  NodeSchedulingPolicy loop = comm_policy("loop", 1, "^loop$", 1);
  loop.boost_inherit_depth = 2;
  NodeSchedulingPolicy shallow = comm_policy("shallow", 1, "^shallow$", 1);
  shallow.boost_inherit_depth = 1;
  NodeSchedulingPolicy plain = comm_policy("plain", 1, "^plain$", 1);
  applied(NodePolicyUpsert{loop});
  applied(NodePolicyUpsert{shallow});
  applied(NodePolicyUpsert{plain});
  applied(TaskSeen{task(10, 10, 100, "loop")});
  applied(TaskSeen{task(11, 11, 100, "shallow")});
  applied(TaskSeen{task(12, 12, 100, "plain")});
  ASSERT_TRUE(entry(10) && entry(11) && entry(12));
  EXPECT_EQ(entry(10)->value.flags & (kFlagBoost | kFlagWakeeBoost | kFlagWakeeDepth2),
            kFlagBoost | kFlagWakeeBoost | kFlagWakeeDepth2);
  EXPECT_EQ(entry(11)->value.flags & (kFlagBoost | kFlagWakeeBoost | kFlagWakeeDepth2), kFlagBoost | kFlagWakeeBoost);
  EXPECT_EQ(entry(12)->value.flags & (kFlagWakeeBoost | kFlagWakeeDepth2), 0);
  // Off again: the entry loses the flags with the next generation (and check() after every step
  // holds the flags to the boost: INV-8).
  loop.generation = 2;
  loop.boost_inherit_depth = 0;
  applied(NodePolicyUpsert{loop});
  EXPECT_EQ(entry(10)->value.flags & (kFlagWakeeBoost | kFlagWakeeDepth2), 0);
}

std::vector<json> example_docs(const std::string& name) {
  std::ifstream in(c2c::test::source_dir() + "/examples/policies/vllm/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return codec::yaml_to_json(text.str());
}

// The adapter's opt-in file is vllm.yaml's vllm-engine-core with depth 1 and nothing else changed,
// so that applying it after vllm.yaml changes only the inheritance.
TEST(BoostInheritManifest, TheAdaptersInheritFileIsItsEngineCorePolicyWithDepthOne) {
  const auto docs = example_docs("engine-core-inherit.yaml");
  ASSERT_EQ(docs.size(), 1u);
  auto inherit = std::get<NodeSchedulingPolicy>(codec::decode_policy(docs[0], ""));
  EXPECT_EQ(inherit.boost_inherit_depth, 1u);
  std::optional<NodeSchedulingPolicy> adapter;
  for (const auto& d : example_docs("vllm.yaml"))
    if (d["metadata"]["name"] == "vllm-engine-core") adapter = std::get<NodeSchedulingPolicy>(codec::decode_policy(d, ""));
  ASSERT_TRUE(adapter);
  EXPECT_EQ(adapter->boost_inherit_depth, 0u);  // off in the adapter itself
  inherit.boost_inherit_depth = 0;
  EXPECT_EQ(inherit, *adapter);
}

TEST(BoostInheritFlags, TheDepthsFlags) {
  EXPECT_EQ(wakee_boost_flags(0), 0);
  EXPECT_EQ(wakee_boost_flags(1), kFlagWakeeBoost);
  EXPECT_EQ(wakee_boost_flags(2), kFlagWakeeBoost | kFlagWakeeDepth2);
}

}  // namespace
}  // namespace c2c
