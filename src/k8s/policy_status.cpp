#include "k8s/policy_status.hpp"

#include <algorithm>
#include <ctime>

namespace c2c::k8s {

using nlohmann::json;

std::string bounded_reason(const std::string& reason) {
  if (reason.size() <= kMaxReasonBytes) return reason;
  size_t cut = kMaxReasonBytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return reason.substr(0, cut) + "...";
}

std::map<PolicyKey, NodeStatusEntry> entries_from_intents(const std::vector<reply::Intent>& intents,
                                                          const std::string& node) {
  std::map<PolicyKey, NodeStatusEntry> out;
  for (const auto& i : intents) {
    if (!i.node.empty() && i.node != node) continue;  // a daemon speaks for its own node only
    PolicyKey key{i.kind == PolicyKind::Dra ? PolicyKind::Dra : PolicyKind::Node, i.policy};
    auto it = out.find(key);
    if (it != out.end() && it->second.observed_generation > i.policy_generation) continue;
    out[key] = NodeStatusEntry{node, reply::state_name(i.state), i.policy_generation, i.matched_tasks,
                               i.applied_entries, bounded_reason(i.reason)};
  }
  return out;
}

namespace {

json entry_json(const NodeStatusEntry& e, const std::string& transition) {
  return {{"node", e.node},
          {"state", e.state},
          {"observedGeneration", e.observed_generation},
          {"matchedTasks", e.matched_tasks},
          {"entries", e.entries},
          {"reason", e.reason},
          {"lastTransitionTime", transition}};
}

std::string node_of(const json& entry) {
  if (!entry.is_object()) return {};
  auto it = entry.find("node");
  return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::vector<std::string> status_nodes(const json& status) {
  std::vector<std::string> out;
  if (!status.is_object() || !status.contains("nodes") || !status["nodes"].is_array()) return out;
  for (const auto& e : status["nodes"])
    if (auto n = node_of(e); !n.empty()) out.push_back(n);
  return out;
}

json merged_status(const json& status, const std::string& node, const std::optional<NodeStatusEntry>& mine,
                   const std::set<std::string>& gone, const std::string& now) {
  json out = status.is_object() ? status : json::object();
  std::map<std::string, json> by_node;  // sorted by node name
  std::string previous_state, previous_transition;
  if (out.contains("nodes") && out["nodes"].is_array()) {
    for (const auto& e : out["nodes"]) {
      std::string n = node_of(e);
      if (n.empty() || gone.count(n)) continue;
      if (n == node) {
        previous_state = e.value("state", "");
        previous_transition = e.value("lastTransitionTime", "");
        continue;
      }
      by_node[n] = e;
    }
  }
  if (mine) {
    // The state's transition time, not the write's: a new reason or count at the same state keeps it.
    bool same = previous_state == mine->state && !previous_transition.empty();
    by_node[node] = entry_json(*mine, same ? previous_transition : now);
  }
  json nodes = json::array();
  size_t applied = 0;
  std::vector<std::string> not_applied;
  for (auto& [n, e] : by_node) {
    std::string state = e.is_object() ? e.value("state", "") : "";
    if (state == "Applied") {
      ++applied;
    } else {
      std::string reason = e.is_object() && e.contains("reason") && e["reason"].is_string() ? e["reason"].get<std::string>() : "";
      not_applied.push_back(n + ": " + (reason.empty() ? (state.empty() ? "Unknown" : state) : reason));
    }
    nodes.push_back(std::move(e));
  }
  out["nodes"] = std::move(nodes);
  out["applied"] = std::to_string(applied) + "/" + std::to_string(by_node.size()) + " nodes";
  std::string reason = not_applied.empty() ? "" : not_applied.front();
  if (not_applied.size() > 1) reason += " (+" + std::to_string(not_applied.size() - 1) + " more)";
  out["reason"] = reason;
  return out;
}

std::optional<int64_t> acknowledged_generation(const json& object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) return std::nullopt;
  const json& md = object["metadata"];
  if (!md.contains("annotations") || !md["annotations"].is_object()) return std::nullopt;
  auto it = md["annotations"].find(kAckAnnotation);
  if (it == md["annotations"].end() || !it->is_string()) return std::nullopt;
  const std::string& v = it->get_ref<const std::string&>();
  if (v.empty() || v.size() > 18) return std::nullopt;
  int64_t g = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    g = g * 10 + (c - '0');
  }
  return g > 0 ? std::optional<int64_t>(g) : std::nullopt;
}

std::string rfc3339(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace c2c::k8s
