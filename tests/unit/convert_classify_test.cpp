// spec.classify (issue 46 item 4; spec/state-machine.md §11): the manifest and the wire form
// round-trip, the default is propose and is not written, a bad value and `apply` without a
// controller are refused naming the field, on both policy kinds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/convert.hpp"
#include "codec/json_reader.hpp"
#include "codec/policy_codec.hpp"
#include "core/core.hpp"

namespace c2c::codec {
namespace {

using nlohmann::json;

json controller() {
  return json::parse(R"({"target": {"runDelayP99": "2ms"}, "actions": {"boost": true},
    "cooldown": "5s", "hysteresis": "500us", "maxRaised": "30s", "window": "1s"})");
}

json node(const json& classify, bool with_controller) {
  json p = json::parse(R"({"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "NodeSchedulingPolicy",
    "metadata": {"name": "n"}, "spec": {"nodeNames": ["a"], "commandRegex": "^w$"}})");
  if (!classify.is_null()) p["spec"]["classify"] = classify;
  if (with_controller) p["spec"]["controller"] = controller();
  return p;
}

json dra(const json& classify, bool with_controller) {
  json p = json::parse(R"({"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "DRAExecutionPolicy",
    "metadata": {"name": "d"}, "spec": {"resourceClaims": ["gpu"], "taskRoles": [
      {"name": "decode", "selector": {"registeredRole": "decode"}, "executionClass": "throughput"}]}})");
  if (!classify.is_null()) p["spec"]["classify"] = classify;
  if (with_controller) {
    p["spec"]["controller"] = controller();
    p["spec"]["controller"]["role"] = "decode";
  }
  return p;
}

std::string refused(const json& manifest) {
  try {
    decode_policy(manifest, "");
  } catch (const DecodeError& e) {
    return e.field + ": " + e.what();
  }
  return "";
}

TEST(Classify, DefaultIsProposeAndIsNotWritten) {
  const auto n = std::get<NodeSchedulingPolicy>(decode_policy(node(nullptr, false), ""));
  EXPECT_EQ(n.classify, ClassifyMode::Propose);
  EXPECT_FALSE(encode_policy(n)["spec"].contains("classify"));
  const auto d = std::get<DraExecutionPolicy>(decode_policy(dra(nullptr, false), ""));
  EXPECT_EQ(d.classify, ClassifyMode::Propose);
}

TEST(Classify, EveryModeRoundTripsOnBothKinds) {
  for (const char* m : {"propose", "apply", "off"}) {
    const auto n = std::get<NodeSchedulingPolicy>(decode_policy(node(m, true), ""));
    EXPECT_STREQ(to_string(n.classify), m);
    EXPECT_EQ(std::get<NodeSchedulingPolicy>(decode_policy(encode_policy(n), "")), n) << m;
    const auto d = std::get<DraExecutionPolicy>(decode_policy(dra(m, true), ""));
    EXPECT_STREQ(to_string(d.classify), m);
    EXPECT_EQ(std::get<DraExecutionPolicy>(decode_policy(encode_policy(d), "")), d) << m;
    // The wire form (the node API's edge) too.
    auto back = api::from_proto(api::to_proto(n), "policy", api::Check::Full);
    ASSERT_TRUE(back.ok()) << back.error.field << ": " << back.error.message;
    EXPECT_EQ(*back.value, n) << m;
  }
}

TEST(Classify, BadValuesAndApplyWithoutAControllerAreRefusedNamingTheField) {
  EXPECT_EQ(refused(node("sometimes", false)).rfind("spec.classify: ", 0), 0u) << refused(node("sometimes", false));
  EXPECT_EQ(refused(node("apply", false)).rfind("spec.classify: ", 0), 0u) << refused(node("apply", false));
  EXPECT_EQ(refused(dra("apply", false)).rfind("spec.classify: ", 0), 0u) << refused(dra("apply", false));
  EXPECT_EQ(refused(node("off", false)), "");
  NodeSchedulingPolicy n = std::get<NodeSchedulingPolicy>(decode_policy(node(nullptr, false), ""));
  auto wire = api::to_proto(n);
  wire.set_classify("sometimes");
  auto r = api::from_proto(wire, "policy", api::Check::Full);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.field, "policy.classify");
}

}  // namespace
}  // namespace c2c::codec
