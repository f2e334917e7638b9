// The claim events: allocated, updated, deallocated (spec/state-machine.md, "Events"; the
// generation rules of INV-3 and the tombstones of deallocated claims).
#include <algorithm>

#include "core/event_handlers.hpp"

namespace c2c {

ApplyResult EventHandlers::upsert_claim(const Claim& c) {
  auto hw = s.claim_high_water.find(c.uid);
  auto live = s.claims.find(c.uid);
  if (hw != s.claim_high_water.end()) {
    if (c.generation < hw->second)
      return ignored("INV-3: claim " + c.uid + " generation " + std::to_string(c.generation) +
                     " is older than " + std::to_string(hw->second));
    if (c.generation == hw->second) {
      if (live != s.claims.end()) {
        if (live->second.claim == c) return ignored("claim " + c.uid + " unchanged");
        return invalid("claim.generation", "claim " + c.uid + " changed but its generation " +
                                               std::to_string(c.generation) + " did not increase");
      }
      if (s.claim_tombstones.count(c.uid))
        return ignored("INV-3: claim " + c.uid + " was deallocated at generation " + std::to_string(hw->second) +
                       "; a new allocation needs a newer generation");
      // Neither live nor deallocated: it was live before a restart and is re-listed at the
      // generation it had (INV-7: a restart rebuilds all the state that is still valid).
    }
  }
  std::unordered_set<std::string> pods_hit(c.reserved_for.begin(), c.reserved_for.end());
  if (live != s.claims.end())
    pods_hit.insert(live->second.claim.reserved_for.begin(), live->second.claim.reserved_for.end());
  if (auto it = s.pods_by_claim.find(c.uid); it != s.pods_by_claim.end())
    pods_hit.insert(it->second.begin(), it->second.end());

  s.claims[c.uid] = ClaimState{c, s.epoch};
  s.claim_high_water[c.uid] = c.generation;
  s.claim_tombstones.erase(c.uid);

  ApplyResult r;
  if (!s.node.name.empty() && !c.node.empty() && c.node != s.node.name)
    r.warnings.push_back("claim " + c.uid + " is allocated for node " + c.node + ", not " + s.node.name);
  if (c.reserved_for.empty()) r.warnings.push_back("claim " + c.uid + " is reserved for no pod");
  auto affected = s.tasks_of_pods(pods_hit);
  add_dra_selected(affected);
  s.rederive(affected, r, "claim " + c.uid + " updated to generation " + std::to_string(c.generation));
  return r;
}
ApplyResult EventHandlers::operator()(const ClaimAllocated& ev) { return upsert_claim(ev.claim); }
ApplyResult EventHandlers::operator()(const ClaimUpdated& ev) { return upsert_claim(ev.claim); }

// Node policies with draSelectors depend on which devices the node holds.
void EventHandlers::add_dra_selected(std::unordered_set<uint32_t>& affected) const {
  std::vector<const TitleAndComm*> res;
  for (const auto& [name, st] : s.node_policies)
    if (!st.policy.dra_selectors.empty()) res.push_back(&st.regex);
  if (!res.empty()) {
    auto more = s.tasks_matching(res);
    affected.insert(more.begin(), more.end());
  }
}

ApplyResult EventHandlers::operator()(const ClaimDeallocated& ev) {
  auto live = s.claims.find(ev.uid);
  auto hw = s.claim_high_water.find(ev.uid);
  if (live == s.claims.end()) {
    // A claim this node never saw leaves nothing behind: there is no entry to remove and no
    // allocation a tombstone could stop (the observer delivers a claim's versions in order).
    if (hw == s.claim_high_water.end()) return ignored("claim " + ev.uid + " was never allocated on this node");
    if (s.claim_tombstones.count(ev.uid) && ev.generation <= hw->second)
      return ignored("claim " + ev.uid + " is already deallocated (generation " + std::to_string(hw->second) + ")");
    // Known but not re-listed since a restart (or deallocated again at a newer generation): the
    // tombstone keeps its last allocation from coming back (INV-3).
    hw->second = std::max(hw->second, ev.generation);
    s.claim_tombstones.insert(ev.uid);
    ApplyResult r;
    r.message = "claim " + ev.uid + " not allocated; tombstone recorded at generation " + std::to_string(hw->second);
    return r;
  }
  if (ev.generation != 0 && ev.generation < live->second.claim.generation)
    return ignored("INV-3: deallocation of generation " + std::to_string(ev.generation) + " but claim " + ev.uid +
                   " is at generation " + std::to_string(live->second.claim.generation));
  std::unordered_set<std::string> pods_hit(live->second.claim.reserved_for.begin(),
                                           live->second.claim.reserved_for.end());
  if (auto it = s.pods_by_claim.find(ev.uid); it != s.pods_by_claim.end())
    pods_hit.insert(it->second.begin(), it->second.end());
  hw->second = std::max({hw->second, ev.generation, live->second.claim.generation});
  s.claim_tombstones.insert(ev.uid);
  s.claims.erase(live);
  ApplyResult r;
  auto affected = s.tasks_of_pods(pods_hit);
  add_dra_selected(affected);
  s.rederive(affected, r, "claim " + ev.uid + " deallocated (INV-1)");
  return r;
}

}  // namespace c2c
