// Intents: what the daemon promised to do for one policy generation on this node, and how far it
// got (spec/daemon.md, "Intents"). Pure: the engine feeds it facts, it keeps the states.
//
//   PENDING  accepted (or waiting: requirePreview without an acknowledged preview, reason says so)
//   SENT     its entries were handed to the mirror in the current apply
//   APPLIED  the apply that included them succeeded (the node-side path accepted the intent; a
//            policy matching no task is APPLIED with matched_tasks 0 and a warning)
//   FAILED   the apply failed for one of its entries (map full, write error): reason says why;
//            a later successful apply moves it back to APPLIED
//
// One intent per live policy: a newer generation replaces the older one's intent, a delete
// removes it. That keeps the table as large as the policy set.
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

// Per-policy facts of one apply, gathered by the engine.
struct PolicyApplyFacts {
  uint32_t matched = 0;        // desired entries derived from the policy
  uint32_t in_map = 0;         // of those, entries the map holds after the apply
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
  // Everything PENDING that is not waiting goes to SENT (the plan is about to be executed).
  void sent(int64_t now_ms);
  // After the apply. apply_ok false with no per-policy failure: the whole apply failed (reason).
  void applied(const std::map<PolicyId, PolicyApplyFacts>& facts, bool apply_ok, const std::string& apply_error,
               int64_t now_ms);

  const Intent* find(PolicyKind kind, const std::string& name) const;
  std::vector<Intent> list(const std::string& policy_filter = {}, std::optional<PolicyKind> kind = std::nullopt) const;
  void restore(std::vector<Intent> intents);  // from the durable state
  size_t size() const { return by_policy_.size(); }
  size_t count(IntentState s) const;

 private:
  struct Slot {
    Intent intent;
    bool waiting = false;
  };
  std::map<PolicyId, Slot> by_policy_;
};

}  // namespace c2c::daemon
