#include "daemon/realtime_priority.hpp"

#include <linux/capability.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace c2c::daemon {

RealtimeOutcome enter_realtime(uint32_t priority) {
  RealtimeOutcome out;
  if (priority == 0) return out;
  sched_param p{};
  p.sched_priority = static_cast<int>(priority);
  // pid 0 is the calling thread; no SCHED_RESET_ON_FORK, so the threads created after inherit it.
  if (::sched_setscheduler(0, SCHED_FIFO, &p) == 0) {
    out.priority = priority;
    return out;
  }
  const int err = errno;
  out.refused = "realtime_priority: SCHED_FIFO " + std::to_string(priority) + " refused (" + std::strerror(err) + ")";
  if (err == EPERM)
    out.refused +=
        ": needs CAP_SYS_NICE (systemd: RestrictRealtime=no), and on a kernel with CONFIG_RT_GROUP_SCHED run time "
        "for real-time tasks in the daemon's cgroup (cpu.rt_runtime_us > 0)";
  return out;
}

std::string drop_sys_nice() {
  // capget/capset directly: libcap is not a dependency for two calls.
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &hdr, data) != 0) return std::string("capget: ") + std::strerror(errno);
  auto& word = data[CAP_TO_INDEX(CAP_SYS_NICE)];
  const uint32_t bit = CAP_TO_MASK(CAP_SYS_NICE);
  if (((word.effective | word.permitted | word.inheritable) & bit) == 0) return "";
  word.effective &= ~bit;
  word.permitted &= ~bit;
  word.inheritable &= ~bit;
  if (::syscall(SYS_capset, &hdr, data) != 0) return std::string("capset: ") + std::strerror(errno);
  return "";
}

}  // namespace c2c::daemon
