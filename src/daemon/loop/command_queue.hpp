// Commands from gRPC handler threads to the engine's loop thread: a mutex-guarded queue plus an
// eventfd the loop waits on (epoll). The loop drains everything queued in one go (a batch); only
// the push onto an empty queue writes the eventfd, so a burst of calls costs one wake-up.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

namespace c2c::daemon {

class Engine;

// Who sent a command (issue 42): the gRPC API (and the daemon's own probes), or the role socket,
// which any local uid may reach. The two wait in separate lanes so that role commands cannot
// starve gRPC ones (CommandQueue::drain).
enum class Lane : uint8_t { Api, Role };

// Two phases, so that one batch persists once and applies to the kernel once:
//  apply  runs first for every command of the batch (mutates the core; returns true when a
//         durable input changed, so the batch must be persisted before anyone is answered),
//  finish runs after persist + plan + apply (fills the reply from the state then; wakes the caller).
struct Command {
  std::function<bool(Engine&)> apply;
  std::function<void(Engine&)> finish;
  // The request's encoded size: bounds the log record its changes can make (GroupCommit::begin).
  size_t request_bytes = 0;
  Lane lane = Lane::Api;
};

// Role commands a drain takes at most (the rest stay queued, in order, for the next turn, which
// the drain signals at once): a turn with gRPC commands in it never also carries more role
// work than this behind them.
inline constexpr size_t kRoleCommandsPerTurn = 64;

class CommandQueue {
 public:
  CommandQueue();
  ~CommandQueue();
  CommandQueue(const CommandQueue&) = delete;
  CommandQueue& operator=(const CommandQueue&) = delete;

  // false once closed (the daemon is draining): the caller answers UNAVAILABLE itself.
  bool push(Command c);
  // Every gRPC command queued, then at most kRoleCommandsPerTurn role commands (each lane in
  // order); clears the eventfd, or signals it again when role commands are left.
  std::vector<Command> drain();
  void close();                  // refuse new commands; queued ones are still drained
  bool closed() const;
  int event_fd() const { return efd_; }
  size_t size() const;
  uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::vector<Command> q_;     // Lane::Api
  std::deque<Command> roles_;  // Lane::Role
  std::atomic<uint64_t> wakeups_{0};
  bool closed_ = false;
  int efd_ = -1;
};

}  // namespace c2c::daemon
