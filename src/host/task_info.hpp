// What every task discovery method (procfs walk, BPF iterator, BPF event stream) yields.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/cpuset.hpp"
#include "core/model.hpp"

namespace c2c::host {

struct TaskInfo {
  uint32_t tid = 0;           // global (init pid namespace) thread id
  uint32_t tgid = 0;
  uint64_t start_ticks = 0;   // start_boottime / 10,000,000 (= /proc stat field 22)
  std::string comm;
  std::string cgroup;         // primary cgroup path (see primary_cgroup_path); empty if not read
  uint64_t cgroup_id = 0;     // cgroup v2 id (BPF methods only; 0 if unknown)
  std::optional<CpuSet> cpuset;  // effective cpuset of the task's cgroup, when read
  bool operator==(const TaskInfo&) const = default;
};

// The core's view of a task (role hints come from elsewhere).
inline c2c::Task to_core_task(const TaskInfo& t) {
  c2c::Task out;
  out.key = TaskKey{t.tid, t.start_ticks};
  out.tgid = t.tgid;
  out.comm = t.comm;
  out.cgroup = t.cgroup;
  out.cgroup_id = t.cgroup_id;
  out.cpuset = t.cpuset;
  return out;
}

}  // namespace c2c::host
