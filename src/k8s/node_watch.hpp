// This node's own Node object (issue #14): list+watch /api/v1/nodes with
// fieldSelector=metadata.name=<node> (the observer's list_watch machinery), its metadata.labels
// handed to a sink (the feed sends them to claim2cored as SetNodeLabels). A relist or a change
// sends the labels again; a Node that is not there (not registered yet, or deleted) sends
// nothing, so the daemon keeps the last labels it had.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "k8s/kube_config.hpp"
#include "k8s/list_watch.hpp"

namespace c2c::k8s {

using NodeLabels = std::map<std::string, std::string>;

class NodeLabelSink {
 public:
  virtual ~NodeLabelSink() = default;
  virtual void node_labels(const NodeLabels& labels) = 0;
  // "refused" (a Node whose labels are not strings), "relist", "error", "missing".
  virtual void on_node_notice(const std::string& kind, const std::string& message) = 0;
};

// metadata.labels of a Node object; nullopt and *error naming the field when they are malformed.
std::optional<NodeLabels> node_labels_of(const nlohmann::json& node, std::string* error);

struct NodeWatchStats {
  std::atomic<int> lists{0};
  std::atomic<int> watches{0};
  std::atomic<int> relists_after_gone{0};
  std::atomic<int> relists_after_break{0};
};

class NodeWatch {
 public:
  NodeWatch(KubeConfig cfg, ListWatchTiming timing, std::string node, NodeLabelSink& sink)
      : cfg_(std::move(cfg)), timing_(timing), node_(std::move(node)), sink_(sink) {}
  void run(const std::atomic<bool>& stop);  // blocks until stop
  const NodeWatchStats& stats() const { return stats_; }

 private:
  KubeConfig cfg_;
  ListWatchTiming timing_;
  std::string node_;
  NodeLabelSink& sink_;
  NodeWatchStats stats_;
};

}  // namespace c2c::k8s
