// The scheduler's per-task counters (c2c_task_cnt, struct c2c_task_counters, ABI v4): device-local
// CPU time and CPU / NUMA migrations of one task, as tests/vm/README.md describes them.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

#include <linux/types.h>
#include <nlohmann/json.hpp>

#include "claim2core_abi.h"

namespace c2c::vm {

// The counters of task tid (a process or a thread; readable until it is reaped), looked up by
// pidfd in the map pinned at <pin_root>/c2c_task_cnt. nullopt with *why set when the map or the
// task is not there.
std::optional<c2c_task_counters> read_task_counters(pid_t tid, const std::string& pin_root, std::string* why);

// What the task was counted between two reads (each field of now minus then).
c2c_task_counters counters_since(const c2c_task_counters& now, const c2c_task_counters& then);

// The counters as JSON, named after their ABI fields; device_node >= 0 adds device_local_ns and
// device_local_share (node_ns[device_node] / runtime_ns).
nlohmann::json counters_json(const c2c_task_counters& c, int device_node = -1);

}  // namespace c2c::vm
