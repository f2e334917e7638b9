// The mirror's standalone desired-vs-actual diff (tools, crash test, benchmark).
#include <gtest/gtest.h>

#include "mirror/diff.hpp"
#include "mirror/synthetic.hpp"

namespace c2c::mirror {
namespace {

RuntimeValue val(uint64_t start, uint64_t gen) {
  RuntimeValue v;
  v.start = start;
  v.generation = gen;
  v.exec_class = ExecClass::Normal;
  return v;
}

TEST(MirrorDiff, AddsUpdatesAndDeletesSortedByTid) {
  DesiredTable desired{{3, val(30, 2)}, {1, val(10, 2)}, {2, val(20, 1)}};
  std::vector<ActualEntry> actual{{2, val(20, 1)}, {1, val(10, 1)}, {9, val(90, 1)}};
  Plan p = diff_plan(desired, actual, false);
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[0].tid, 1u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::Update);
  EXPECT_EQ(p.ops[0].value, val(10, 2));
  EXPECT_EQ(p.ops[1].tid, 3u);
  EXPECT_EQ(p.ops[1].kind, PlanOp::Kind::Add);
  EXPECT_EQ(p.ops[2].tid, 9u);
  EXPECT_EQ(p.ops[2].kind, PlanOp::Kind::Delete);
  EXPECT_EQ(p.ops[2].value, val(90, 1)) << "a Delete carries the value it expects to remove";
  EXPECT_NE(p.ops[2].reason.find("INV-5"), std::string::npos) << p.ops[2].reason;
  EXPECT_TRUE(p.deferred_deletes.empty());
}

TEST(MirrorDiff, LoadingDefersDeletes) {
  DesiredTable desired{{1, val(10, 1)}};
  std::vector<ActualEntry> actual{{1, val(10, 1)}, {7, val(70, 1)}, {5, val(50, 1)}};
  Plan p = diff_plan(desired, actual, true);
  EXPECT_TRUE(p.ops.empty());
  EXPECT_EQ(p.deferred_deletes, (std::vector<uint32_t>{5, 7}));
}

TEST(MirrorDiff, EqualTablesGiveAnEmptyPlan) {
  DesiredTable desired = synthetic_table(3, 500, 9);
  std::vector<ActualEntry> actual;
  for (const auto& [tid, v] : desired) actual.push_back({tid, v});
  Plan p = diff_plan(desired, actual, false);
  EXPECT_TRUE(p.ops.empty());
  EXPECT_TRUE(p.deferred_deletes.empty());
}

TEST(MirrorDiff, SyntheticSeedsOverlapByHalf) {
  DesiredTable a = synthetic_table(0, 100, 1), b = synthetic_table(1, 100, 1);
  size_t common = 0;
  for (const auto& [tid, v] : a) common += b.count(tid);
  EXPECT_EQ(common, 50u);
  EXPECT_EQ(synthetic_table(5, 100, 1), synthetic_table(5, 100, 1)) << "deterministic per seed";
}

}  // namespace
}  // namespace c2c::mirror
