// The standard process_* metrics (prometheus-cpp has no process collector): CPU seconds,
// resident memory, open fds and start time, read from /proc at every scrape.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <optional>
#include <string>
#include <vector>

namespace c2c::daemon {

struct ProcStatTimes {
  unsigned long long cpu_ticks = 0;    // utime + stime
  unsigned long long start_ticks = 0;  // starttime, clock ticks after boot
};
// From the text of /proc/<pid>/stat (the comm may hold spaces and parentheses); nullopt if
// the text is not one.
std::optional<ProcStatTimes> parse_proc_stat(const std::string& text);

class ProcessCollector : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

}  // namespace c2c::daemon
