// Parked threads for the host benchmarks. Each thread names itself, records its tid, counts itself
// ready with one atomic add and blocks in read() on a pipe nobody writes: creating the next thread
// wakes none of the waiting ones (a condition variable notified per creation woke every parked
// thread each time: n^2 / 2 wake-ups for n threads). The destructor closes the write end, so every
// thread wakes exactly once, to exit.
#pragma once

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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

// A ThreadFarm in a child process of its own (fork): its threads are one tgid apart from the
// benchmark's, and the benchmark only watches. The child's main thread is named `main_name`
// (give it one the policy under test does not match); tids() fills in as threads start.
class ForkedFarm {
 public:
  ForkedFarm(int n, const std::string& thread_name, const std::string& main_name, size_t stack_bytes = 32 * 1024)
      : n_(n), bytes_(sizeof(Shared) + sizeof(uint32_t) * static_cast<size_t>(n)) {
    void* m = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::fprintf(stderr, "mmap: %s\n", std::strerror(errno));
      return;
    }
    sh_ = new (m) Shared();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_NAME, main_name.c_str(), 0, 0, 0);
      ThreadFarm threads(n, [&](int) { return thread_name; }, sh_->tids, &sh_->ready, stack_bytes);
      sh_->created.store(static_cast<int>(threads.size()) == n ? n : -1);
      while (sh_->release.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      threads.release();
      ::_exit(0);
    }
  }
  ~ForkedFarm() {
    release();
    if (sh_ != nullptr) ::munmap(sh_, bytes_);
  }
  ForkedFarm(const ForkedFarm&) = delete;
  ForkedFarm& operator=(const ForkedFarm&) = delete;

  // Waits (0.5 ms between looks) until all n threads are named and parked; false when the child
  // could not create them (pid_max, threads-max, vm.max_map_count, memory).
  bool wait_ready() const {
    if (sh_ == nullptr || pid_ < 0) return false;
    while (sh_->created.load() == 0 || (sh_->created.load() > 0 && sh_->ready.load() < n_))
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    return sh_->created.load() > 0;
  }
  const uint32_t* tids() const { return sh_->tids; }
  pid_t pid() const { return pid_; }
  // Every thread exits; returns once the child is reaped.
  void release() {
    if (pid_ <= 0) return;
    sh_->release.store(1);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  struct Shared {
    std::atomic<int> ready{0};
    std::atomic<int> created{0};  // set once the creating loop is done (-1: failed)
    std::atomic<int> release{0};
    uint32_t tids[1];  // n of them
  };
  int n_;
  size_t bytes_;
  Shared* sh_ = nullptr;
  pid_t pid_ = -1;
};

}  // namespace c2c::bench
