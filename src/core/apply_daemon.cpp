// The daemon's and the kernel map's events: time (boost lease renewals), a restart and the end of
// its loading, and the policy map read back or synced (spec/state-machine.md, "Events",
// "Reconcile").
#include <algorithm>

#include "core/event_handlers.hpp"

namespace c2c {

ApplyResult EventHandlers::operator()(const TimeAdvance& ev) {
  if (ev.now < s.now)
    return invalid("now", "time went backwards: " + std::to_string(ev.now) + " < " + std::to_string(s.now));
  if (ev.now == s.now) return ignored("time unchanged");
  s.now = ev.now;
  ApplyResult r;
  // A raised controller level ends by time too (CTL-4, CTL-5), also when no window comes.
  s.tick_controllers(r);
  // Leases are renewed at half-life; only live entries hold leases, so a renewal never
  // extends a boost whose lineage is gone (INV-8). A bounded step leaves the later due leases for
  // the next one, unless they have run out (CoreImpl::leases_to_renew).
  const std::vector<uint32_t> due = s.leases_to_renew(s.now, ev.max_renewals);
  if (due.empty()) return r;
  ++s.generation;
  for (uint32_t tid : due) {
    DesiredEntry e = s.desired.at(tid);
    e.value.boost_until = s.now + e.value.max_boost;
    e.value.generation = s.generation;
    s.set_entry(tid, std::move(e));
    r.changed_tids.push_back(tid);
  }
  return r;
}

ApplyResult EventHandlers::operator()(const DaemonRestart& ev) {
  uint64_t highest_actual = 0;
  ApplyResult r;
  for (const auto& [tid, v] : s.actual) {
    // A foreign entry beyond the bound must not carry G past it (or wrap it): it is unexplained
    // and the plan removes it (INV-5).
    if (v.generation > static_cast<uint64_t>(kMaxGeneration)) {
      r.warnings.push_back("kernel entry for tid " + std::to_string(tid) + " has generation " +
                           std::to_string(v.generation) + " beyond 2^53; not counted for the restart generation");
      continue;
    }
    highest_actual = std::max(highest_actual, v.generation);
  }
  if (ev.persisted_generation != 0 && ev.persisted_generation < s.generation)
    r.warnings.push_back("persisted generation " + std::to_string(ev.persisted_generation) +
                         " lags the generation in use " + std::to_string(s.generation) + " (INV-4)");
  const uint64_t base = ev.persisted_generation != 0 ? ev.persisted_generation : s.generation;
  // The restart's G is one above everything used: at the bound there is none (INV-4), and a G
  // beyond it would be ignored by the next restart, which would then step back.
  if (std::max(base, highest_actual) >= static_cast<uint64_t>(kMaxGeneration))
    return invalid(base >= highest_actual ? "persistedGeneration" : "entries.generation",
                   "the restart's generation would pass 2^53 (INV-4): " +
                       (base >= highest_actual ? "generation " + std::to_string(base) + " was used"
                                               : "a kernel entry holds generation " + std::to_string(highest_actual)) +
                       " and there is none above it (this node's generations are exhausted)");
  s.generation = std::max(base, highest_actual) + 1;
  ++s.epoch;
  s.loading = true;
  for (const auto& [tid, e] : s.desired) r.changed_tids.push_back(tid);
  std::sort(r.changed_tids.begin(), r.changed_tids.end());
  s.claims.clear();
  s.pods.clear();
  s.tasks.clear();
  s.strings.clear();
  s.cpusets.clear();
  s.tasks_by_comm.clear();
  s.tids_by_title.clear();
  s.tids_by_tgid.clear();
  s.tids_by_cgroup.clear();
  s.cgroup_by_id.clear();
  s.cgroups_in_order.clear();
  s.pod_by_cgroup.clear();
  s.pods_by_claim.clear();
  s.desired.clear();
  s.entries_by_origin.clear();
  s.lease_renewals.clear();
  s.conflicts.clear();
  // The controllers' levels are observed state: every one starts again at the static policy.
  for (auto& [key, st] : s.controllers) st = ControllerState{};
  for (const auto& [tid, v] : s.actual) s.removal_reasons[tid] = "not re-derived after the restart (INV-7)";
  // Every former entry and every kernel entry has a new op now (deferred deletes, while loading).
  for (uint32_t tid : r.changed_tids) s.touch(tid);
  for (const auto& [tid, v] : s.actual) s.touch(tid);
  return r;
}

ApplyResult EventHandlers::operator()(const SyncComplete&) {
  if (!s.loading) return ignored("not loading");
  s.loading = false;
  // The deferred deletes become deletes.
  std::vector<uint32_t> deferred;
  for (uint32_t tid : s.unsynced)
    if (!s.desired.count(tid)) deferred.push_back(tid);
  for (uint32_t tid : deferred) s.touch(tid);
  return {};
}

ApplyResult EventHandlers::operator()(const BpfObserved& ev) {
  Core::ActualTable next;
  for (size_t i = 0; i < ev.entries.size(); ++i) {
    const auto& e = ev.entries[i];
    std::string f = "entries[" + std::to_string(i) + "]";
    if (e.tid == 0) return invalid(f + ".tid", "must be positive");
    if (!next.emplace(e.tid, e.value).second) return invalid(f + ".tid", "duplicate tid " + std::to_string(e.tid));
  }
  if (next == s.actual) return ignored("actual state unchanged");
  std::vector<uint32_t> before;
  before.reserve(s.actual.size());
  for (const auto& [tid, v] : s.actual) before.push_back(tid);
  s.actual = std::move(next);
  forget_reasons();
  // Pinned entries found while the desired state is still loading predate this daemon.
  if (s.loading)
    for (const auto& [tid, v] : s.actual)
      if (!s.desired.count(tid)) s.removal_reasons.emplace(tid, "not re-derived after the restart (INV-7)");
  // A read-back is the truth about the whole map: every tid it or the previous view held, and
  // every entry it lacks, gets its op again (the caller's earlier writes may not have landed).
  for (uint32_t tid : before) s.touch(tid);
  for (const auto& [tid, v] : s.actual) s.touch(tid);
  for (const auto& [tid, e] : s.desired) s.touch(tid);
  return {};
}

// Executes plan() without building it: exactly the tids where D and A differ.
ApplyResult EventHandlers::operator()(const BpfSynced&) {
  std::vector<uint32_t> todo;
  for (uint32_t tid : s.unsynced)
    if (s.desired.count(tid) || !s.loading) todo.push_back(tid);
  if (todo.empty()) return ignored("nothing to apply");
  for (uint32_t tid : todo) {
    if (auto d = s.desired.find(tid); d != s.desired.end()) {
      s.actual[tid] = d->second.value;
    } else {
      s.actual.erase(tid);
      s.removal_reasons.erase(tid);
    }
    s.touch(tid);
  }
  // Entries gone from the map give their slots back, as the desired table's do (issue #13).
  shrink_if_sparse(s.actual);
  shrink_if_sparse(s.removal_reasons);
  return {};
}

void EventHandlers::forget_reasons() {
  for (auto it = s.removal_reasons.begin(); it != s.removal_reasons.end();) {
    if (s.actual.count(it->first)) ++it;
    else s.removal_reasons.erase(it++);  // a flat map's erase leaves the other iterators valid
  }
  shrink_if_sparse(s.removal_reasons);
}

}  // namespace c2c
