#include "daemon/loop/realtime_budget.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "daemon/loop/realtime_priority.hpp"

namespace c2c::daemon {

namespace {

// Set by the handler on the thread whose budget ran out; a thread_local is safe to write from a
// handler running on that thread.
thread_local volatile sig_atomic_t g_demoted = 0;

void on_budget_spent(int) {
  const int saved = errno;
  to_time_shared();  // a direct system call: async-signal-safe in effect
  g_demoted = 1;
  errno = saved;
}

int budget_signal() { return SIGRTMIN; }

}  // namespace

RealtimeBudget::RealtimeBudget(uint32_t priority, uint64_t budget_ns) : priority_(priority), budget_ns_(budget_ns) {
  if (priority_ == 0 || budget_ns_ == 0) return;
  struct sigaction sa{};
  sa.sa_handler = on_budget_spent;
  sa.sa_flags = SA_RESTART;  // the loop's system calls go on where the signal met them
  sigemptyset(&sa.sa_mask);
  if (::sigaction(budget_signal(), &sa, nullptr) != 0) {
    error_ = std::string("sigaction: ") + std::strerror(errno);
    return;
  }
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, budget_signal());
  ::pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = budget_signal();
  ev._sigev_un._tid = static_cast<pid_t>(::syscall(SYS_gettid));  // this thread only
  clockid_t clock;
  if (::pthread_getcpuclockid(::pthread_self(), &clock) != 0 || ::timer_create(clock, &ev, &timer_) != 0) {
    error_ = std::string("timer_create on the thread's CPU clock: ") + std::strerror(errno);
    return;
  }
  armed_timer_ = true;
  used_ns_ = budget_ns_;  // the first wake-up arms it
}

RealtimeBudget::~RealtimeBudget() {
  if (armed_timer_) ::timer_delete(timer_);
}

namespace {
uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // the vDSO: no system call
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace

void RealtimeBudget::woke(bool slept) {
  if (!armed_timer_ || !slept) return;
  const uint64_t now = monotonic_ns();
  if (awake_from_ns_ != 0) used_ns_ += now - awake_from_ns_ + kWaitMarginNs;  // no wait closed that wake-up
  awake_from_ns_ = now;
  if (g_demoted) {
    // The timer fired in the wait's tail (CPU timers are checked at the tick) and the handler
    // demoted the thread: this wake-up gets its priority back and a whole budget.
    g_demoted = 0;
    ++demotions_;
    if (const int e = to_fifo(priority_); e != 0)
      woke_error_ = std::string("back to SCHED_FIFO at a wake-up: ") + std::strerror(e) + " (CAP_SYS_NICE gone?)";
    used_ns_ = budget_ns_;
  }
  // The timer still holds about budget - used_ns_ or more (used_ns_ estimates the CPU spent since
  // the arm from above): a wake-up keeps it while that is at least half the budget.
  if (used_ns_ < budget_ns_ / 2) return;
  itimerspec t{};
  t.it_value.tv_sec = static_cast<time_t>(budget_ns_ / 1'000'000'000u);
  t.it_value.tv_nsec = static_cast<long>(budget_ns_ % 1'000'000'000u);
  ::timer_settime(timer_, 0, &t, nullptr);
  ++arms_;
  used_ns_ = 0;
}

std::string RealtimeBudget::before_wait(bool will_sleep) {
  if (!armed_timer_ || !will_sleep) return "";
  // The timer stays armed across the wait: the thread's CPU clock does not run while it sleeps.
  if (awake_from_ns_ != 0) used_ns_ += monotonic_ns() - awake_from_ns_ + kWaitMarginNs;
  awake_from_ns_ = 0;
  if (!woke_error_.empty()) return std::exchange(woke_error_, std::string());
  if (!g_demoted) return "";
  g_demoted = 0;
  ++demotions_;
  used_ns_ = budget_ns_;  // the timer fired (it is one-shot): the next wake-up arms it again
  if (const int err = to_fifo(priority_); err != 0)
    return std::string("back to SCHED_FIFO after a turn past its budget: ") + std::strerror(err) +
           " (CAP_SYS_NICE gone?)";
  return "";
}

}  // namespace c2c::daemon
