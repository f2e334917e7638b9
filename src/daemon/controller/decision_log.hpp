// The controllers' decisions as the daemon keeps and reports them (issue 46; spec/daemon.md, "The
// controller"): the last kKept in memory for `claim2core get decisions` and explain, and one log
// record per decision (logfmt, and journal fields under journald). Observed state: not durable
// (a restart starts every controller at level 0 anyway).
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "api/node_api.hpp"
#include "daemon/process/event_log.hpp"

namespace c2c::daemon {

class DecisionLog {
 public:
  static constexpr size_t kKept = 1024;
  void add(node::Decision d) {
    if (kept_.size() == kKept) kept_.pop_front();
    kept_.push_back(std::move(d));
  }
  // Oldest first: those of `policy` ("" any; "<Kind>/<name>" or the bare name), about `tid` (0:
  // any), the newest `limit` of them (0: all kept).
  std::vector<node::Decision> list(const std::string& policy, uint32_t tid, uint32_t limit) const;

 private:
  std::deque<node::Decision> kept_;
};

// The decision's log record: a level change at info, a hold (one per window) at debug. Fields:
// POLICY, RULE, FROM_LEVEL, TO_LEVEL, RUN_DELAY_P99_NS (or NO_SIGNAL), CPU_SHARE_MEAN,
// CPU_SHARE_MAX, CPU_PRESSURE_SOME_PCT (when read), THREADS, THREADS_RAN, REASON.
LogRecord decision_record(const node::Decision& d);

}  // namespace c2c::daemon
