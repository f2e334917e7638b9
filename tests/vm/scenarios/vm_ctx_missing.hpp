// The `ctxgone` scenario: a task whose context the scheduler must have (its task storage, created
// by ops.init_task) has lost it. User space deletes it through a pidfd, as any holder of the
// pinned c2c_task_cnt can; the scheduler must then stop with scx_bpf_error naming the task (the
// sched_ext idiom) rather than go on scheduling it without its queue count and counters.
#pragma once

#include <string>

namespace c2c::vm {

// Two CPU hogs share `cpu` (so each slice end enqueues one of them again, a callback that needs
// its context); the first one's context is deleted, then the scheduler's state is watched for up
// to wait_ms. Prints one JSON line; 0 pass (deleted, and sched_ext left "enabled"), 1 fail.
int cmd_ctx_missing(int cpu, const std::string& pin_root, int wait_ms);

}  // namespace c2c::vm
