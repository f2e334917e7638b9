#include "daemon/reconciler/retry_queue.hpp"

namespace c2c::daemon {

void RetryQueue::failed(uint32_t tid, uint64_t now_ns) {
  auto& s = by_tid_[tid];
  if (s.attempts > 0) by_due_.erase({s.due, tid});
  uint64_t wait = static_cast<uint64_t>(mirror::backoff_delay(policy_, s.attempts).count());
  ++s.attempts;
  s.due = now_ns + wait;
  by_due_.insert({s.due, tid});
}

void RetryQueue::resolved(uint32_t tid) {
  auto it = by_tid_.find(tid);
  if (it == by_tid_.end()) return;
  by_due_.erase({it->second.due, tid});
  by_tid_.erase(it);
}

std::vector<uint32_t> RetryQueue::due(uint64_t now_ns) const {
  std::vector<uint32_t> out;
  for (const auto& [t, tid] : by_due_) {
    if (t > now_ns) break;
    out.push_back(tid);
  }
  return out;
}

std::optional<uint64_t> RetryQueue::next_due() const {
  if (by_due_.empty()) return std::nullopt;
  return by_due_.begin()->first;
}

}  // namespace c2c::daemon
