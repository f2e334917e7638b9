// The controller's signals on any kernel (issue 46, step 4; spec/state-machine.md §10): a thread's
// run delay and CPU share from /proc/<tgid>/task/<tid>/schedstat, and a cgroup's CPU pressure
// (PSI, cpu.pressure). Parsers and the per-window arithmetic are pure; the readers take the /proc
// root and the cgroup directory as parameters (tests use a fake tree). Not wired into the daemon yet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/parse_error.hpp"

namespace c2c::host {

// /proc/<tid>/schedstat: "<on-CPU ns> <runnable-but-waiting ns> <timeslices run>", cumulative
// since the thread started (needs CONFIG_SCHED_INFO, which every distribution kernel has).
struct SchedStat {
  uint64_t run_ns = 0;
  uint64_t wait_ns = 0;
  uint64_t timeslices = 0;
  bool operator==(const SchedStat&) const = default;
};
// Errors name the field ("schedstat.wait_ns").
std::optional<SchedStat> parse_schedstat(std::string_view text, ParseError* err = nullptr);

// One line of a PSI file: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" (and "full ...").
struct PressureLine {
  double avg10 = 0, avg60 = 0, avg300 = 0;  // percent of wall time
  uint64_t total_us = 0;                    // cumulative stall time, microseconds
  bool operator==(const PressureLine&) const = default;
};
struct Pressure {
  PressureLine some;
  std::optional<PressureLine> full;  // absent on kernels before 5.13 for cpu.pressure
  bool operator==(const Pressure&) const = default;
};
std::optional<Pressure> parse_pressure(std::string_view text, ParseError* err = nullptr);

// One thread over one window: the differences of two schedstat reads `window_ns` apart.
struct ThreadWindow {
  uint32_t tid = 0;
  uint64_t run_ns = 0, wait_ns = 0, runs = 0;
  double cpu_share = 0;                 // run_ns / window_ns
  std::optional<uint64_t> mean_delay_ns;  // wait_ns / runs; none when it did not run
};
// nullopt when the counters went back (a reused tid: not the same thread).
std::optional<ThreadWindow> thread_window(uint32_t tid, const SchedStat& before, const SchedStat& after,
                                          uint64_t window_ns);

// The window's run-delay signal for a set of threads: the 99th percentile (nearest rank) of the
// threads' mean delay per run. schedstat holds sums, not each wait, so a thread's own tail is not
// seen: a thread that waits 10 ms once in 100 runs of 0 shows 100 us. None when no thread ran.
std::optional<uint64_t> run_delay_p99(const std::vector<ThreadWindow>& threads);

// Readers. `proc_root` is "/proc" on a host; a missing file (the thread exited) is an error
// naming the path.
std::optional<SchedStat> read_schedstat(const std::string& proc_root, uint32_t tgid, uint32_t tid,
                                        ParseError* err = nullptr);
std::optional<Pressure> read_cpu_pressure(const std::string& cgroup_dir, ParseError* err = nullptr);

}  // namespace c2c::host
