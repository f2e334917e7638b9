// How the node's intents follow the core (spec/daemon.md, "Intents"): the per-policy counts kept
// from the TIDs a turn touched (PolicyFacts) and when they are rebuilt, the facts of one apply,
// and the intent table settled and refreshed from them. The engine and the node-state model test
// (tests/unit/daemon_node_state_model_test.cpp) both run this code: the test used to mirror the
// engine's copy of it, so a bug in the engine's copy was out of its reach (issue 45). Pure: no
// Linux, no pinned map (an apply's report is data).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "daemon/durable/durable_state.hpp"
#include "daemon/node_state/intents.hpp"
#include "daemon/node_state/policy_facts.hpp"
#include "mirror/applier.hpp"

namespace c2c::daemon {

// PolicyFacts kept incrementally from the TIDs a turn touched, with the rules of when the counts
// are rebuilt from the whole core instead (at the start, after the actual table was re-observed).
class IntentFacts {
 public:
  // TIDs whose desired or actual entry may have moved: an apply's changed_tids, the ops written.
  void touched(const std::vector<uint32_t>& tids) { dirty_.insert(dirty_.end(), tids.begin(), tids.end()); }
  void touched(uint32_t tid) { dirty_.push_back(tid); }
  bool has_touched() const { return !dirty_.empty(); }
  // The actual table was re-observed (BpfObserved after a failed write): any entry may have
  // moved, so the next settle recounts everything.
  void observed() { recount_ = true; }
  // A read-back found drift and the core re-observed the map: recounted at once, not at the
  // repair's settle, so an entry the map lost or holds with another value loses its confirmation
  // before its rewrite (a recount after the rewrite would carry the old confirmation over:
  // issue 45); the repair's settle recounts again.
  void drifted(const Core& core);
  // The counts brought up to date with the core; true when any count may have moved (a recount
  // always may). Forgets the touched TIDs.
  bool settle(const Core& core);
  // A read-back pass found the map equal to the core's actual table: the counts brought up to
  // date, then every entry in the map as desired confirmed. The touched TIDs are kept: the turn's
  // reconcile still settles them (re-deriving a confirmed TID keeps it confirmed).
  void confirm(const Core& core);
  // What the intents are settled from: the counts and, after an apply, each policy's first
  // failed op (the reason of its FAILED state).
  std::map<PolicyId, PolicyApplyFacts> facts(const Core& core, const mirror::ApplyReport* report) const;

 private:
  void bring_up_to_date(const Core& core, bool* moved);

  PolicyFacts counts_;
  std::vector<uint32_t> dirty_;
  bool recount_ = true;  // nothing counted yet
};

// requirePreview: a DRA policy without an acknowledged preview of its generation stays PENDING,
// saying so (IntentTable::waiting).
void refresh_preview_waits(const DurableState& durable, IntentTable& intents, int64_t now_ms);

// After a reconcile or a read-back: the preview waits, then every intent's state from its facts.
// `owed_error`: why writes are still owed ("" when none is).
void settle_intents(IntentTable& intents, const DurableState& durable,
                    const std::map<PolicyId, PolicyApplyFacts>& facts, const std::string& owed_error, int64_t now_ms);

// DRA policies always (they reach the node through its pods); a node policy when the core says
// its nodeNames, nodeSelectors and draSelectors pick this node (else *why, when given).
bool selects_this_node(const Core& core, const AnyPolicy& p, std::string* why);

// One intent per live policy that selects this node: a new one (PENDING) for a policy or policy
// generation without one, none for a policy that no longer selects this node; each with the
// reason it has fewer entries than tasks (intent_reasons.hpp).
void refresh_intents(IntentTable& intents, const Core& core, const DurableState& durable, const std::string& node,
                     int64_t now_ms);

}  // namespace c2c::daemon
