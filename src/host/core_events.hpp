// Task discoveries as inputs of the pure core (core/events.hpp).
#pragma once

#include <optional>

#include "core/events.hpp"
#include "host/task_record.hpp"

namespace c2c::host {

// New/Exec/Snapshot -> TaskSeen, Rename -> TaskRenamed, Exit -> TaskExited. An exec by a
// non-leader thread also retires the exec'ing thread's former tid, whose start time the kernel
// no longer reports: that TaskExited needs the start the caller knew for old_tid, so it is
// returned separately by exec_retired_tid().
c2c::Event to_core_event(const TaskEvent& e);
// For an Exec whose old_tid differs from the new tid: the tid that no longer exists.
std::optional<uint32_t> exec_retired_tid(const TaskEvent& e);

}  // namespace c2c::host
