// The original's flat REST body -> the core's NodeSchedulingPolicy and back (src/rest/policy_body.*).
#include <gtest/gtest.h>

#include "rest/intent_body.hpp"
#include "rest/policy_body.hpp"

namespace c2c::rest {
namespace {

const char* kName = "alice-0123456789abcdef01234567";

json seed_body() {  // seed 001's curl body
  return json::parse(R"({"nodeNames": ["dgx-spark-gb10"], "commandRegex": "^EngineCore(_DP[0-9]+)?$",
                         "priority": 1, "executionTime": 2000000})");
}

BodyError refused(const json& body) {
  auto r = policy_from_body(body, kName);
  EXPECT_FALSE(r.ok()) << body.dump();
  return r.error;
}

TEST(RestPolicyBody, SeedBodyMapsOntoTheNodePolicy) {
  auto r = policy_from_body(seed_body(), kName);
  ASSERT_TRUE(r.ok()) << r.error.text();
  EXPECT_EQ(r.value->name, kName);
  EXPECT_EQ(r.value->generation, 0);
  EXPECT_EQ(r.value->node_names, std::vector<std::string>{"dgx-spark-gb10"});
  EXPECT_EQ(r.value->command_regex, "^EngineCore(_DP[0-9]+)?$");
  EXPECT_EQ(r.value->priority, 1);
  EXPECT_EQ(r.value->execution_time, 2000000u);
}

TEST(RestPolicyBody, SelectorsAndDraSelectors) {
  auto b = seed_body();
  b["nodeSelectors"] = json::parse(R"([{"key": "role", "value": "inference"}, {"key": "gpu", "value": "gb10"}])");
  b["draSelectors"] = json::parse(R"([{"deviceClass": "gpu.nvidia.com", "attributes": [{"key": "pool", "value": "p0"},
                                     {"key": "device", "value": "gpu-0"}]}])");
  auto r = policy_from_body(b, kName);
  ASSERT_TRUE(r.ok()) << r.error.text();
  EXPECT_EQ(r.value->node_selectors.at("role"), "inference");
  EXPECT_EQ(r.value->node_selectors.at("gpu"), "gb10");
  ASSERT_EQ(r.value->dra_selectors.size(), 1u);
  EXPECT_EQ(r.value->dra_selectors[0].driver, "gpu.nvidia.com");
  EXPECT_EQ(r.value->dra_selectors[0].pool, "p0");
  EXPECT_EQ(r.value->dra_selectors[0].device, "gpu-0");
  // And back: the same flat shape, zeros and empty lists included.
  json back = policy_to_body(*r.value, "0123456789abcdef01234567");
  EXPECT_EQ(back["nodeSelectors"].size(), 2u);
  EXPECT_EQ(back["draSelectors"][0]["deviceClass"], "gpu.nvidia.com");
  EXPECT_EQ(back["draSelectors"][0]["attributes"][1], json({{"key", "device"}, {"value", "gpu-0"}}));
  EXPECT_EQ(back["executionTime"], 2000000);
  EXPECT_EQ(back["id"], "0123456789abcdef01234567");
}

TEST(RestPolicyBody, ZerosAreSentNotOmitted) {
  auto b = seed_body();
  b["priority"] = 0;
  b["executionTime"] = 0;
  auto r = policy_from_body(b, kName);
  ASSERT_TRUE(r.ok());
  json back = policy_to_body(*r.value, "0123456789abcdef01234567");
  ASSERT_TRUE(back.contains("priority"));
  ASSERT_TRUE(back.contains("executionTime"));
  EXPECT_EQ(back["priority"], 0);
  EXPECT_EQ(back["executionTime"], 0);
  EXPECT_EQ(back["nodeSelectors"], json::array());
}

TEST(RestPolicyBody, KeysAreCaseInsensitiveUnknownIgnoredNullAbsent) {
  auto b = json::parse(R"({"NODENAMES": ["n1"], "commandregex": "^x$", "Priority": 3, "unknown": 1, "executionTime": null})");
  auto r = policy_from_body(b, kName);
  ASSERT_TRUE(r.ok()) << r.error.text();
  EXPECT_EQ(r.value->node_names[0], "n1");
  EXPECT_EQ(r.value->priority, 3);
  EXPECT_EQ(r.value->execution_time, 0u);
}

