#include "daemon/command_queue.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

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
    was_empty = q_.empty();
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
  return q_.size();
}

}  // namespace c2c::daemon
