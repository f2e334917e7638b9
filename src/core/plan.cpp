// Reconcile plan: the operations that make the kernel's policy map equal the desired table.
#include <algorithm>

#include "core/core_impl.hpp"

namespace c2c {

namespace {

std::string describe_change(const RuntimeValue& from, const RuntimeValue& to) {
  if (from.start != to.start)
    return "tid reused: start " + std::to_string(from.start) + " -> " + std::to_string(to.start) + " (INV-2)";
  std::string what;
  auto add = [&](const char* s) { what += what.empty() ? s : std::string(", ") + s; };
  if (from.exec_class != to.exec_class) add("class");
  if (from.slice_ns != to.slice_ns) add("slice");
  if (from.allowed != to.allowed || from.preferred != to.preferred) add("cpus");
  if (from.boost_until != to.boost_until || from.max_boost != to.max_boost) add("boost lease");
  if (from.flags != to.flags) add("flags");
  if (from.tgid != to.tgid) add("tgid");
  if (what.empty()) what = "generation";
  return "changed (" + what + "): generation " + std::to_string(from.generation) + " -> " +
         std::to_string(to.generation);
}

}  // namespace

// One op per tid, the same for the full plan and the delta.
std::optional<PlanOp> CoreImpl::plan_op(uint32_t tid, bool* deferred) const {
  *deferred = false;
  auto d = desired.find(tid);
  auto a = actual.find(tid);
  if (d != desired.end()) {
    const DesiredEntry& e = d->second;
    if (a == actual.end())
      return PlanOp{PlanOp::Kind::Add, tid, e.value,
                    "new: " + std::string(to_string(e.origin->kind)) + "/" + e.origin->policy + " (" +
                        to_string(e.strategy) + ")"};
    if (a->second != e.value) return PlanOp{PlanOp::Kind::Update, tid, e.value, describe_change(a->second, e.value)};
    return std::nullopt;
  }
  if (a == actual.end()) return std::nullopt;
  // Nothing is pruned before the desired state is fully loaded after a restart (INV-7).
  if (loading) {
    *deferred = true;
    return std::nullopt;
  }
  auto why = removal_reasons.find(tid);
  return PlanOp{PlanOp::Kind::Delete, tid, a->second,
                why != removal_reasons.end() ? why->second : "unexplained entry: no live lineage (INV-5)"};
}

namespace {

// Appends the op (or the deferred delete) of each tid; tids must be sorted and unique.
void plan_tids(const CoreImpl& s, const std::vector<uint32_t>& tids, Plan& p) {
  for (uint32_t tid : tids) {
    bool deferred = false;
    if (auto op = s.plan_op(tid, &deferred)) p.ops.push_back(std::move(*op));
    else if (deferred) p.deferred_deletes.push_back(tid);
  }
}

std::vector<uint32_t> sorted_unique(std::vector<uint32_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

Plan CoreImpl::plan() const {
  std::vector<uint32_t> tids;
  tids.reserve(desired.size() + actual.size());
  for (const auto& [tid, e] : desired) tids.push_back(tid);
  for (const auto& [tid, v] : actual) tids.push_back(tid);
  Plan p;
  plan_tids(*this, sorted_unique(std::move(tids)), p);
  return p;
}

Plan CoreImpl::plan_of(std::vector<uint32_t> tids) const {
  Plan p;
  plan_tids(*this, sorted_unique(std::move(tids)), p);
  return p;
}

std::vector<uint32_t> CoreImpl::entry_keys() const {
  std::vector<uint32_t> keys;
  keys.reserve(desired.size() + actual.size());
  for (const auto& [tid, e] : desired) keys.push_back(tid);
  for (const auto& [tid, v] : actual)
    if (!desired.contains(tid)) keys.push_back(tid);
  return keys;
}

Plan CoreImpl::take_plan_delta() {
  Plan p;
  plan_tids(*this, sorted_unique(std::vector<uint32_t>(dirty.begin(), dirty.end())), p);
  dirty.clear();
  return p;
}

}  // namespace c2c
