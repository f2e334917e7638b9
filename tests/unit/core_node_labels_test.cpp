// Issue #14 item 1 in the core: nodeSelectors with Kubernetes label-selector semantics
// (matchLabels, matchExpressions In/NotIn/Exists/DoesNotExist) over the node's labels, validated
// as the API server validates a LabelSelector, and the node_labels event that re-derives the node
// policies whose selection changes.
#include "core/label_selector.hpp"
#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

using Status = ApplyResult::Status;

LabelRequirement req(std::string key, LabelOperator op, std::vector<std::string> values = {}) {
  return LabelRequirement{std::move(key), op, std::move(values)};
}

NodeSchedulingPolicy by_labels(std::map<std::string, std::string> match, std::vector<LabelRequirement> exprs) {
  auto p = engine_policy();
  p.node_names.clear();
  p.node_selectors = std::move(match);
  p.node_selector_expressions = std::move(exprs);
  return p;
}

// Each operator against a key present with a listed value, present with another value, and absent:
// the table Kubernetes' labels.Selector implements.
TEST(LabelSelector, OperatorsFollowKubernetesSemantics) {
  const Labels gpu_a100{{"gpu", "a100"}};
  const Labels gpu_h100{{"gpu", "h100"}};
  const Labels none{};
  struct Row {
    LabelOperator op;
    bool listed, other, absent;
  };
  for (const Row& row : {Row{LabelOperator::In, true, false, false}, Row{LabelOperator::NotIn, false, true, true},
                         Row{LabelOperator::Exists, true, true, false},
                         Row{LabelOperator::DoesNotExist, false, false, true}}) {
    const bool with_values = row.op == LabelOperator::In || row.op == LabelOperator::NotIn;
    const auto r = req("gpu", row.op, with_values ? std::vector<std::string>{"a100"} : std::vector<std::string>{});
    EXPECT_EQ(requirement_matches(r, gpu_a100), row.listed) << to_string(row.op);
    EXPECT_EQ(requirement_matches(r, gpu_h100), row.other) << to_string(row.op);
    EXPECT_EQ(requirement_matches(r, none), row.absent) << to_string(row.op);
  }
}

TEST(LabelSelector, FirstUnmetNamesTheRequirement) {
  const Labels node{{"gpu", "a100"}, {"zone", "a"}};
  EXPECT_EQ(first_unmet("nodeSelectors", {{"zone", "a"}}, {req("gpu", LabelOperator::Exists)}, node), std::nullopt);
  EXPECT_EQ(first_unmet("nodeSelectors", {{"zone", "b"}}, {}, node),
            "nodeSelectors: wants zone=b, but the node has zone=a");
  EXPECT_EQ(first_unmet("nodeSelectors", {},
                        {req("zone", LabelOperator::Exists), req("gpu", LabelOperator::NotIn, {"a100", "v100"})}, node),
            "nodeSelectors.matchExpressions[1]: gpu NotIn [a100, v100], but the node has gpu=a100");
  EXPECT_EQ(first_unmet("nodeSelectors", {}, {req("rack", LabelOperator::In, {"r1"})}, node),
            "nodeSelectors.matchExpressions[0]: rack In [r1], but the node has no label rack");
}

// ValidateLabelSelector's rules, each refused with the field it is about.
TEST(LabelSelector, ValidationNamesTheField) {
  struct Case {
    Labels match;
    std::vector<LabelRequirement> exprs;
    std::string field;
  };
  const std::string long63(63, 'a'), long64(64, 'a');
  const std::vector<Case> bad = {
      {{}, {req("gpu", LabelOperator::In)}, "nodeSelectors.matchExpressions[0].values"},
      {{}, {req("zone", LabelOperator::Exists), req("gpu", LabelOperator::NotIn)}, "nodeSelectors.matchExpressions[1].values"},
      {{}, {req("gpu", LabelOperator::Exists, {"a100"})}, "nodeSelectors.matchExpressions[0].values"},
      {{}, {req("gpu", LabelOperator::DoesNotExist, {"a100"})}, "nodeSelectors.matchExpressions[0].values"},
      {{}, {req("gpu", LabelOperator::In, {"a100", "bad value"})}, "nodeSelectors.matchExpressions[0].values[1]"},
      {{}, {req("gpu", LabelOperator::In, {long64})}, "nodeSelectors.matchExpressions[0].values[0]"},
      {{}, {req("", LabelOperator::Exists)}, "nodeSelectors.matchExpressions[0].key"},
      {{}, {req(long64, LabelOperator::Exists)}, "nodeSelectors.matchExpressions[0].key"},
      {{}, {req("Example.COM/gpu", LabelOperator::Exists)}, "nodeSelectors.matchExpressions[0].key"},
      {{}, {req("example.com/", LabelOperator::Exists)}, "nodeSelectors.matchExpressions[0].key"},
      {{}, {req("-gpu", LabelOperator::Exists)}, "nodeSelectors.matchExpressions[0].key"},
      {{{"zone", "-a"}}, {}, "nodeSelectors[zone]"},
      {{{"bad key", "a"}}, {}, "nodeSelectors"},
  };
  for (const auto& c : bad) {
    auto e = validate_selector("nodeSelectors", c.match, c.exprs);
    ASSERT_TRUE(e.has_value()) << c.field;
    EXPECT_EQ(e->field, c.field) << e->message;
  }
  EXPECT_EQ(validate_selector("nodeSelectors", {{"kubernetes.io/hostname", "gpu-node-1"}, {"empty", ""}},
                              {req("nvidia.com/gpu.product", LabelOperator::In, {"NVIDIA-GB10", long63}),
                               req("node-role.kubernetes.io/control-plane", LabelOperator::DoesNotExist)}),
            std::nullopt);
}

