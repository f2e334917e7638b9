// Parked threads for the host benchmarks. Each thread names itself, records its tid, counts itself
// ready with one atomic add and blocks in read() on a pipe nobody writes: creating the next thread
// wakes none of the waiting ones (a condition variable notified per creation woke every parked
// thread each time: n^2 / 2 wake-ups for n threads). The destructor closes the write end, so every
// thread wakes exactly once, to exit.
#pragma once

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace c2c::bench {

class ThreadFarm {
 public:
  // name_of(i): the name thread i gives itself (at most 15 bytes). `tids`, when given, has room
  // for n entries and receives thread i's tid at index i (shared memory works: the parent of a
  // forked farm reads it). `ready`, when given, counts threads that are named and parked.
  ThreadFarm(int n, std::function<std::string(int)> name_of, uint32_t* tids = nullptr,
             std::atomic<int>* ready = nullptr, size_t stack_bytes = 64 * 1024)
      : name_of_(std::move(name_of)), tids_(tids), ready_(ready != nullptr ? ready : &own_ready_) {
    if (::pipe(park_) != 0) {
      std::fprintf(stderr, "pipe: %s\n", std::strerror(errno));
      return;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack_bytes);
    threads_.reserve(static_cast<size_t>(n));
    args_.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      args_[static_cast<size_t>(i)] = Arg{this, i};
      pthread_t t;
      if (const int rc = pthread_create(&t, &attr, &ThreadFarm::run, &args_[static_cast<size_t>(i)]); rc != 0) {
        std::fprintf(stderr, "pthread_create failed after %d threads: %s\n", i, std::strerror(rc));
        break;
      }
      threads_.push_back(t);
    }
    pthread_attr_destroy(&attr);
  }
  ~ThreadFarm() { release(); }
  ThreadFarm(const ThreadFarm&) = delete;
  ThreadFarm& operator=(const ThreadFarm&) = delete;

  size_t size() const { return threads_.size(); }
  // Waits (sleeping 1 ms between looks, so the farm's threads get the CPUs) until every created
  // thread is named and parked.
  void wait_ready() const {
    while (ready_->load(std::memory_order_acquire) < static_cast<int>(threads_.size()))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Wakes every thread once (EOF on the pipe) and joins them.
  void release() {
    if (park_[1] >= 0) ::close(park_[1]);
    park_[1] = -1;
    for (auto t : threads_) pthread_join(t, nullptr);
    threads_.clear();
    if (park_[0] >= 0) ::close(park_[0]);
    park_[0] = -1;
  }

 private:
  struct Arg {
    ThreadFarm* self;
    int i;
  };
  static void* run(void* p) {
    const auto* a = static_cast<const Arg*>(p);
    ThreadFarm* self = a->self;
    const std::string name = self->name_of_(a->i);
    ::prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);
    if (self->tids_ != nullptr) self->tids_[a->i] = static_cast<uint32_t>(::syscall(SYS_gettid));
    self->ready_->fetch_add(1, std::memory_order_release);
    char c;
    while (::read(self->park_[0], &c, 1) < 0 && errno == EINTR) {
    }
    return nullptr;
  }
  std::function<std::string(int)> name_of_;
  uint32_t* tids_;
  std::atomic<int> own_ready_{0};
  std::atomic<int>* ready_;
  int park_[2] = {-1, -1};
  std::vector<Arg> args_;
  std::vector<pthread_t> threads_;
};

}  // namespace c2c::bench
