// Decoding of struct c2c_task_record (bpf/claim2core_abi.h), shared by the iterator and the
// event stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "host/parse_error.hpp"
#include "host/task_info.hpp"

namespace c2c::host {

enum class TaskEventKind : uint8_t { Snapshot = 0, New = 1, Exec = 2, Exit = 3, Rename = 4 };
const char* to_string(TaskEventKind k);

struct TaskEvent {
  TaskEventKind kind = TaskEventKind::Snapshot;
  TaskInfo task;          // tid, tgid, start_ticks, comm (the NEW name for Rename), cgroup_id
  uint32_t old_tid = 0;   // Exec only: the tid that called exec (differs from task.tid when a
                          // non-leader thread exec'd and took over the leader's tid)
  uint32_t title_hash = 0;  // Rename only: the process title's hash (title_hash(), 0: unknown)
};

// Validates size, kind and comm termination. Errors name the field ("record.size", "record.kind").
std::optional<TaskEvent> decode_task_record(const void* data, size_t size, ParseError* err = nullptr);

}  // namespace c2c::host
