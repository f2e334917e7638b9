// The trace and manifest forms of issue #14's node labels: the node_labels event, and nodeSelectors
// as the seeds' simple map or as a Kubernetes LabelSelector (matchLabels + matchExpressions).
#include <gtest/gtest.h>

#include "codec/trace_codec.hpp"
#include "codec/json_reader.hpp"
#include "codec/policy_codec.hpp"

namespace c2c::codec {
namespace {

const std::string kHead =
    R"({"v":1,"kind":"policy_upsert","policy":{"apiVersion":"scheduling.gthulhu.io/v1alpha1","kind":"NodeSchedulingPolicy","metadata":{"name":"p"},"spec":{"commandRegex":"x","nodeSelectors":)";

std::variant<Event, ParseError> with_selectors(const std::string& selectors) {
  return parse_line(kHead + selectors + "}}}", 3);
}

NodeSchedulingPolicy node_policy(const std::string& selectors) {
  auto r = with_selectors(selectors);
  if (auto* e = std::get_if<ParseError>(&r)) ADD_FAILURE() << e->to_string();
  if (!std::holds_alternative<Event>(r)) return {};
  return std::get<NodePolicyUpsert>(std::get<Event>(r)).policy;
}

std::string field_of(const std::string& selectors) {
  auto r = with_selectors(selectors);
  EXPECT_TRUE(std::holds_alternative<ParseError>(r)) << "accepted: " << selectors;
  return std::holds_alternative<ParseError>(r) ? std::get<ParseError>(r).field : "";
}

TEST(NodeSelectorForms, TheSeedsMapAndTheLabelSelectorBothRead) {
  const auto simple = node_policy(R"({"nvidia.com/gpu.product":"NVIDIA-GB10"})");
  EXPECT_EQ(simple.node_selectors, (std::map<std::string, std::string>{{"nvidia.com/gpu.product", "NVIDIA-GB10"}}));
  EXPECT_TRUE(simple.node_selector_expressions.empty());

  const auto full = node_policy(
      R"({"matchLabels":{"zone":"a"},"matchExpressions":[{"key":"gpu","operator":"NotIn","values":["v100"]},{"key":"spot","operator":"DoesNotExist"}]})");
  EXPECT_EQ(full.node_selectors, (std::map<std::string, std::string>{{"zone", "a"}}));
  ASSERT_EQ(full.node_selector_expressions.size(), 2u);
  EXPECT_EQ(full.node_selector_expressions[0], (LabelRequirement{"gpu", LabelOperator::NotIn, {"v100"}}));
  EXPECT_EQ(full.node_selector_expressions[1], (LabelRequirement{"spot", LabelOperator::DoesNotExist, {}}));

  // A label literally named matchLabels (string value) is the simple form.
  EXPECT_EQ(node_policy(R"({"matchLabels":"yes"})").node_selectors.at("matchLabels"), "yes");

  // Both round-trip through the encoder (the simple form stays simple).
  for (const auto& p : {simple, full}) {
    auto again = decode_policy(encode_policy(p), "");
    EXPECT_EQ(std::get<NodeSchedulingPolicy>(again), p);
  }
  EXPECT_TRUE(encode_policy(simple)["spec"]["nodeSelectors"].contains("nvidia.com/gpu.product"));
}

TEST(NodeSelectorForms, BadSelectorsNameTheField) {
  EXPECT_EQ(field_of(R"({"matchExpressions":[{"key":"gpu","operator":"Near","values":["a"]}]})"),
            "policy.spec.nodeSelectors.matchExpressions[0].operator");
  EXPECT_EQ(field_of(R"({"matchExpressions":[{"key":"zone","operator":"Exists"},{"key":"gpu","operator":"In"}]})"),
            "policy.spec.nodeSelectors.matchExpressions[1].values");
  EXPECT_EQ(field_of(R"({"matchExpressions":[{"key":"gpu","operator":"Exists","values":["a"]}]})"),
            "policy.spec.nodeSelectors.matchExpressions[0].values");
  EXPECT_EQ(field_of(R"({"matchExpressions":[{"key":"a/b/c","operator":"Exists"}]})"),
            "policy.spec.nodeSelectors.matchExpressions[0].key");
  EXPECT_EQ(field_of(R"({"matchLabels":{"zone":"a"},"zone":"b"})"), "policy.spec.nodeSelectors.zone");
  EXPECT_EQ(field_of(R"({"matchExpressions":[{"key":"gpu","operator":"In","values":["a"],"extra":1}]})"),
            "policy.spec.nodeSelectors.matchExpressions[0].extra");
}

TEST(NodeSelectorForms, TheNodeLabelsEventRoundTripsAndIsValidated) {
  auto r = parse_line(R"({"v":1,"kind":"node_labels","labels":{"kubernetes.io/hostname":"n1","zone":"a"}})", 1);
  ASSERT_TRUE(std::holds_alternative<Event>(r));
  const Event& ev = std::get<Event>(r);
  EXPECT_EQ(std::get<NodeLabels>(ev).labels.at("zone"), "a");
  EXPECT_EQ(encode_event(decode_event(encode_event(ev))).dump(), encode_event(ev).dump());
  auto bad = parse_line(R"({"v":1,"kind":"node_labels","labels":{"zone":"a b"}})", 4);
  ASSERT_TRUE(std::holds_alternative<ParseError>(bad));
  EXPECT_EQ(std::get<ParseError>(bad).field, "labels[zone]");
}

}  // namespace
}  // namespace c2c::codec
