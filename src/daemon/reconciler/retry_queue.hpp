// Map writes that failed (or were held back while the generation lease could not be extended),
// queued per TID with capped exponential backoff. The loop never sleeps on them: it arms its one
// timer for next_due() and, when due, rebuilds each TID's op from the core's desired and actual
// tables (so a retry always writes what is wanted now, not what failed then). Pure: the clock is
// a parameter.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "mirror/retry.hpp"

namespace c2c::daemon {

class RetryQueue {
 public:
  explicit RetryQueue(mirror::RetryPolicy policy) : policy_(policy) {}
  // Another failed attempt: due again after the backoff for its attempt count.
  void failed(uint32_t tid, uint64_t now_ns);
  void resolved(uint32_t tid);
  std::vector<uint32_t> due(uint64_t now_ns) const;  // sorted by due time
  std::optional<uint64_t> next_due() const;
  bool empty() const { return by_tid_.empty(); }
  size_t size() const { return by_tid_.size(); }

 private:
  struct Slot {
    unsigned attempts = 0;
    uint64_t due = 0;
  };
  mirror::RetryPolicy policy_;
  std::map<uint32_t, Slot> by_tid_;
  std::set<std::pair<uint64_t, uint32_t>> by_due_;
};

}  // namespace c2c::daemon
