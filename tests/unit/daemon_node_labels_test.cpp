// Issue #14 item 1 in the daemon: node.labels in the config (validated with the Kubernetes label
// syntax, errors naming the field) and which labels nodeSelectors see (node_labels.hpp).
#include <gtest/gtest.h>

#include "daemon/process/config.hpp"
#include "daemon/node_state/node_labels.hpp"

namespace c2c::daemon {
namespace {

TEST(DaemonNodeLabels, ConfigLabelsParse) {
  DaemonConfig c;
  FieldError err;
  ASSERT_TRUE(parse_config("node:\n  labels:\n    nvidia.com/gpu.product: NVIDIA-GB10\n    zone: \"a\"\n", &c, &err))
      << err.field << ": " << err.message;
  EXPECT_EQ(c.node_labels, (NodeLabelMap{{"nvidia.com/gpu.product", "NVIDIA-GB10"}, {"zone", "a"}}));
}

// node.default_max_boost: the node policies' boost lease (NodeInfo.defaultMaxBoost), within the
// core's bounds; a change needs a restart.
TEST(DaemonNodeLabels, DefaultMaxBoostParsesWithinTheCoresBoundsAndNeedsARestart) {
  DaemonConfig c;
  FieldError err;
  ASSERT_TRUE(parse_config("node:\n  default_max_boost: 2s\n", &c, &err)) << err.field << ": " << err.message;
  EXPECT_EQ(c.default_max_boost_ns, std::optional<uint64_t>{2'000'000'000});
  for (const char* yaml : {"node:\n  default_max_boost: 500us\n", "node:\n  default_max_boost: 2h\n",
                           "node:\n  default_max_boost: soon\n"}) {
    DaemonConfig keep;
    FieldError e;
    EXPECT_FALSE(parse_config(yaml, &keep, &e)) << yaml;
    EXPECT_EQ(e.field, "node.default_max_boost") << yaml << " -> " << e.message;
    EXPECT_FALSE(keep.default_max_boost_ns) << "a refused config leaves the old one";
  }
  EXPECT_EQ(restart_only_changes(DaemonConfig{}, c), std::vector<std::string>{"node.default_max_boost"});
}

TEST(DaemonNodeLabels, BadConfigLabelsNameTheFieldAndKeepTheOldConfig) {
  const std::pair<const char*, const char*> bad[] = {
      {"node: 3", "node"},
      {"node:\n  lables: {}\n", "node.lables"},
      {"node:\n  labels: [a]\n", "node.labels"},
      {"node:\n  labels:\n    zone: [a]\n", "node.labels[zone]"},
      {"node:\n  labels:\n    zone: \"a b\"\n", "node.labels[zone]"},
      {"node:\n  labels:\n    zone: -a\n", "node.labels[zone]"},
      {"node:\n  labels:\n    \"Bad.Prefix/zone\": a\n", "node.labels"},
      {"node:\n  labels:\n    \"a/b/c\": a\n", "node.labels"},
  };
  for (const auto& [yaml, field] : bad) {
    DaemonConfig keep;
    keep.node_labels = {{"kept", "yes"}};
    FieldError e;
    EXPECT_FALSE(parse_config(yaml, &keep, &e)) << yaml;
    EXPECT_EQ(e.field, field) << yaml << " -> " << e.message;
    EXPECT_EQ(keep.node_labels, (NodeLabelMap{{"kept", "yes"}})) << "a refused config leaves the old one";
  }
}

// The Node object wins as a whole; kubernetes.io/hostname is always there, unless the source set it.
TEST(DaemonNodeLabels, TheNodeObjectWinsAndTheHostnameIsAlwaysPresent) {
  const NodeLabelMap config{{"zone", "a"}, {"gpu", "a100"}};
  EXPECT_EQ(effective_node_labels("n1", config, std::nullopt),
            (NodeLabelMap{{"zone", "a"}, {"gpu", "a100"}, {"kubernetes.io/hostname", "n1"}}));
  EXPECT_EQ(effective_node_labels("n1", config, NodeLabelMap{{"zone", "b"}}),
            (NodeLabelMap{{"zone", "b"}, {"kubernetes.io/hostname", "n1"}}))
      << "a config label the Node lacks does not select the node";
  EXPECT_EQ(effective_node_labels("n1", {}, NodeLabelMap{{"kubernetes.io/hostname", "n1.short"}}),
            (NodeLabelMap{{"kubernetes.io/hostname", "n1.short"}}));
  EXPECT_EQ(effective_node_labels("", config, std::nullopt), config);
  EXPECT_EQ(effective_node_labels(std::string(64, 'h'), {}, std::nullopt), NodeLabelMap{})
      << "a node name that is no label value gets no hostname label";
}

}  // namespace
}  // namespace c2c::daemon
