#include "daemon/loop/realtime_priority.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace c2c::daemon {

int to_fifo(uint32_t priority) {
  sched_param p{};
  p.sched_priority = static_cast<int>(priority);
  return ::sched_setscheduler(0, SCHED_FIFO, &p) == 0 ? 0 : errno;
}

void to_time_shared() {
  sched_param p{};
  ::sched_setscheduler(0, SCHED_OTHER, &p);
}

RealtimeOutcome enter_realtime(uint32_t priority) {
  RealtimeOutcome out;
  if (priority == 0) return out;
  const int err = to_fifo(priority);
  if (err == 0) {
    out.priority = priority;
    return out;
  }
  out.refused = "realtime_priority: SCHED_FIFO " + std::to_string(priority) + " refused (" + std::strerror(err) + ")";
  if (err == EPERM)
    out.refused +=
        ": needs CAP_SYS_NICE (systemd: RestrictRealtime=no), and on a kernel with CONFIG_RT_GROUP_SCHED run time "
        "for real-time tasks in the daemon's cgroup (cpu.rt_runtime_us > 0)";
  return out;
}

TimeSharedScope::TimeSharedScope(uint32_t priority) : priority_(priority) {
  if (priority_ != 0) to_time_shared();
}

TimeSharedScope::~TimeSharedScope() {
  if (priority_ != 0) to_fifo(priority_);  // allowed: it held this priority before (CAP_SYS_NICE)
}

}  // namespace c2c::daemon
