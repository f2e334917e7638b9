// What claim2core_scheduler_enforcing reports (sched/enforcing.hpp) and the scheduler's latency
// histogram as Prometheus buckets (sched/stats.hpp), on hand-made inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "sched/enforcing.hpp"
#include "sched/stats.hpp"

using namespace c2c::sched;

TEST(SchedEnforcing, OnlyOurAttachedSchedulerWithSchedExtEnabled) {
  EXPECT_TRUE(scheduler_enforcing("enabled", "claim2core", true));
  EXPECT_FALSE(scheduler_enforcing("", "", false)) << "no sched_ext in this kernel";
  EXPECT_FALSE(scheduler_enforcing("disabled", "", true)) << "the kernel disabled it (an exit)";
  EXPECT_FALSE(scheduler_enforcing("enabling", "claim2core", true)) << "not yet enabled";
  EXPECT_FALSE(scheduler_enforcing("enabled", "scx_rusty", true)) << "someone else's scheduler is the root";
  EXPECT_FALSE(scheduler_enforcing("enabled", "claim2core", false)) << "ours exited or was never attached";
  EXPECT_FALSE(scheduler_enforcing("enabled", "claim2core_v2", true)) << "a name that merely starts like ours";
}

TEST(SchedLatencyHistogram, CumulativeBucketsInSecondsWithTheLastOneInf) {
  c2c_stats s{};
  s.latency_hist[0] = 5;                    // [0, 2) us
  s.latency_hist[3] = 2;                    // [8, 16) us
  s.latency_hist[C2C_LAT_BUCKETS - 1] = 1;  // >= 2^23 us: the catch-all
  const LatencyBuckets h = latency_buckets(s);
  ASSERT_EQ(h.upper_bounds_s.size(), static_cast<size_t>(C2C_LAT_BUCKETS));
  ASSERT_EQ(h.cumulative.size(), static_cast<size_t>(C2C_LAT_BUCKETS));
  EXPECT_DOUBLE_EQ(h.upper_bounds_s[0], 2e-6);
  EXPECT_DOUBLE_EQ(h.upper_bounds_s[3], 16e-6);
  EXPECT_DOUBLE_EQ(h.upper_bounds_s[C2C_LAT_BUCKETS - 2], std::ldexp(1.0, C2C_LAT_BUCKETS - 1) * 1e-6);
  EXPECT_TRUE(std::isinf(h.upper_bounds_s.back()));
  EXPECT_EQ(h.cumulative[0], 5u);
  EXPECT_EQ(h.cumulative[2], 5u);
  EXPECT_EQ(h.cumulative[3], 7u);
  EXPECT_EQ(h.cumulative[C2C_LAT_BUCKETS - 2], 7u);
  EXPECT_EQ(h.cumulative.back(), 8u);
  EXPECT_EQ(h.count, 8u);
  // The lower bound of each sample's bucket: 5 * 0 + 2 * 8 us + 1 * 2^23 us.
  EXPECT_DOUBLE_EQ(h.sum_lower_bound_s, (2 * 8 + std::ldexp(1.0, C2C_LAT_BUCKETS - 1)) * 1e-6);
}

TEST(SchedLatencyHistogram, EmptyStatsGiveZeroEverywhere) {
  const LatencyBuckets h = latency_buckets(c2c_stats{});
  EXPECT_EQ(h.count, 0u);
  for (uint64_t c : h.cumulative) EXPECT_EQ(c, 0u);
  EXPECT_EQ(h.sum_lower_bound_s, 0.0);
}
