// The daemon's own CPU priority (config realtime_priority, spec/daemon.md "On a busy node").
//
// On a node whose CPUs are all busy, a time-shared (SCHED_OTHER) task that wakes waits until the
// running task has used its slice (EEVDF protects it: 1.5-3 ms per wake-up on 2-8 CPUs). Every
// reaction of the daemon is such a wake-up (a task event, an RPC handed to the loop), so its
// p99 on a busy node was 4-5 ms where a quiet one gives 0.3-0.7 ms. SCHED_FIFO at a low priority
// runs it at once; bulk work runs time-shared (startup here, a long loop turn by
// realtime_budget.hpp), so it cannot take a CPU for long.
#pragma once

#include <cstdint>
#include <string>

namespace c2c::daemon {

// The calling thread (pid 0 of sched_setscheduler) into SCHED_FIFO `priority`: 0 or the errno.
// Without SCHED_RESET_ON_FORK: the threads it creates afterwards inherit the class.
int to_fifo(uint32_t priority);
// The calling thread back into SCHED_OTHER, which is always allowed; a direct system call, so a
// signal handler may call it.
void to_time_shared();

struct RealtimeOutcome {
  uint32_t priority = 0;  // in effect for the calling thread now: 0 is SCHED_OTHER
  std::string refused;    // "" or why the kernel refused the requested priority (names the field)
};

// SCHED_FIFO at `priority` (1..99) for the calling thread, so that every thread it creates
// afterwards inherits it: call it before the daemon starts its loop and gRPC. 0 changes nothing. A
// refusal leaves the thread as it was; the daemon then runs time-shared and says why (a
// container without CAP_SYS_NICE, or a kernel with CONFIG_RT_GROUP_SCHED whose cgroup grants
// real-time tasks no run time).
RealtimeOutcome enter_realtime(uint32_t priority);

// The calling thread time-shared for a scope of bulk work (the daemon's startup), then back at
// SCHED_FIFO `priority`; nothing when `priority` is 0. Threads created inside the scope stay
// time-shared.
class TimeSharedScope {
 public:
  explicit TimeSharedScope(uint32_t priority);
  ~TimeSharedScope();
  TimeSharedScope(const TimeSharedScope&) = delete;
  TimeSharedScope& operator=(const TimeSharedScope&) = delete;

 private:
  uint32_t priority_;
};

}  // namespace c2c::daemon
