// The metrics' types follow the Prometheus conventions promtool checks (issue 17): the stats
// map's monotonic sums are counters named _total, and build_info carries the version.
#include <gtest/gtest.h>

#include <string>

#include "c2c_version.hpp"
#include "daemon/process/metrics.hpp"

namespace c2c::daemon {
namespace {

bool has(const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; }

TEST(DaemonMetrics, StatsMapSumsAreCountersThatNeverGoDown) {
  Metrics m;
  m.set_identity_mismatches(5);
  m.set_scheduler_counter("migrations", 7);
  std::string t = m.text();
  EXPECT_TRUE(has(t, "# TYPE claim2core_identity_mismatches_total counter")) << t;
  EXPECT_TRUE(has(t, "# TYPE claim2core_scheduler_events_total counter")) << t;
  EXPECT_TRUE(has(t, "claim2core_identity_mismatches_total 5")) << t;
  EXPECT_TRUE(has(t, "claim2core_scheduler_events_total{counter=\"migrations\"} 7")) << t;
  m.set_identity_mismatches(3);  // a recreated stats map: the counter stays
  m.set_scheduler_counter("migrations", 9);
  t = m.text();
  EXPECT_TRUE(has(t, "claim2core_identity_mismatches_total 5")) << t;
  EXPECT_TRUE(has(t, "claim2core_scheduler_events_total{counter=\"migrations\"} 9")) << t;
  EXPECT_FALSE(has(t, "claim2core_scheduler_counter")) << t;
}

TEST(DaemonMetrics, SchedulerEnforcingIsAGaugeZeroUntilSet) {
  Metrics m;
  EXPECT_TRUE(has(m.text(), "# TYPE claim2core_scheduler_enforcing gauge"));
  EXPECT_TRUE(has(m.text(), "claim2core_scheduler_enforcing 0\n")) << m.text();
  m.set_scheduler_enforcing(true);
  EXPECT_TRUE(has(m.text(), "claim2core_scheduler_enforcing 1\n")) << m.text();
  m.set_scheduler_enforcing(false);
  EXPECT_TRUE(has(m.text(), "claim2core_scheduler_enforcing 0\n")) << m.text();
}

TEST(DaemonMetrics, SchedulerLatencyIsAHistogramOnceTheStatsMapWasRead) {
  Metrics m;
  EXPECT_FALSE(has(m.text(), "claim2core_scheduler_latency_seconds")) << "no stats read yet: absent, not zero";
  c2c_stats s{};
  s.latency_hist[0] = 3;
  s.latency_hist[4] = 2;  // [16, 32) us
  m.set_scheduler_latency(sched::latency_buckets(s));
  const std::string t = m.text();
  EXPECT_TRUE(has(t, "# TYPE claim2core_scheduler_latency_seconds histogram")) << t;
  EXPECT_TRUE(has(t, "claim2core_scheduler_latency_seconds_bucket{le=\"2e-06\"} 3")) << t;
  EXPECT_TRUE(has(t, "claim2core_scheduler_latency_seconds_bucket{le=\"3.2e-05\"} 5")) << t;
  EXPECT_TRUE(has(t, "claim2core_scheduler_latency_seconds_bucket{le=\"+Inf\"} 5")) << t;
  EXPECT_TRUE(has(t, "claim2core_scheduler_latency_seconds_count 5")) << t;
  EXPECT_TRUE(has(t, "claim2core_scheduler_latency_seconds_sum 3.2e-05")) << t;  // 2 * 16 us
}

TEST(DaemonMetrics, BuildInfoCarriesTheVersion) {
  const std::string t = Metrics().text();
  EXPECT_TRUE(has(t, "# TYPE claim2core_build_info gauge")) << t;
  EXPECT_TRUE(has(t, std::string("claim2core_build_info{version=\"") + kVersionString + "\"} 1")) << t;
}

}  // namespace
}  // namespace c2c::daemon

namespace c2c::daemon {
namespace {

TEST(DaemonProcessMetrics, ParsesProcStatWithAParenthesisedComm) {
  // pid (comm) state ppid ... utime=14 stime=15 ... starttime=22
  const std::string stat =
      "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 987654 1000000 200 18446744073709551615";
  const auto t = parse_proc_stat(stat);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->cpu_ticks, 300u);
  EXPECT_EQ(t->start_ticks, 987654u);
  EXPECT_FALSE(parse_proc_stat("4242 (truncated").has_value());
  EXPECT_FALSE(parse_proc_stat("4242 (x) S 1 2").has_value());
}

TEST(DaemonProcessMetrics, TheScrapeHasTheStandardProcessMetrics) {
  const std::string t = Metrics().text();
  EXPECT_TRUE(has(t, "# TYPE process_cpu_seconds_total counter")) << t;
  for (const char* g : {"process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds"})
    EXPECT_TRUE(has(t, std::string("# TYPE ") + g + " gauge")) << g;
  EXPECT_FALSE(has(t, "process_open_fds 0\n")) << "this process has fds open";
}

}  // namespace
}  // namespace c2c::daemon
