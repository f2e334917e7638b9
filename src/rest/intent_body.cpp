#include "rest/intent_body.hpp"

namespace c2c::rest {

int original_state_number(node::IntentState s) {
  switch (s) {
    case node::IntentState::Pending: return 0;
    case node::IntentState::Sent: return 1;
    case node::IntentState::Applied: return 2;
    case node::IntentState::Failed: return 3;
  }
  return -1;
}

json intent_to_body(const reply::Intent& in, const std::string& id, const NodeSchedulingPolicy* p) {
  // Every intent says why it is in its state. The daemon gives one for every state (issue #14:
  // APPLIED only after its read-back pass found every matched entry in the pinned map); this fills
  // in the states' meaning for a daemon that sent none, never more than the state itself says.
  std::string reason = in.reason;
  if (reason.empty()) {
    switch (in.state) {
      case node::IntentState::Pending: reason = "accepted, nothing of it in the pinned map yet"; break;
      case node::IntentState::Sent: reason = "written to the pinned map, not yet read back"; break;
      case node::IntentState::Applied:
        reason = "every matched task's entry (" + std::to_string(in.applied_entries) +
                 ") read back from the pinned map";
        break;
      default: reason = "the daemon reported no reason"; break;
    }
  }
  json warnings = json::array();
  for (const auto& w : in.warnings) warnings.push_back(w);
  return {{"id", id},
          {"policyId", id},
          {"nodeId", in.node},
          {"commandRegex", p ? p->command_regex : ""},
          {"priority", p ? p->priority : 0},
          {"executionTime", p ? p->execution_time : 0},
          {"state", original_state_number(in.state)},
          {"stateName", reply::state_name(in.state)},
          {"reason", reason},
          {"policyGeneration", in.policy_generation},
          {"matchedTasks", in.matched_tasks},
          {"appliedEntries", in.applied_entries},
          {"warnings", warnings},
          {"updatedUnixMs", in.updated_unix_ms}};
}

}  // namespace c2c::rest