TEST(RestPolicyBody, BadBodiesNameTheField) {
  auto with = [](const char* key, json v) {
    auto b = seed_body();
    b[key] = std::move(v);
    return b;
  };
  EXPECT_EQ(refused(json::array()).field, "");
  EXPECT_EQ(refused(with("priority", "high")).field, "priority");
  EXPECT_EQ(refused(with("priority", 1.5)).field, "priority");
  EXPECT_EQ(refused(with("priority", 5000)).field, "priority");
  EXPECT_EQ(refused(with("priority", 99999999999)).field, "priority");
  EXPECT_EQ(refused(with("executionTime", -1)).field, "executionTime");
  EXPECT_EQ(refused(with("executionTime", 5)).field, "executionTime");
  EXPECT_EQ(refused(with("executionTime", 2e6)).field, "executionTime");
  EXPECT_EQ(refused(with("commandRegex", "(")).field, "commandRegex");
  EXPECT_EQ(refused(with("commandRegex", "")).field, "commandRegex");
  EXPECT_EQ(refused(with("commandRegex", 7)).field, "commandRegex");
  EXPECT_EQ(refused(with("nodeNames", "n1")).field, "nodeNames");
  EXPECT_EQ(refused(with("nodeNames", json::parse(R"(["a", 3])"))).field, "nodeNames[1]");
  EXPECT_EQ(refused(with("nodeSelectors", json::parse(R"({"role": "x"})"))).field, "nodeSelectors");
  EXPECT_EQ(refused(with("nodeSelectors", json::parse(R"([{"key": "", "value": "x"}])"))).field, "nodeSelectors[0].key");
  EXPECT_EQ(refused(with("nodeSelectors", json::parse(R"([{"key": "a", "value": "x"}, {"key": "a", "value": "y"}])"))).field,
            "nodeSelectors[1].key");
  EXPECT_EQ(refused(with("draSelectors", json::parse(R"([{"attributes": []}])"))).field, "draSelectors[0].deviceClass");
  EXPECT_EQ(refused(with("draSelectors", json::parse(R"([{"deviceClass": "d", "attributes": [{"key": "model", "value": "x"}]}])"))).field,
            "draSelectors[0].attributes[0].key");
  auto twice = json::parse(R"({"nodeNames": ["n"], "commandRegex": "^a$", "CommandRegex": "^b$"})");
  EXPECT_NE(refused(twice).message.find("given twice"), std::string::npos);
  EXPECT_EQ(refused(twice).field, "commandRegex");  // keys iterate sorted: "CommandRegex" comes first
  // No selector at all: the core's rule, named the way the body names it.
  EXPECT_EQ(refused(json::parse(R"({"commandRegex": "^a$"})")).field, "nodeNames");
}

TEST(RestPolicyBody, PolicyIdsAndNames) {
  EXPECT_TRUE(is_policy_id("0123456789abcdef01234567"));
  EXPECT_FALSE(is_policy_id("0123456789ABCDEF01234567"));  // normalized first
  EXPECT_EQ(normalize_policy_id("0123456789ABCDEF01234567"), "0123456789abcdef01234567");
  EXPECT_FALSE(normalize_policy_id("not-hex"));
  EXPECT_FALSE(normalize_policy_id("0123456789abcdef0123456z"));
  auto parts = parse_policy_name(policy_name("alice", "0123456789abcdef01234567"));
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->owner, "alice");
  EXPECT_EQ(parts->id, "0123456789abcdef01234567");
  EXPECT_FALSE(parse_policy_name("vllm-enginecore"));  // applied with the CLI: nobody's "self"
  EXPECT_FALSE(parse_policy_name("-0123456789abcdef01234567"));

  EXPECT_EQ(policy_id_member(json::object()).error.message, "Policy ID is required");
  EXPECT_EQ(policy_id_member(json{{"policyId", "xyz"}}).error.field, "policyId");
  EXPECT_EQ(policy_id_member(json{{"POLICYID", "0123456789abcdef01234567"}}).value, "0123456789abcdef01234567");
  EXPECT_EQ(intent_ids_member(json{{"intentIds", json::array()}}).error.message, "At least one intent ID is required");
  EXPECT_EQ(intent_ids_member(json{{"intentIds", {"0123456789abcdef01234567", "nope"}}}).error.field, "intentIds[1]");
}

TEST(RestPolicyBody, IntentsHaveTheOriginalGuiNumberingAndAlwaysAReason) {
  NodeSchedulingPolicy p;
  p.command_regex = "^x$";
  using S = node::IntentState;
  for (auto [st, n, name] : {std::tuple{S::Pending, 0, "Pending"}, {S::Sent, 1, "Sent"}, {S::Applied, 2, "Applied"},
                             {S::Failed, 3, "Failed"}}) {
    reply::Intent in;
    in.state = st;
    json j = intent_to_body(in, "0123456789abcdef01234567", &p);
    EXPECT_EQ(j["state"], n);
    EXPECT_EQ(j["stateName"], name);
    EXPECT_FALSE(j["reason"].get<std::string>().empty()) << name;
    EXPECT_EQ(j["priority"], 0);  // present although zero
  }
  // Without a daemon reason the text claims no more than the state: Applied is read back, Sent is not.
  reply::Intent sent, applied;
  sent.state = S::Sent;
  applied.state = S::Applied;
  EXPECT_NE(intent_to_body(sent, "0123456789abcdef01234567", &p)["reason"].get<std::string>().find("not yet read back"),
            std::string::npos);
  EXPECT_NE(intent_to_body(applied, "0123456789abcdef01234567", &p)["reason"].get<std::string>().find("read back from"),
            std::string::npos);
  reply::Intent failed;
  failed.state = S::Failed;
  failed.reason = "map full";
  EXPECT_EQ(intent_to_body(failed, "0123456789abcdef01234567", nullptr)["reason"], "map full");
}

}  // namespace
}  // namespace c2c::rest
