// Watch subscribers: one bounded queue each. The engine publishes without ever blocking; a
// watcher that falls more than `capacity` changes behind is dropped (its stream ends with
// RESOURCE_EXHAUSTED and a message saying so) instead of slowing the loop down.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "api/node_api.hpp"

namespace c2c::daemon {

class Watcher {
 public:
  explicit Watcher(size_t capacity) : capacity_(capacity) {}
  // Loop thread: false when the watcher was dropped (now or before).
  bool offer(const node::ChangeNote& e);
  void close();
  enum class Next { Event, Timeout, Dropped, Closed };
  // Handler thread: waits up to `wait` for the next event.
  Next next(node::ChangeNote* out, std::chrono::milliseconds wait);
  size_t capacity() const { return capacity_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<node::ChangeNote> q_;
  size_t capacity_;
  bool dropped_ = false, closed_ = false;
};

class WatcherSet {
 public:
  std::shared_ptr<Watcher> subscribe(size_t capacity);
  // Returns how many watchers were dropped by this publish.
  size_t publish(const node::ChangeNote& e);
  void close_all();
  size_t size();

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<Watcher>> watchers_;
};

}  // namespace c2c::daemon
