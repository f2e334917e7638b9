// The desired table's bookkeeping: writing and erasing an entry keeps the lease index, the
// entries by origin, the delete reasons and the reconcile marks (dirty, unsynced) in step.
#include "core/core_impl.hpp"

namespace c2c {

void CoreImpl::set_entry(uint32_t tid, DesiredEntry e) {
  auto cur = desired.find(tid);
  auto renew_at = [](const RuntimeValue& v) { return v.boost_until - v.max_boost / 2; };
  const bool had = cur != desired.end() && (cur->second.value.flags & kFlagBoost);
  const bool has = e.value.flags & kFlagBoost;
  // The lease index only moves when the renewal time does (most rewrites keep the lease).
  if (!(had && has && renew_at(cur->second.value) == renew_at(e.value))) {
    if (had) lease_renewals.erase({renew_at(cur->second.value), tid});
    if (has) lease_renewals.insert({renew_at(e.value), tid}, e.value.max_boost / 2);
  }
  removal_reasons.erase(tid);
  if (cur != desired.end()) {
    if (cur->second.origin != e.origin) {
      unlink_origin(cur->second.origin.get(), tid);
      entries_by_origin[e.origin.get()].insert(tid);
    }
    cur->second = std::move(e);
  } else {
    entries_by_origin[e.origin.get()].insert(tid);
    desired.emplace(tid, std::move(e));
  }
  touch(tid);
}

std::vector<uint32_t> CoreImpl::leases_to_renew(Nanos at, std::optional<uint32_t> limit) const {
  std::vector<uint32_t> out;
  if (!limit) {
    for (const auto& [renew_at, tid] : lease_renewals.due(at)) out.push_back(tid);
    return out;
  }
  std::vector<LeaseQueue::Lease> first = lease_renewals.first_due(at, *limit);
  for (const auto& [renew_at, tid] : first) out.push_back(tid);
  // Past the bound a lease may wait for a later step, but not once its boost has run out: a
  // desired entry whose lease lapsed would still say boosted (INV-8).
  for (const auto& lease : lease_renewals.run_out_candidates(at)) {
    if (!first.empty() && lease <= first.back()) continue;  // among the first ones
    const RuntimeValue& v = desired.at(lease.second).value;
    if (v.boost_until <= at) out.push_back(lease.second);
  }
  return out;
}

std::vector<uint32_t> CoreImpl::leases_maybe_run_out(Nanos at) const {
  std::vector<uint32_t> out;
  for (const auto& [renew_at, tid] : lease_renewals.run_out_candidates(at)) out.push_back(tid);
  return out;
}

void CoreImpl::erase_entry(uint32_t tid, const std::string& reason) {
  auto cur = desired.find(tid);
  if (cur == desired.end()) return;
  if (cur->second.value.flags & kFlagBoost)
    lease_renewals.erase({cur->second.value.boost_until - cur->second.value.max_boost / 2, tid});
  unlink_origin(cur->second.origin.get(), tid);
  desired.erase(cur);
  conflicts.erase(tid);
  // Only rederive() erases entries, never while iterating these maps.
  shrink_if_sparse(desired);
  shrink_if_sparse(conflicts);
  if (actual.count(tid)) removal_reasons[tid] = reason;
  touch(tid);
}

void CoreImpl::unlink_origin(const Origin* o, uint32_t tid) {
  auto it = entries_by_origin.find(o);
  if (it == entries_by_origin.end()) return;
  it->second.erase(tid);
  if (it->second.empty()) entries_by_origin.erase(it);
}

void CoreImpl::touch(uint32_t tid) {
  auto d = desired.find(tid);
  auto a = actual.find(tid);
  const bool in_d = d != desired.end(), in_a = a != actual.end();
  // A tid in neither table, or in both with the same value, has no op in plan() (plan_op),
  // whatever happened to it: it is neither unsynced nor dirty. (bpf_synced of a policy matching
  // 100k threads used to leave all of them dirty: the next delta walked 100k tids for no op, 28 ms
  // of the loop, issue #13.)
  const bool has_op = in_d != in_a || (in_d && !(d->second.value == a->second));
  if (!has_op) {
    dirty.erase(tid);
    unsynced.erase(tid);
    return;
  }
  dirty.insert(tid);
  unsynced.insert(tid);
}

}  // namespace c2c
