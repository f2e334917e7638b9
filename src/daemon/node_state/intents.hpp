// Intents: what the daemon promised to do for one policy generation on this node, and how far it
// got (spec/daemon.md, "Intents"). Pure: the engine feeds it facts, it keeps the states.
//
//   PENDING  accepted, nothing of it in the map: waiting for an acknowledged preview, or it has no
//            entry to write (matches no task, lost every conflict, its claim is stale); the reason
//            says which
//   SENT     its entries were written to the pinned map and not all of them read back yet
//   APPLIED  every matched task's entry was read back from the pinned map, at this policy
//            generation, by the daemon's read-back pass (PolicyFacts' confirmed count)
//   FAILED   an entry could not be written (map full, write error, generation lease: not
//            persisted): reason says why; a later good write moves it on to SENT
//
// One intent per live policy that selects this node: a newer generation replaces the older
// one's intent, a delete (or the node no longer being selected) removes it. That keeps the table
// as large as the policy set.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/node_api.hpp"
#include "core/model.hpp"

namespace c2c::daemon {

using node::Intent;
using node::IntentState;
using node::PolicyId;
const char* to_string(IntentState s);
std::optional<IntentState> intent_state_from_string(const std::string& s);

// Per-policy facts of one reconcile, gathered by the engine (PolicyFacts, the applier's report).
struct PolicyApplyFacts {
  uint32_t matched = 0;        // desired entries derived from the policy
  uint32_t in_map = 0;         // of those, entries the map holds after the apply
  uint32_t confirmed = 0;      // of those, entries a read-back pass found in the map
  std::string failure;         // first failed op of one of its entries, empty when none
};

class IntentTable {
 public:
  // A policy generation was accepted: a fresh PENDING intent (replaces the older generation's).
  void accepted(PolicyKind kind, const std::string& name, int64_t generation, const std::string& node,
                std::vector<std::string> warnings, int64_t now_ms);
  void removed(PolicyKind kind, const std::string& name);
  // requirePreview without an acknowledged preview of this generation: stays PENDING, says why.
  void waiting(PolicyKind kind, const std::string& name, const std::string& reason, int64_t now_ms);
  // Why a policy has fewer entries than tasks it matches (intent_reasons.hpp: "lost the conflict
  // to ...", "claim <uid> stale (fail closed)", "matches no task on this node"); "" when nothing.
  // Kept until the next diagnosis; shown in the reason from the next settled().
  void diagnosed(PolicyKind kind, const std::string& name, std::string why);
  // After a reconcile: each intent's state from its facts. `owed_error`: why writes are still
  // owed (the apply failed, the generation lease cannot be extended), "" when none is.
  void settled(const std::map<PolicyId, PolicyApplyFacts>& facts, const std::string& owed_error, int64_t now_ms);

  const Intent* find(PolicyKind kind, const std::string& name) const;
  std::vector<Intent> list(const std::string& policy_filter = {}, std::optional<PolicyKind> kind = std::nullopt) const;
  void restore(std::vector<Intent> intents);  // from the durable state
  size_t size() const { return by_policy_.size(); }
  size_t count(IntentState s) const;
  // Grows whenever an intent may have changed (what list() returns): a loop turn that left it as
  // it was need not copy and compare the table to find what to publish.
  uint64_t version() const { return version_; }

 private:
  struct Slot {
    Intent intent;
    bool waiting = false;
    std::string diagnosis;
  };
  std::map<PolicyId, Slot> by_policy_;
  uint64_t version_ = 0;
};

}  // namespace c2c::daemon
