#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

#include "sched/stats.hpp"

using namespace c2c::sched;

TEST(SchedStats, SumAddsEveryCounterOfEveryCpu) {
  std::vector<c2c_stats> cpus(3);
  for (size_t i = 0; i < cpus.size(); ++i) {
    cpus[i].dispatched[C2C_CLASS_LATENCY_CRITICAL] = i + 1;
    cpus[i].identity_mismatches = 10 * (i + 1);
    cpus[i].migrations = 1;
    cpus[i].boost_expired = 2;
    cpus[i].starvation_rescues = 3;
    cpus[i].boost_budget_exhausted = 4;
    cpus[i].cpumask_rejections = 4;
    cpus[i].latency_hist[5] = 7;
  }
  const c2c_stats t = sum_stats(cpus);
  EXPECT_EQ(t.dispatched[C2C_CLASS_LATENCY_CRITICAL], 6u);
  EXPECT_EQ(t.dispatched[C2C_CLASS_NORMAL], 0u);
  EXPECT_EQ(t.identity_mismatches, 60u);
  EXPECT_EQ(t.migrations, 3u);
  EXPECT_EQ(t.boost_expired, 6u);
  EXPECT_EQ(t.starvation_rescues, 9u);
  EXPECT_EQ(t.boost_budget_exhausted, 12u);
  EXPECT_EQ(t.cpumask_rejections, 12u);
  EXPECT_EQ(t.latency_hist[5], 21u);
  EXPECT_EQ(latency_samples(t), 21u);
}

TEST(SchedStats, QuantileIsTheUpperBoundOfTheBucketHoldingTheRank) {
  c2c_stats s{};
  EXPECT_EQ(latency_quantile_us(s, 0.5), 0u) << "empty histogram";
  s.latency_hist[0] = 50;  // < 2 us
  s.latency_hist[3] = 49;  // [8, 16) us
  s.latency_hist[10] = 1;  // [1024, 2048) us
  EXPECT_EQ(latency_quantile_us(s, 0.5), 2u);
  EXPECT_EQ(latency_quantile_us(s, 0.51), 16u);
  EXPECT_EQ(latency_quantile_us(s, 0.99), 16u);
  EXPECT_EQ(latency_quantile_us(s, 1.0), 2048u);
}

TEST(SchedStats, JsonNamesClassesAndCounters) {
  c2c_stats s{};
  s.dispatched[C2C_CLASS_BACKGROUND] = 4;
  s.identity_mismatches = 2;
  s.latency_hist[1] = 1;
  const auto j = nlohmann::json::parse(stats_json(s));
  EXPECT_EQ(j["dispatched"]["background"], 4);
  EXPECT_EQ(j["dispatched"]["unmatched"], 0);
  EXPECT_EQ(j["identity_mismatches"], 2);
  EXPECT_EQ(j["latency_samples"], 1);
  EXPECT_EQ(j["latency_p99_us_le"], 4);
  EXPECT_EQ(j["latency_hist"].size(), C2C_LAT_BUCKETS);
}

TEST(SchedStats, ClassNamesCoverTheAbiEnum) {
  EXPECT_EQ(class_name(C2C_CLASS_LATENCY_CRITICAL), "latency-critical");  // the policy language's spelling
  EXPECT_EQ(class_name(C2C_CLASS_COMM_PROGRESS), "communication-progress");
  EXPECT_EQ(class_name(C2C_CLASS_THROUGHPUT), "throughput");
  EXPECT_EQ(class_name(C2C_NR_CLASSES), "class6");
}
