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

}  // namespace
}  // namespace c2c
