// Whether the claim2core sched_ext scheduler is the one enforcing the pinned maps right now: the
// daemon's claim2core_scheduler_enforcing gauge and Status.scheduler_enforcing. Pure: the caller
// reads /sys/kernel/sched_ext/state and /sys/kernel/sched_ext/root/ops (loader.hpp) and knows
// whether its own struct_ops link is attached without an exit record.
#pragma once

#include <string_view>

namespace c2c::sched {

// The ops name claim2core.bpf.c registers (SCX_OPS_DEFINE ... .name), which the kernel shows in
// /sys/kernel/sched_ext/root/ops while it is the root scheduler.
inline constexpr std::string_view kOpsName = "claim2core";

// state "enabled" alone is not enough: another sched_ext scheduler (scx_rusty, ...) may be the
// root one while ours failed to attach or exited.
bool scheduler_enforcing(std::string_view scx_state, std::string_view root_ops, bool ours_attached);

}  // namespace c2c::sched
