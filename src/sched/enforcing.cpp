#include "sched/enforcing.hpp"

namespace c2c::sched {

bool scheduler_enforcing(std::string_view scx_state, std::string_view root_ops, bool ours_attached) {
  return ours_attached && scx_state == "enabled" && root_ops == kOpsName;
}

}  // namespace c2c::sched
