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

Plan CoreImpl::plan() const {
  Plan p;
  for (const auto& [tid, e] : desired) {
    auto a = actual.find(tid);
    if (a == actual.end()) {
      p.ops.push_back({PlanOp::Kind::Add, tid, e.value,
                       "new: " + std::string(to_string(e.origin->kind)) + "/" + e.origin->policy + " (" +
                           to_string(e.strategy) + ")"});
    } else if (a->second != e.value) {
      p.ops.push_back({PlanOp::Kind::Update, tid, e.value, describe_change(a->second, e.value)});
    }
  }
  for (const auto& [tid, v] : actual) {
    if (desired.count(tid)) continue;
    // Nothing is pruned before the desired state is fully loaded after a restart (INV-7).
    if (loading) {
      p.deferred_deletes.push_back(tid);
      continue;
    }
    auto why = removal_reasons.find(tid);
    p.ops.push_back({PlanOp::Kind::Delete, tid, v,
                     why != removal_reasons.end() ? why->second : "unexplained entry: no live lineage (INV-5)"});
  }
  std::sort(p.ops.begin(), p.ops.end(), [](const PlanOp& a, const PlanOp& b) { return a.tid < b.tid; });
  std::sort(p.deferred_deletes.begin(), p.deferred_deletes.end());
  return p;
}

}  // namespace c2c
