// Per-key retry of transient map errors with capped exponential backoff.
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <functional>

namespace c2c::mirror {

struct RetryPolicy {
  unsigned max_attempts = 5;  // attempts per key, the first included
  std::chrono::nanoseconds min_backoff = std::chrono::microseconds(100);
  std::chrono::nanoseconds max_backoff = std::chrono::milliseconds(50);
};

// The wait before retry number `attempt` (0 = the wait after the first failure):
// min(min_backoff * 2^attempt, max_backoff), without overflow.
inline std::chrono::nanoseconds backoff_delay(const RetryPolicy& p, unsigned attempt) {
  auto d = p.min_backoff;
  for (unsigned i = 0; i < attempt && d < p.max_backoff; ++i) d *= 2;
  return std::min(d, p.max_backoff);
}

// Errors worth retrying: the kernel was busy or short of memory for a moment. Everything else
// (EINVAL, E2BIG, EPERM, ...) will not change by waiting.
inline bool is_transient(int err) {
  return err == EAGAIN || err == EBUSY || err == EINTR || err == ENOMEM;
}

using Sleeper = std::function<void(std::chrono::nanoseconds)>;

}  // namespace c2c::mirror
