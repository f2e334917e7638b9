// claim2core_scheduler_latency_seconds: the sched_ext scheduler's runnable -> running latency
// histogram (the stats map's log2 buckets, sched::latency_buckets) as a Prometheus histogram.
// prometheus-cpp's Histogram only observes single values, and the BPF side hands over bucket
// counts, so this collector serves the last counts read. Absent from the scrape until the stats
// map has been read once (no sched_ext, no scheduler: no histogram, rather than a false zero).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <mutex>
#include <optional>
#include <vector>

#include "sched/stats.hpp"

namespace c2c::daemon {

class SchedulerLatencyCollector : public prometheus::Collectable {
 public:
  void set(sched::LatencyBuckets h);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  mutable std::mutex mu_;  // the engine sets, the exposer's thread collects
  std::optional<sched::LatencyBuckets> last_;
};

}  // namespace c2c::daemon