// The same refusal through the policy: Invalid, the field named, nothing applied.
TEST_F(CoreTest, AnInvalidSelectorIsRefusedNamingTheField) {
  applied(NodeInfoEvent{node_info()});
  auto r = refused(NodePolicyUpsert{by_labels({}, {req("gpu", LabelOperator::In)})}, Status::Invalid);
  EXPECT_EQ(r.field, "nodeSelectors.matchExpressions[0].values");
  auto labels = refused(NodeLabels{{{"zone", "not a value"}}}, Status::Invalid);
  EXPECT_EQ(labels.field, "labels[zone]");
}

class LabelledNode : public CoreTest {
 protected:
  void SetUp() override {
    NodeInfo n = node_info();
    n.labels = {{"kubernetes.io/hostname", kNode}, {"gpu", "a100"}};
    applied(NodeInfoEvent{n});
    applied(TaskSeen{task(3786004, 3786004, 11, "EngineCore_DP0")});
  }
};

TEST_F(LabelledNode, MatchExpressionsSelectTheNode) {
  applied(NodePolicyUpsert{by_labels({{"kubernetes.io/hostname", kNode}},
                                     {req("gpu", LabelOperator::In, {"a100", "h100"}),
                                      req("node-role.kubernetes.io/control-plane", LabelOperator::DoesNotExist)})});
  ASSERT_NE(entry(3786004), nullptr);
  EXPECT_EQ(entry(3786004)->origin->policy, "vllm-enginecore");
}

TEST_F(LabelledNode, NotInExcludesTheNodeAndPreviewSaysWhy) {
  const auto p = by_labels({}, {req("gpu", LabelOperator::NotIn, {"a100"})});
  applied(NodePolicyUpsert{p});
  EXPECT_EQ(entry(3786004), nullptr) << "NotIn a100 on an a100 node selects nothing";
  EXPECT_EQ(core.node_not_selected(p), "nodeSelectors.matchExpressions[0]: gpu NotIn [a100], but the node has gpu=a100");
  const PreviewResult pr = core.preview(p);
  bool said = false;
  for (const auto& w : pr.warnings)
    said = said || w == "NodeSchedulingPolicy/vllm-enginecore: node not selected: nodeSelectors.matchExpressions[0]: "
                        "gpu NotIn [a100], but the node has gpu=a100";
  EXPECT_TRUE(said) << "preview names the failed requirement";
}

// A label change re-derives exactly the policies whose selection flips: the entry appears when
// the node gains the label, leaves (with its reason) when it loses it, and an unrelated label
// change is Applied without touching the table or the generation.
TEST_F(LabelledNode, ALabelChangeReDerives) {
  applied(NodePolicyUpsert{by_labels({}, {req("pool", LabelOperator::In, {"inference"})})});
  EXPECT_EQ(entry(3786004), nullptr);
  const uint64_t g = core.generation();
  auto gained = apply(NodeLabels{{{"kubernetes.io/hostname", kNode}, {"gpu", "a100"}, {"pool", "inference"}}});
  EXPECT_EQ(gained.status, Status::Applied);
  EXPECT_EQ(gained.changed_tids, std::vector<uint32_t>{3786004});
  ASSERT_NE(entry(3786004), nullptr);
  EXPECT_EQ(core.generation(), g + 1);
  EXPECT_EQ(core.node().name, kNode) << "node_labels leaves the name";
  EXPECT_FALSE(core.node().cpus.empty()) << "and the topology";
  sync();

  auto unrelated = apply(NodeLabels{{{"kubernetes.io/hostname", kNode}, {"gpu", "h100"}, {"pool", "inference"}}});
  EXPECT_EQ(unrelated.status, Status::Applied);
  EXPECT_TRUE(unrelated.changed_tids.empty());
  EXPECT_EQ(core.generation(), g + 1);

  refused(NodeLabels{{{"kubernetes.io/hostname", kNode}, {"gpu", "h100"}, {"pool", "inference"}}}, Status::Ignored);

  auto lost = apply(NodeLabels{{{"kubernetes.io/hostname", kNode}}});
  EXPECT_EQ(lost.changed_tids, std::vector<uint32_t>{3786004});
  EXPECT_EQ(entry(3786004), nullptr);
  const Plan plan = core.plan();
  ASSERT_EQ(plan.ops.size(), 1u);
  EXPECT_EQ(plan.ops[0].reason, "node labels changed");
}

}  // namespace
}  // namespace c2c::testing
