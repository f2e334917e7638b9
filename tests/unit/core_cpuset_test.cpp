#include <gtest/gtest.h>

#include "core/cpuset.hpp"

namespace c2c {
namespace {

TEST(CpuSet, ParsesAndPrintsTheKernelListFormat) {
  auto s = CpuSet::parse("0-3,8,10-11");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count(), 7u);
  EXPECT_EQ(s->to_string(), "0-3,8,10-11");
  EXPECT_EQ(CpuSet::parse("")->count(), 0u);
  EXPECT_EQ(CpuSet::parse(" 5\n")->to_string(), "5");
  EXPECT_EQ(CpuSet::parse("255")->to_string(), "255");
}

TEST(CpuSet, RefusesMalformedAndOutOfRangeLists) {
  std::string err;
  EXPECT_FALSE(CpuSet::parse("256", &err));
  EXPECT_NE(err.find("out of range"), std::string::npos);
  EXPECT_FALSE(CpuSet::parse("3-1", &err));
  EXPECT_NE(err.find("descending"), std::string::npos);
  EXPECT_FALSE(CpuSet::parse("a", &err));
  EXPECT_FALSE(CpuSet::parse("1,,2", &err));
  EXPECT_FALSE(CpuSet::parse("-1", &err));
}

TEST(CpuSet, SetAlgebra) {
  auto a = CpuSet::range(0, 7), b = CpuSet::range(4, 11);
  EXPECT_EQ((a & b).to_string(), "4-7");
  EXPECT_EQ((a | b).to_string(), "0-11");
  EXPECT_TRUE((a & b).subset_of(a));
  EXPECT_FALSE(b.subset_of(a));
  EXPECT_TRUE(CpuSet{}.subset_of(a));
  EXPECT_TRUE(CpuSet{}.empty());
}

// Every 64-bit word takes part in the algebra (issue #12: no test used a CPU above 15, so a bug in
// the upper words was invisible): the word boundaries and CPU 255.
TEST(CpuSet, SetAlgebraCoversEveryWord) {
  const CpuSet edges = CpuSet::of({0, 63, 64, 127, 128, 191, 192, 255});
  const CpuSet all = CpuSet::range(0, 255);
  EXPECT_EQ(edges & all, edges);
  EXPECT_EQ(all & edges, edges);
  EXPECT_EQ((edges | CpuSet{}), edges);
  EXPECT_EQ((edges & CpuSet::range(192, 255)), CpuSet::of({192, 255}));
  EXPECT_EQ((CpuSet::range(60, 67) & CpuSet::range(64, 200)), CpuSet::range(64, 67));
  EXPECT_TRUE(CpuSet::of({255}).subset_of(edges));
  EXPECT_FALSE(CpuSet::of({254}).subset_of(edges));
  EXPECT_EQ(edges.count(), 8u);
  EXPECT_EQ(edges.to_string(), "0,63-64,127-128,191-192,255");
}

}  // namespace
}  // namespace c2c
