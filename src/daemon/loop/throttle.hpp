// At most once per interval: for a check that costs a system call and need not run on every turn
// of the loop (the ring buffer's drop counter: a bpf() map lookup, 8 % of the daemon's CPU per
// task event under churn at 100k tasks, perf). Pure: the clock is a parameter.
#pragma once

#include <cstdint>
#include <optional>

namespace c2c::daemon {

class Throttle {
 public:
  explicit Throttle(uint64_t interval_ns) : interval_ns_(interval_ns) {}
  // True on the first call and then once `interval_ns` has passed since the last true.
  bool due(uint64_t now_ns) {
    if (armed_ && now_ns - last_ns_ < interval_ns_) {
      owed_ = true;
      return false;
    }
    armed_ = true;
    owed_ = false;
    last_ns_ = now_ns;
    return true;
  }
  // When a refused check becomes due (the caller's timer wakes it then); nullopt when none is owed.
  std::optional<uint64_t> deadline() const {
    if (!owed_) return std::nullopt;
    return last_ns_ + interval_ns_;
  }

 private:
  uint64_t interval_ns_;
  uint64_t last_ns_ = 0;
  bool armed_ = false;
  bool owed_ = false;
};

}  // namespace c2c::daemon
