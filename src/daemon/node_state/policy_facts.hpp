// Per-policy counts for the intents (matched desired entries, of those the ones the map holds, of
// those the ones a read-back pass confirmed), kept incrementally: the engine tells it which TIDs
// changed in a turn (the core's changed_tids and the ops it wrote), so a turn costs O(changed
// TIDs), not O(desired table) (issue #13). `recount` rebuilds everything from the core: at
// startup and after BpfObserved, where the whole actual table may have moved.
//
// Confirmed (issue #14, "intents that tell the truth"): an entry the daemon's read-back pass found
// in the pinned map as desired (`confirm`). A TID stays confirmed while it is still in the map for
// the same policy generation (a boost lease renewal rewrites it and keeps it confirmed); a TID
// that joins a policy, a new policy generation, or an entry that left the map is unconfirmed
// until the next read-back. An intent is APPLIED only when every matched TID is confirmed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/core.hpp"
#include "daemon/node_state/intents.hpp"

namespace c2c::daemon {

class PolicyFacts {
 public:
  void recount(const Core& core);
  // Re-derives the contribution of each TID; returns true when any count moved.
  bool update(const Core& core, const std::vector<uint32_t>& tids);
  // The read-back pass found the map equal to the core's actual table: every entry in the map
  // as desired is confirmed. Returns true when any count moved.
  bool confirm();
  // matched / in_map / confirmed per policy with at least one entry (failures are the caller's).
  std::map<PolicyId, PolicyApplyFacts> facts() const;

 private:
  struct Slot {
    uint32_t policy = 0;  // index into policies_
    int64_t generation = 0;  // the policy generation of the desired entry
    bool in_map = false;
    bool confirmed = false;
  };
  uint32_t index_of(const PolicyId& id);
  // Adds tid's slot; `was` is its slot before (confirmed carries over when it still holds).
  void add(uint32_t tid, const Core& core, const Slot* was);
  void remove(uint32_t tid);

  std::unordered_map<uint32_t, Slot> slots_;  // every desired TID
  std::map<PolicyId, uint32_t> index_;
  std::vector<PolicyId> policies_;
  std::vector<PolicyApplyFacts> counts_;      // by policy index
};

}  // namespace c2c::daemon
