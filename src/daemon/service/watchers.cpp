#include "daemon/service/watchers.hpp"

#include <algorithm>

namespace c2c::daemon {

bool Watcher::offer(const node::ChangeNote& e) {
  {
    std::lock_guard lock(mu_);
    if (dropped_ || closed_) return !dropped_;
    if (q_.size() >= capacity_) {
      dropped_ = true;
      q_.clear();
    } else {
      q_.push_back(e);
    }
  }
  cv_.notify_one();
  std::lock_guard lock(mu_);
  return !dropped_;
}

void Watcher::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

Watcher::Next Watcher::next(node::ChangeNote* out, std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, wait, [&] { return dropped_ || closed_ || !q_.empty(); });
  if (dropped_) return Next::Dropped;
  if (!q_.empty()) {
    *out = std::move(q_.front());
    q_.pop_front();
    return Next::Event;
  }
  return closed_ ? Next::Closed : Next::Timeout;
}

std::shared_ptr<Watcher> WatcherSet::subscribe(size_t capacity) {
  auto w = std::make_shared<Watcher>(capacity);
  std::lock_guard lock(mu_);
  watchers_.push_back(w);
  return w;
}

size_t WatcherSet::publish(const node::ChangeNote& e) {
  std::vector<std::shared_ptr<Watcher>> live;
  {
    std::lock_guard lock(mu_);
    watchers_.erase(std::remove_if(watchers_.begin(), watchers_.end(), [](const auto& w) { return w.expired(); }),
                    watchers_.end());
    for (auto& w : watchers_)
      if (auto s = w.lock()) live.push_back(std::move(s));
  }
  std::vector<std::shared_ptr<Watcher>> gone;
  for (auto& w : live)
    if (!w->offer(e)) gone.push_back(w);
  if (!gone.empty()) {
    // A dropped watcher keeps its stream only until its handler notices; stop publishing to it.
    std::lock_guard lock(mu_);
    watchers_.erase(std::remove_if(watchers_.begin(), watchers_.end(),
                                   [&](const auto& w) {
                                     auto s = w.lock();
                                     return !s || std::find(gone.begin(), gone.end(), s) != gone.end();
                                   }),
                    watchers_.end());
  }
  size_t dropped = gone.size();
  return dropped;
}

void WatcherSet::close_all() {
  std::lock_guard lock(mu_);
  for (auto& w : watchers_)
    if (auto s = w.lock()) s->close();
}

size_t WatcherSet::size() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (auto& w : watchers_) n += !w.expired();
  return n;
}

}  // namespace c2c::daemon
