// This node's labels as the core's nodeSelectors see them (issue #14, spec/daemon.md "Node
// labels"): the Kubernetes Node object's labels when the observer has sent them, else the config's
// node.labels; kubernetes.io/hostname is always present (the node name, unless the source sets it).
#pragma once

#include <map>
#include <optional>
#include <string>

namespace c2c::daemon {

using NodeLabelMap = std::map<std::string, std::string>;

inline constexpr const char* kHostnameLabel = "kubernetes.io/hostname";

// The Node object wins as a whole (not merged label by label): on a Kubernetes node the API
// server is the truth, and a config label the Node lacks would select the node where the
// cluster's own scheduler would not.
NodeLabelMap effective_node_labels(const std::string& node_name, const NodeLabelMap& config,
                                   const std::optional<NodeLabelMap>& node_object);

}  // namespace c2c::daemon
