// Per-policy counts for the intents (matched desired entries, of those the ones the map holds),
// kept incrementally: the engine tells it which TIDs changed in a turn (the core's changed_tids
// and the ops it wrote), so a turn costs O(changed TIDs), not O(desired table) (issue #13).
// `recount` rebuilds everything from the core: at startup and after BpfObserved, where the
// whole actual table may have moved.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/core.hpp"
#include "daemon/intents.hpp"

namespace c2c::daemon {

class PolicyFacts {
 public:
  void recount(const Core& core);
  // Re-derives the contribution of each TID; returns true when any count moved.
  bool update(const Core& core, const std::vector<uint32_t>& tids);
  // matched / in_map per policy with at least one entry (failures are the caller's to add).
  std::map<PolicyId, PolicyApplyFacts> facts() const;

 private:
  struct Slot {
    uint32_t policy = 0;  // index into policies_
    bool in_map = false;
  };
  uint32_t index_of(const PolicyId& id);
  void add(uint32_t tid, const Core& core);
  void remove(uint32_t tid);

  std::unordered_map<uint32_t, Slot> slots_;  // every desired TID
  std::map<PolicyId, uint32_t> index_;
  std::vector<PolicyId> policies_;
  std::vector<PolicyApplyFacts> counts_;      // by policy index
};

}  // namespace c2c::daemon
