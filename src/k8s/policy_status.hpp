// The policy CRDs' status, without I/O: one entry per node (written by that node's feed from its
// daemon's intents), the summary the printer columns show, and the preview acknowledgement
// annotation. The writer (status_writer.hpp) reads, merges here and patches with the object's
// resourceVersion, so two nodes writing at once cannot lose each other's entry (409 -> re-read).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/replies.hpp"
#include "core/model.hpp"

namespace c2c::k8s {

// metadata.annotations key of the cluster-wide preview acknowledgement: the decimal
// metadata.generation the operator previewed and acknowledged (`claim2core preview --acknowledge
// --kubernetes`). Every node's feed acknowledges that generation to its daemon; any other value
// (an older generation: the spec changed since) acknowledges nothing.
inline constexpr const char* kAckAnnotation = "claim2core.io/acknowledged-generation";

// One node's entry in status.nodes[].
struct NodeStatusEntry {
  std::string node;
  std::string state;               // reply::state_name: Pending | Sent | Applied | Failed | Unknown
  int64_t observed_generation = 0; // the policy generation the daemon's intent is for
  uint32_t matched_tasks = 0;
  uint32_t entries = 0;            // entries in the pinned map
  std::string reason;              // the daemon's reason, verbatim
  // Everything but lastTransitionTime (the writer sets that only when the state changes).
  bool operator==(const NodeStatusEntry&) const = default;
};

using PolicyKey = std::pair<PolicyKind, std::string>;  // kind, metadata.name

// status.nodes[].reason's maxLength in the CRDs: a longer reason would make the API server refuse
// the whole patch, so it is cut (at a UTF-8 boundary, ending "...").
inline constexpr size_t kMaxReasonBytes = 1024;
std::string bounded_reason(const std::string& reason);

// The daemon's intents -> this node's entry per policy; when a policy has several intents (an
// older generation still listed), the highest generation's.
std::map<PolicyKey, NodeStatusEntry> entries_from_intents(const std::vector<reply::Intent>& intents,
                                                          const std::string& node);

// `status` with this node's entry set (`mine`) or removed (nullopt), the entries of `gone` nodes
// removed, every other node's entry untouched, nodes sorted by name, and the summary recomputed:
// status.applied "<A>/<N> nodes" (entries in state Applied / entries) and status.reason, the first
// node not Applied as "<node>: <reason or state>" (+ how many more), empty when all are.
// lastTransitionTime is kept while the state stays, else `now`.
nlohmann::json merged_status(const nlohmann::json& status, const std::string& node,
                             const std::optional<NodeStatusEntry>& mine, const std::set<std::string>& gone,
                             const std::string& now);

// The node names of status.nodes[] (malformed entries skipped).
std::vector<std::string> status_nodes(const nlohmann::json& status);

// metadata.annotations[kAckAnnotation] as a generation; nullopt when absent, empty or not a
// positive decimal number.
std::optional<int64_t> acknowledged_generation(const nlohmann::json& object);

// RFC 3339 UTC with seconds, as Kubernetes writes times ("2026-12-01T15:52:16Z").
std::string rfc3339(int64_t unix_seconds);

}  // namespace c2c::k8s
