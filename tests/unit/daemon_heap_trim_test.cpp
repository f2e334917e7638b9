// When the engine gives freed heap back (src/daemon/heap_trim.hpp): once after a mass exit, when
// the exits have stopped for the quiet time; never for a few exits, never in the middle of a burst.
#include <gtest/gtest.h>

#include "daemon/heap_trim.hpp"

namespace c2c::daemon {
namespace {

TEST(HeapTrim, OnceAfterAMassExitHasGoneQuiet) {
  HeapTrim t(3, 100);
  t.exited(1000);
  t.exited(1010);
  EXPECT_FALSE(t.deadline()) << "too few exits for a trim";
  EXPECT_FALSE(t.due(5000));
  t.exited(1020);
  ASSERT_TRUE(t.deadline());
  EXPECT_EQ(*t.deadline(), 1120u);
  EXPECT_FALSE(t.due(1119)) << "not before the exits went quiet";
  t.exited(1100);  // the burst goes on: the deadline moves
  EXPECT_EQ(*t.deadline(), 1200u);
  EXPECT_FALSE(t.due(1150));
  EXPECT_TRUE(t.due(1200));
  EXPECT_FALSE(t.due(1300)) << "one trim per burst";
  EXPECT_FALSE(t.deadline());
  t.exited(2000);
  EXPECT_FALSE(t.due(9000)) << "one exit after the trim is not another burst";
}

}  // namespace
}  // namespace c2c::daemon
