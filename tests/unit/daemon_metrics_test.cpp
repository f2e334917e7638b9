// The metrics' types follow the Prometheus conventions promtool checks (issue 17): the stats
// map's monotonic sums are counters named _total, and build_info carries the version.
#include <gtest/gtest.h>

#include <string>

#include "c2c_version.hpp"
#include "daemon/metrics.hpp"

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

TEST(DaemonMetrics, BuildInfoCarriesTheVersion) {
  const std::string t = Metrics().text();
  EXPECT_TRUE(has(t, "# TYPE claim2core_build_info gauge")) << t;
  EXPECT_TRUE(has(t, std::string("claim2core_build_info{version=\"") + kVersionString + "\"} 1")) << t;
}

}  // namespace
}  // namespace c2c::daemon
