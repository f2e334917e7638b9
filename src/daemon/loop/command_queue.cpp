#include "daemon/loop/command_queue.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace c2c::daemon {

CommandQueue::CommandQueue() : efd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (efd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
}

CommandQueue::~CommandQueue() {
  if (efd_ >= 0) ::close(efd_);
}

bool CommandQueue::push(Command c) {
  bool was_empty = false;
  {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    was_empty = q_.empty() && roles_.empty();
    if (c.lane == Lane::Role)
      roles_.push_back(std::move(c));
    else
      q_.push_back(std::move(c));
  }
  // One wake-up per batch, not per call: only the push that makes the queue non-empty signals
  // (the loop takes everything queued until its drain). No wake-up is lost: a push onto a
  // non-empty queue follows one that has signalled, and the drain that takes its command clears
  // the eventfd before it takes the lock. ++wakeups_ counts the signals (tests, bench).
  if (was_empty) {
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    uint64_t one = 1;
    // The counter only needs to be non-zero; EAGAIN (counter saturated) is fine.
    [[maybe_unused]] auto n = ::write(efd_, &one, sizeof one);
  }
  return true;
}

std::vector<Command> CommandQueue::drain() {
  uint64_t v = 0;
  [[maybe_unused]] auto n = ::read(efd_, &v, sizeof v);
  std::vector<Command> out;
  std::lock_guard lock(mu_);
  out.swap(q_);
  const size_t roles = std::min(roles_.size(), kRoleCommandsPerTurn);
  for (size_t i = 0; i < roles; ++i) {
    out.push_back(std::move(roles_.front()));
    roles_.pop_front();
  }
  // Role commands left: the loop must come back for them (a push onto this non-empty queue
  // would not signal).
  if (!roles_.empty()) {
    uint64_t one = 1;
    [[maybe_unused]] auto w = ::write(efd_, &one, sizeof one);
  }
  return out;
}

void CommandQueue::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
}

bool CommandQueue::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

size_t CommandQueue::size() const {
  std::lock_guard lock(mu_);
  return q_.size() + roles_.size();
}

}  // namespace c2c::daemon
