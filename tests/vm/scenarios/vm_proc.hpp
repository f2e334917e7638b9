// /proc readers for the guest scenarios: task identity (stat field 22), current CPU (field 39),
// context-switch counters. Fields are parsed after the LAST ')' because comm may contain ')'.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <sys/types.h>

namespace c2c::vm {

struct TaskStat {
  uint64_t start_ticks = 0;  // field 22
  int processor = -1;        // field 39
};

std::optional<TaskStat> read_task_stat(pid_t tgid, pid_t tid);

// "nonvoluntary_ctxt_switches" / "voluntary_ctxt_switches" of /proc/<tgid>/task/<tid>/status.
uint64_t read_ctxt_switches(pid_t tgid, pid_t tid, bool voluntary);

// se.nr_migrations of /proc/<tgid>/task/<tid>/sched (CONFIG_SCHED_DEBUG); 0 if absent.
uint64_t read_nr_migrations(pid_t tgid, pid_t tid);

// The calling thread's run delay: the second field of /proc/thread-self/schedstat, nanoseconds
// it has spent runnable but not running (CONFIG_SCHED_INFO; kept by the core scheduler for every
// class, so it measures EEVDF and sched_ext alike). The file stays open: one pread per sample.
class RunDelayReader {
 public:
  RunDelayReader();
  ~RunDelayReader();
  RunDelayReader(const RunDelayReader&) = delete;
  RunDelayReader& operator=(const RunDelayReader&) = delete;
  // nullopt if the kernel has no schedstat file or it cannot be parsed.
  std::optional<uint64_t> read() const;

 private:
  int fd_ = -1;
};

// Cpus_allowed_list of /proc/self/status.
std::string cpus_allowed_list();

pid_t gettid_now();

// CLOCK_MONOTONIC in ns; a busy loop until it reaches end_ns; the calling thread pinned to cpu
// (throws std::runtime_error naming the CPU).
uint64_t mono_ns();
void burn_until(uint64_t end_ns);
void pin_self(int cpu);

// The q-quantile (0..1, nearest rank) of v; 0 when v is empty.
uint64_t percentile(std::vector<uint64_t> v, double q);

}  // namespace c2c::vm
