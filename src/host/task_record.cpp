#include "host/task_record.hpp"

#include <cstring>

#include "claim2core_abi.hpp"

namespace c2c::host {

const char* to_string(TaskEventKind k) {
  switch (k) {
    case TaskEventKind::Snapshot: return "snapshot";
    case TaskEventKind::New: return "new";
    case TaskEventKind::Exec: return "exec";
    case TaskEventKind::Exit: return "exit";
    case TaskEventKind::Rename: return "rename";
  }
  return "?";
}

std::optional<TaskEvent> decode_task_record(const void* data, size_t size, ParseError* err) {
  if (size < sizeof(c2c_task_record)) {
    set_error(err, "record.size",
              std::to_string(size) + " bytes, expected " + std::to_string(sizeof(c2c_task_record)));
    return std::nullopt;
  }
  c2c_task_record r;
  std::memcpy(&r, data, sizeof r);
  if (r.kind > C2C_EV_RENAME) {
    set_error(err, "record.kind", "unknown event kind " + std::to_string(r.kind));
    return std::nullopt;
  }
  if (r.tid == 0 && r.kind != C2C_EV_SNAPSHOT) {
    set_error(err, "record.tid", "is 0");
    return std::nullopt;
  }
  TaskEvent e;
  e.kind = static_cast<TaskEventKind>(r.kind);
  e.task.tid = r.tid;
  e.task.tgid = r.tgid;
  e.task.start_ticks = r.start_ticks;
  e.task.cgroup_id = r.cgroup_id;
  e.task.comm.assign(r.comm, ::strnlen(r.comm, sizeof r.comm));
  if (e.kind == TaskEventKind::Exec) e.old_tid = r.reserved;
  if (e.kind == TaskEventKind::Rename) e.title_hash = r.reserved;
  return e;
}

}  // namespace c2c::host
