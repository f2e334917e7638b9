// Field paths as segments (src/core/field_path.hpp, issue 44 item 4) and the API edge's renaming
// on them (src/api/convert.cpp): the manifest's names to the proto's without string surgery.
#include <gtest/gtest.h>

#include "api/convert.hpp"
#include "api/field_names.hpp"
#include "core/field_path.hpp"

namespace c2c {
namespace {

TEST(FieldPath, ParsesNamesIndicesAndKeys) {
  FieldPath p = FieldPath::parse("spec.taskRoles[2].selector.commandRegex");
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p.segments()[1], (FieldSegment{"taskRoles", 2, std::nullopt}));
  EXPECT_EQ(p.segments()[3].name, "commandRegex");
  EXPECT_EQ(p.str(), "spec.taskRoles[2].selector.commandRegex");

  // A label key holds dots and slashes: it is one key, not more segments.
  FieldPath k = FieldPath::parse("node.labels[nvidia.com/gpu.product].value");
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k.segments()[1].key, "nvidia.com/gpu.product");
  EXPECT_FALSE(k.segments()[1].index);
  EXPECT_EQ(k.str(), "node.labels[nvidia.com/gpu.product].value");

  FieldPath two = FieldPath::parse("a[1][x]");
  EXPECT_EQ(two.segments()[0], (FieldSegment{"a", 1, "x"}));
  EXPECT_EQ(FieldPath::parse("").size(), 0u);
  EXPECT_EQ(FieldPath::parse("labels[a]b]").segments()[0].key, "a]b");  // up to the last "]" of the segment
}

TEST(FieldPath, BuiltPathsRenderOnce) {
  FieldPath p;
  p.add("bindings").index(3).add("numa_nodes").index(0);
  EXPECT_EQ(p.str(), "bindings[3].numa_nodes[0]");
  EXPECT_EQ(FieldPath().add("pods").index(0).append(FieldPath::parse("task_roles[decode]")).str(),
            "pods[0].task_roles[decode]");
  EXPECT_TRUE(p.starts_with({"bindings", "numa_nodes"}));
  EXPECT_FALSE(p.starts_with({"numa_nodes"}));
  EXPECT_EQ(p.drop_front(1).str(), "numa_nodes[0]");
  EXPECT_EQ(p.drop_front(5).str(), "");
  for (const char* s : {"spec.nodeSelectors.matchExpressions[0].values", "metadata.name", "pod.taskRoles[Decode]",
                        "claim.devices[1].pool", "x"})
    EXPECT_EQ(FieldPath::parse(s).str(), s);
}

// The API edge renames names, never a map key: the proto mapping used to run snake_case over the
// whole text, so a label key with capitals came back renamed (matchLabels[appName] ->
// match_labels[app_name]), naming a key the user never wrote.
TEST(FieldPath, ProtoNamesLeaveMapKeysAlone) {
  EXPECT_EQ(api::proto_field_of("spec.workloadSelector.matchLabels[appName]"), "match_labels[appName]");
  EXPECT_EQ(api::proto_field_of("nodeSelectors[topology.kubernetes.io/Zone]"), "node_selectors[topology.kubernetes.io/Zone]");
  EXPECT_EQ(api::proto_field_of("spec.nodeSelectors.matchExpressions[1].values"), "node_selector_expressions[1].values");
  EXPECT_EQ(api::pod_field_of("pod.labels[app.kubernetes.io/Name]"), "labels[app.kubernetes.io/Name]");
  // A claim device's fields as ClaimDeviceBinding names them (they came back in the core's spelling).
  EXPECT_EQ(api::binding_field_of("claim.devices[0].numaNodes"), "numa_nodes");
  EXPECT_EQ(api::binding_field_of("claim.devices[2].pciBusID"), "pci_bus_id");
  EXPECT_EQ(api::binding_field_of("claim.generation"), "claim_generation");
}

}  // namespace
}  // namespace c2c
