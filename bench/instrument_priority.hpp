// The measuring threads of the daemon's latency benchmarks run SCHED_FIFO 1: on a busy host a
// time-shared thread that wakes waits for the running task's slice (1.5-3 ms), so a poll of the
// map or the wake-up by a reply would time the benchmark's own wait for a CPU as the daemon's
// latency. SCHED_RESET_ON_FORK: whatever such a thread starts (the daemon, the workload's
// threads) runs time-shared, as it would without the benchmark; the daemon runs SCHED_FIFO only
// when its config says so (realtime_priority). Priority 1, the daemon's own when it is
// configured so: the instrument never preempts the daemon it times. C2C_BENCH_TIME_SHARED=1 in
// the environment leaves them time-shared (the benchmarks as they measured before 2026-12-03).
#pragma once

#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace c2c::bench {

// For the calling thread; what it runs at now, for the benchmark's header.
inline std::string instrument_realtime() {
  if (std::getenv("C2C_BENCH_TIME_SHARED")) return "measuring threads time-shared (C2C_BENCH_TIME_SHARED)";
  sched_param p{};
  p.sched_priority = 1;
  if (::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &p) == 0)
    return "measuring threads SCHED_FIFO 1 (reset on fork: the daemon and the workload run as configured)";
  return std::string("measuring threads time-shared (SCHED_FIFO refused: ") + std::strerror(errno) +
         "): on a busy host their own wake-ups are timed too";
}

}  // namespace c2c::bench
