#include "daemon/process/scheduler_latency.hpp"

namespace c2c::daemon {

void SchedulerLatencyCollector::set(sched::LatencyBuckets h) {
  std::lock_guard lock(mu_);
  last_ = std::move(h);
}

std::vector<prometheus::MetricFamily> SchedulerLatencyCollector::Collect() const {
  std::lock_guard lock(mu_);
  if (!last_) return {};
  prometheus::MetricFamily f;
  f.name = "claim2core_scheduler_latency_seconds";
  f.help =
      "sched_ext scheduler: runnable to running latency of the threads with a policy entry (stats map, all "
      "CPUs; log2 buckets of 2^i us; "
      "_sum adds each sample's bucket lower bound, a lower bound of the true sum)";
  f.type = prometheus::MetricType::Histogram;
  prometheus::ClientMetric m;
  m.histogram.sample_count = last_->count;
  m.histogram.sample_sum = last_->sum_lower_bound_s;
  for (size_t i = 0; i < last_->cumulative.size(); ++i)
    m.histogram.bucket.push_back({last_->cumulative[i], last_->upper_bounds_s[i]});
  f.metric.push_back(std::move(m));
  return {std::move(f)};
}

}  // namespace c2c::daemon
