// Whether this test process may put a thread in SCHED_FIFO at all (CAP_SYS_NICE or RLIMIT_RTPRIO,
// and on a CONFIG_RT_GROUP_SCHED kernel real-time run time in its cgroup), asked in a throw-away
// thread with the system call itself, not through the code under test.
#pragma once

#include <sched.h>

#include <string>
#include <thread>

namespace c2c::daemon {

// "" when it may, else why not (for GTEST_SKIP).
inline std::string fifo_refused_here() {
  std::string why;
  std::thread([&] {
    sched_param p{};
    p.sched_priority = 1;
    if (::sched_setscheduler(0, SCHED_FIFO, &p) != 0) why = "SCHED_FIFO refused to this test (no CAP_SYS_NICE?)";
  }).join();
  return why;
}

}  // namespace c2c::daemon
