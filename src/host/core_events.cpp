#include "host/core_events.hpp"

namespace c2c::host {

c2c::Event to_core_event(const TaskEvent& e) {
  const TaskKey key{e.task.tid, e.task.start_ticks};
  switch (e.kind) {
    case TaskEventKind::Rename:
      return c2c::TaskRenamed{key, e.task.comm};
    case TaskEventKind::Exit:
      return c2c::TaskExited{key};
    case TaskEventKind::Snapshot:
    case TaskEventKind::New:
    case TaskEventKind::Exec:
      break;
  }
  return c2c::TaskSeen{to_core_task(e.task)};
}

std::optional<uint32_t> exec_retired_tid(const TaskEvent& e) {
  if (e.kind != TaskEventKind::Exec || e.old_tid == 0 || e.old_tid == e.task.tid) return std::nullopt;
  return e.old_tid;
}

}  // namespace c2c::host
