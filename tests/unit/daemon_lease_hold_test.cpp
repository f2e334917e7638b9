// While the generation lease cannot be extended (a full state directory), the engine writes the
// deletes of a plan and holds its adds and updates (daemon/reconciler/lease_hold.hpp; issue 42: ~50 entries
// of tasks that had exited stayed in the map while the disk was full).
#include <gtest/gtest.h>

#include "daemon/reconciler/lease_hold.hpp"

namespace c2c::daemon {
namespace {

PlanOp op(PlanOp::Kind k, uint32_t tid) {
  PlanOp o;
  o.kind = k;
  o.tid = tid;
  return o;
}

TEST(LeaseHold, DeletesAreWrittenAddsAndUpdatesWaitForTheLease) {
  Plan plan;
  plan.ops = {op(PlanOp::Kind::Add, 1), op(PlanOp::Kind::Delete, 2), op(PlanOp::Kind::Update, 3),
              op(PlanOp::Kind::Delete, 4)};
  plan.deferred_deletes = {9};
  const auto held = hold_for_lease(plan);
  EXPECT_EQ(held, (std::vector<uint32_t>{1, 3}));
  ASSERT_EQ(plan.ops.size(), 2u);
  EXPECT_EQ(plan.ops[0].tid, 2u);
  EXPECT_EQ(plan.ops[1].tid, 4u);
  for (const auto& o : plan.ops) EXPECT_EQ(o.kind, PlanOp::Kind::Delete);
  EXPECT_EQ(plan.deferred_deletes, (std::vector<uint32_t>{9})) << "a deferred delete stays deferred (INV-7)";
}

TEST(LeaseHold, APlanOfDeletesOnlyIsWrittenWhole) {
  Plan plan;
  plan.ops = {op(PlanOp::Kind::Delete, 5)};
  EXPECT_TRUE(hold_for_lease(plan).empty());
  EXPECT_EQ(plan.ops.size(), 1u);
}

}  // namespace
}  // namespace c2c::daemon
