#include "k8s/node_watch.hpp"

namespace c2c::k8s {

using nlohmann::json;

std::optional<NodeLabels> node_labels_of(const json& node, std::string* error) {
  auto fail = [&](const std::string& m) -> std::optional<NodeLabels> {
    if (error) *error = m;
    return std::nullopt;
  };
  if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object())
    return fail("metadata: missing");
  const json& md = node["metadata"];
  NodeLabels out;
  if (!md.contains("labels") || md["labels"].is_null()) return out;
  if (!md["labels"].is_object()) return fail("metadata.labels: not an object");
  for (const auto& [k, v] : md["labels"].items()) {
    if (!v.is_string()) return fail("metadata.labels." + k + ": not a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

namespace {

std::string name_of(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return {};
  auto it = obj["metadata"].find("name");
  return it != obj["metadata"].end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Field selectors are exact; the check by name is for a server that ignores them.
class NodeHandler : public ListWatchHandler {
 public:
  NodeHandler(const std::string& node, NodeLabelSink& sink) : node_(node), sink_(sink) {}
  void on_list(std::vector<json> items, const std::string&, const std::string&) override {
    for (const auto& item : items)
      if (name_of(item) == node_) return send(item);
    sink_.on_node_notice("missing", "Node " + node_ + " is not in the API server's list: the daemon keeps its labels");
  }
  bool on_event(const std::string& type, const json& object, const std::string&) override {
    if (type == "ADDED" || type == "MODIFIED") {
      if (name_of(object) == node_) send(object);
      return true;
    }
    if (type == "DELETED") {
      if (name_of(object) == node_)
        sink_.on_node_notice("missing", "Node " + node_ + " was deleted: the daemon keeps its last labels");
      return true;
    }
    return false;
  }
  void on_notice(const std::string& kind, const std::string& message) override { sink_.on_node_notice(kind, message); }

 private:
  void send(const json& node) {
    std::string err;
    auto labels = node_labels_of(node, &err);
    if (!labels) {
      sink_.on_node_notice("refused", "Node " + node_ + ": " + err + " (skipped; the daemon keeps its labels)");
      return;
    }
    sink_.node_labels(*labels);
  }

  const std::string& node_;
  NodeLabelSink& sink_;
};

// metadata.name=<node>, URL-encoded ('=' is %3D); node names are DNS subdomains, nothing else to escape.
std::string field_selector(const std::string& node) { return "&fieldSelector=metadata.name%3D" + node; }

}  // namespace

void NodeWatch::run(const std::atomic<bool>& stop) {
  ListWatchTarget target{"nodes", "/api/v1/nodes", field_selector(node_)};
  ListWatchCounters counters{&stats_.lists, &stats_.watches, &stats_.relists_after_gone, &stats_.relists_after_break};
  NodeHandler handler(node_, sink_);
  list_watch(cfg_, target, timing_, handler, counters, stop);
}

}  // namespace c2c::k8s
