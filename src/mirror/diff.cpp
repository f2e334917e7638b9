#include "mirror/diff.hpp"

#include <algorithm>

namespace c2c::mirror {

Plan diff_plan(const DesiredTable& desired, const std::vector<ActualEntry>& actual, bool loading) {
  Plan plan;
  std::unordered_map<uint32_t, const RuntimeValue*> have;
  have.reserve(actual.size());
  for (const ActualEntry& a : actual) have.emplace(a.tid, &a.value);

  for (const auto& [tid, want] : desired) {
    auto it = have.find(tid);
    if (it == have.end()) {
      plan.ops.push_back(PlanOp{PlanOp::Kind::Add, tid, want, "desired, not in the map"});
    } else if (!(*it->second == want)) {
      plan.ops.push_back(PlanOp{PlanOp::Kind::Update, tid, want, "map value differs from the desired one"});
    }
  }
  for (const ActualEntry& a : actual) {
    if (desired.count(a.tid) != 0) continue;
    if (loading)
      plan.deferred_deletes.push_back(a.tid);
    else
      plan.ops.push_back(PlanOp{PlanOp::Kind::Delete, a.tid, a.value, "not explained by any desired entry (INV-5)"});
  }
  std::sort(plan.ops.begin(), plan.ops.end(), [](const PlanOp& x, const PlanOp& y) { return x.tid < y.tid; });
  std::sort(plan.deferred_deletes.begin(), plan.deferred_deletes.end());
  return plan;
}

}  // namespace c2c::mirror
