// Policy manifests as the CLI reads them: the seeds' examples decode with every field, several
// documents per file, and every refusal names the file, the document and the field.
#include <gtest/gtest.h>

#include "cli/manifests.hpp"
#include "source_dir.hpp"

namespace c2c::cli {
namespace {

std::string example(const std::string& name) { return c2c::test::source_dir() + "/examples/policies/" + name; }

std::string refusal(std::string_view text, const std::string& name = "vllm.yaml") {
  try {
    decode_policy_manifests(text, name);
  } catch (const ManifestError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(CliManifests, SeedDraExecutionPolicyDecodesEveryField) {
  auto ms = load_policy_manifests(example("llm-decode.yaml"));
  ASSERT_EQ(ms.size(), 1u);
  const auto& p = std::get<DraExecutionPolicy>(ms[0].policy);
  EXPECT_EQ(p.name, "llm-decode");
  EXPECT_EQ(p.match_labels, (std::map<std::string, std::string>{{"llm-d.ai/role", "decode"}}));
  EXPECT_EQ(p.resource_claims, (std::vector<std::string>{"gpu", "rdma", "cpu"}));
  EXPECT_TRUE(p.respect_allocated_cpuset);
  EXPECT_TRUE(p.prefer_same_numa);
  EXPECT_TRUE(p.prefer_same_pcie_root);
  ASSERT_EQ(p.task_roles.size(), 1u);
  EXPECT_EQ(p.task_roles[0].name, "decode");
  EXPECT_EQ(p.task_roles[0].registered_role, "decode");
  EXPECT_EQ(p.task_roles[0].exec_class, ExecClass::LatencyCritical);
  EXPECT_TRUE(p.require_preview);
  EXPECT_EQ(p.max_boost, 30'000'000'000ull);
  EXPECT_TRUE(p.fail_closed_on_stale_claim);
  EXPECT_EQ(p.fallback, "default-scheduler");
  EXPECT_EQ(ms[0].source, example("llm-decode.yaml") + " doc 1");
}

TEST(CliManifests, SeedNodePolicyDecodes) {
  auto ms = load_policy_manifests(example("vllm-enginecore.yaml"));
  ASSERT_EQ(ms.size(), 1u);
  const auto& p = std::get<NodeSchedulingPolicy>(ms[0].policy);
  EXPECT_EQ(p.name, "vllm-enginecore");
  EXPECT_EQ(p.node_names, (std::vector<std::string>{"dgx-spark-gb10"}));
  EXPECT_EQ(p.command_regex, "^EngineCore(_DP[0-9]+)?$");
  EXPECT_EQ(p.priority, 1);
  EXPECT_EQ(p.execution_time, 2'000'000u);
  EXPECT_EQ(ref_of(ms[0].policy), "NodeSchedulingPolicy/vllm-enginecore");
}

TEST(CliManifests, MultiDocumentFileKeepsOrderAndSources) {
  auto ms = load_policy_manifests(example("vllm-helpers.yaml"));
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(name_of(ms[0].policy), "vllm-tokenizer");
  EXPECT_EQ(name_of(ms[1].policy), "vllm-api-server");
  EXPECT_EQ(ms[1].source, example("vllm-helpers.yaml") + " doc 2");
  const auto& api = std::get<NodeSchedulingPolicy>(ms[1].policy);
  ASSERT_EQ(api.dra_selectors.size(), 1u);
  EXPECT_EQ(api.dra_selectors[0].driver, "gpu.nvidia.com");
  const auto& tok = std::get<NodeSchedulingPolicy>(ms[0].policy);
  EXPECT_EQ(tok.node_selectors.at("nvidia.com/gpu.product"), "NVIDIA-GB10");
}

TEST(CliManifests, ErrorNamesFileDocumentAndField) {
  std::string e = refusal(R"(apiVersion: scheduling.gthulhu.io/v1alpha1
kind: NodeSchedulingPolicy
metadata: {name: ok}
spec: {nodeNames: [n], commandRegex: "^a$"}
---
apiVersion: scheduling.gthulhu.io/v1alpha1
kind: NodeSchedulingPolicy
metadata: {name: bad}
spec: {nodeNames: [n], commandRegex: "^EngineCore(_DP[0-9]+$"}
)");
  EXPECT_EQ(e.rfind("vllm.yaml doc 2: spec.commandRegex: invalid RE2 regex", 0), 0u) << e;
}

TEST(CliManifests, InvalidExampleFilesAreRefusedNamingTheField) {
  auto first = [](const std::string& f) {
    try {
      load_policy_manifests(example(f));
    } catch (const ManifestError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(first("invalid/bad-regex.yaml").find("bad-regex.yaml doc 2: spec.commandRegex:"), std::string::npos);
  EXPECT_NE(first("invalid/slice-too-long.yaml").find("doc 1: spec.executionTime: must be 0"), std::string::npos);
  EXPECT_NE(first("invalid/unknown-field.yaml").find("doc 1: spec.taskRole: unknown field"), std::string::npos);
  EXPECT_NE(first("invalid/selector-without-values.yaml")
                .find("doc 1: spec.nodeSelectors.matchExpressions[0].values: must be non-empty when operator is In"),
            std::string::npos)
      << first("invalid/selector-without-values.yaml");
}

// Issue #14: the label-selector form of nodeSelectors, as the example writes it.
TEST(CliManifests, LabelSelectorExampleDecodes) {
  auto ms = load_policy_manifests(example("select-by-label.yaml"));
  ASSERT_EQ(ms.size(), 1u);
  const auto& p = std::get<NodeSchedulingPolicy>(ms[0].policy);
  EXPECT_EQ(p.node_selectors.at("claim2core.io/inference"), "true");
  ASSERT_EQ(p.node_selector_expressions.size(), 2u);
  EXPECT_EQ(p.node_selector_expressions[0].op, LabelOperator::In);
  EXPECT_EQ(p.node_selector_expressions[1],
            (LabelRequirement{"node-role.kubernetes.io/control-plane", LabelOperator::DoesNotExist, {}}));
}

TEST(CliManifests, RefusalsOfEachKind) {
  const std::string head = "apiVersion: scheduling.gthulhu.io/v1alpha1\nkind: NodeSchedulingPolicy\n";
  EXPECT_NE(refusal("apiVersion: scheduling.gthulhu.io/v2\nkind: NodeSchedulingPolicy\nmetadata: {name: a}\nspec: {}\n")
                .find("doc 1: apiVersion: unsupported 'scheduling.gthulhu.io/v2'"),
            std::string::npos);
  EXPECT_NE(refusal("apiVersion: scheduling.gthulhu.io/v1alpha1\nkind: Pod\nmetadata: {name: a}\nspec: {}\n")
                .find("doc 1: kind: unknown policy kind 'Pod'"),
            std::string::npos);
  EXPECT_NE(refusal(head + "metadata: {name: a}\nspec: {nodeNames: [n], commandRegex: x, priority: 5000}\n")
                .find("doc 1: spec.priority: must be between 0 and 1000"),
            std::string::npos);
  EXPECT_NE(refusal(head + "metadata: {name: a}\nspec: {commandRegex: x}\n").find("doc 1: spec.nodeNames:"),
            std::string::npos);
  EXPECT_NE(refusal(head + "metadata: {name: Bad_Name}\nspec: {nodeNames: [n], commandRegex: x}\n")
                .find("doc 1: metadata.name: must be a DNS-1123 name"),
            std::string::npos);
  EXPECT_NE(refusal(head + "metadata: {name: a}\nspec: {nodeNames: [n], commandRegex: x, priority: high}\n")
                .find("doc 1: spec.priority:"),
            std::string::npos);
  EXPECT_NE(refusal("- just\n- a list\n").find("vllm.yaml doc 1: not a mapping"), std::string::npos);
  EXPECT_NE(refusal("# only a comment\n").find("vllm.yaml: no policy documents"), std::string::npos);
  EXPECT_NE(refusal("a: [1, 2\n").find("vllm.yaml: YAML syntax error at line"), std::string::npos);
}

TEST(CliManifests, DuplicateNameInOneFileIsRefused) {
  const std::string doc =
      "apiVersion: scheduling.gthulhu.io/v1alpha1\nkind: NodeSchedulingPolicy\nmetadata: {name: a}\n"
      "spec: {nodeNames: [n], commandRegex: x}\n";
  std::string e = refusal(doc + "---\n" + doc);
  EXPECT_NE(e.find("vllm.yaml doc 2: metadata.name: NodeSchedulingPolicy/a is already defined in doc 1"),
            std::string::npos)
      << e;
}

// `claim2core get policies -o json` prints a List; apply reads it back.
TEST(CliManifests, ListOfManifestsIsAccepted) {
  auto ms = decode_policy_manifests(R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "scheduling.gthulhu.io/v1alpha1", "kind": "NodeSchedulingPolicy",
     "metadata": {"name": "a", "generation": 3}, "spec": {"nodeNames": ["n"], "commandRegex": "x"}}]})",
                                    "list.json");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].source, "list.json doc 1 items[0]");
  EXPECT_EQ(std::get<NodeSchedulingPolicy>(ms[0].policy).generation, 3);
  EXPECT_NE(refusal(R"({"apiVersion": "v1", "kind": "List", "items": [{"kind": "NodeSchedulingPolicy"}]})")
                .find("vllm.yaml doc 1 items[0]: apiVersion:"),
            std::string::npos);
}

TEST(CliManifests, MissingFileAndDirectoryAreNamed) {
  try {
    load_policy_manifests("/nonexistent/vllm.yaml");
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/vllm.yaml: cannot open");
  }
  try {
    load_policy_manifests(c2c::test::source_dir() + "/examples/policies");
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos);
  }
}

TEST(CliManifests, OversizedFileIsRefusedNamingIt) {
  YamlLimits limits;
  limits.max_input_bytes = 100;
  try {
    load_policy_manifests(example("llm-decode.yaml"), limits);
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_NE(std::string(e.what()).find("llm-decode.yaml: input is 101 bytes, more than the limit of 100"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace c2c::cli
