// TidSet, the flat set behind the core's indexes: random inserts and erases against std::set,
// including runs that wrap around the array and the shrinking as members leave.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/tid_set.hpp"

namespace c2c {
namespace {

void expect_same(const TidSet& s, const std::set<uint32_t>& want) {
  ASSERT_EQ(s.size(), want.size());
  std::set<uint32_t> got(s.begin(), s.end());
  EXPECT_EQ(got, want);
  for (uint32_t t : want) EXPECT_EQ(s.count(t), 1u) << t;
}

TEST(TidSet, RandomOperationsAgreeWithStdSet) {
  std::mt19937 rng(7);
  for (uint32_t range : {8u, 64u, 5000u}) {  // small ranges: long probe runs and wrap-around
    TidSet s;
    std::set<uint32_t> want;
    for (int i = 0; i < 20000; ++i) {
      const uint32_t t = 1 + static_cast<uint32_t>(rng() % range);
      if (rng() % 3 == 0) {
        EXPECT_EQ(s.erase(t), want.erase(t)) << t;
      } else {
        EXPECT_EQ(s.insert(t), want.insert(t).second) << t;
      }
      if (i % 997 == 0) expect_same(s, want);
    }
    expect_same(s, want);
    for (uint32_t t : std::set<uint32_t>(want)) s.erase(t);
    EXPECT_TRUE(s.empty());
    EXPECT_EQ(s.begin(), s.end());
  }
}

// A few members sit inline (no array); the set moves to an array past them and back as it
// empties: sizes swept across that boundary, both ways, several times.
TEST(TidSet, MembersMoveBetweenInlineAndArrayAsTheSetGrowsAndShrinks) {
  std::mt19937 rng(3);
  TidSet s;
  std::set<uint32_t> want;
  for (int sweep = 0; sweep < 6; ++sweep) {
    const size_t top = sweep % 2 == 0 ? 40 : 17;
    while (want.size() < top) {
      const uint32_t t = 1 + static_cast<uint32_t>(rng() % 100000);
      EXPECT_EQ(s.insert(t), want.insert(t).second) << t;
      expect_same(s, want);
    }
    while (want.size() > (sweep % 3 == 0 ? 0u : 7u)) {
      const uint32_t t = *want.begin();
      EXPECT_EQ(s.erase(t), 1u) << t;
      want.erase(t);
      EXPECT_EQ(s.erase(t), 0u) << t;
      expect_same(s, want);
    }
  }
}

TEST(TidSet, ZeroIsNeverAMember) {
  TidSet s;
  EXPECT_FALSE(s.insert(0));
  EXPECT_EQ(s.count(0), 0u);
  EXPECT_EQ(s.erase(0), 0u);
  EXPECT_TRUE(s.empty());
}

TEST(TidSet, CopiesAreIndependentAndCompareByMembers) {
  const std::vector<uint32_t> members{3, 1, 2};
  const TidSet a(members.begin(), members.end());
  TidSet b;
  for (uint32_t t : {2u, 3u, 1u}) b.insert(t);
  EXPECT_TRUE(a == b);
  TidSet c = b;
  c.erase(2);
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_FALSE(b == c);
}

}  // namespace
}  // namespace c2c
