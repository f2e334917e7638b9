#include "mirror/diff.hpp"

#include <algorithm>

namespace c2c::mirror {

// Reasons fit the std::string small-buffer (<= 15 chars): a 100k-entry plan then allocates
// nothing per op for them.
Plan diff_plan(const DesiredTable& desired, const std::vector<ActualEntry>& actual, bool loading) {
  Plan plan;
  std::vector<uint32_t> want;
  want.reserve(desired.size());
  for (const auto& kv : desired) want.push_back(kv.first);
  std::sort(want.begin(), want.end());

  // read_actual() returns entries sorted by tid; sort a copy of the order only if a caller did not.
  std::vector<const ActualEntry*> have;
  have.reserve(actual.size());
  for (const ActualEntry& a : actual) have.push_back(&a);
  if (!std::is_sorted(have.begin(), have.end(), [](auto* x, auto* y) { return x->tid < y->tid; }))
    std::sort(have.begin(), have.end(), [](auto* x, auto* y) { return x->tid < y->tid; });

  plan.ops.reserve(want.size() + have.size());
  size_t i = 0, j = 0;
  while (i < want.size() || j < have.size()) {
    if (j == have.size() || (i < want.size() && want[i] < have[j]->tid)) {
      plan.ops.push_back(PlanOp{PlanOp::Kind::Add, want[i], desired.at(want[i]), "not in map"});
      ++i;
    } else if (i == want.size() || have[j]->tid < want[i]) {
      if (loading)
        plan.deferred_deletes.push_back(have[j]->tid);
      else  // unexplained by any desired entry (INV-5)
        plan.ops.push_back(PlanOp{PlanOp::Kind::Delete, have[j]->tid, have[j]->value, "INV-5 stale"});
      ++j;
    } else {
      const RuntimeValue& w = desired.at(want[i]);
      if (!(have[j]->value == w)) plan.ops.push_back(PlanOp{PlanOp::Kind::Update, want[i], w, "value differs"});
      ++i;
      ++j;
    }
  }
  return plan;
}

}  // namespace c2c::mirror
