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
  {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    q_.push_back(std::move(c));
  }
  uint64_t one = 1;
  // The counter only needs to be non-zero; EAGAIN (counter saturated) is fine.
  [[maybe_unused]] auto n = ::write(efd_, &one, sizeof one);
  return true;
}

std::vector<Command> CommandQueue::drain() {
  uint64_t v = 0;
  [[maybe_unused]] auto n = ::read(efd_, &v, sizeof v);
  std::lock_guard lock(mu_);
  std::vector<Command> out(std::make_move_iterator(q_.begin()), std::make_move_iterator(q_.end()));
  q_.clear();
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
