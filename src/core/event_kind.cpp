#include "core/events.hpp"

namespace c2c {

const char* event_kind(const Event& e) {
  static constexpr const char* kNames[] = {
      "node_info",   "claim_allocated", "claim_updated",  "claim_deallocated", "pod_bound",     "pod_removed",
      "task_seen",   "task_renamed",    "task_exited",    "policy_upsert",     "policy_upsert", "policy_delete",
      "preview",     "time_advance",    "daemon_restart", "sync_complete",     "bpf_observed",  "bpf_synced",
      "task_role_set", "node_labels", "controller_window"};
  static_assert(std::size(kNames) == std::variant_size_v<Event>, "one trace name per event alternative");
  return kNames[e.index()];
}

uint32_t task_event_tid(const Event& e) {
  if (const auto* seen = std::get_if<TaskSeen>(&e)) return seen->task.key.tid;
  if (const auto* renamed = std::get_if<TaskRenamed>(&e)) return renamed->key.tid;
  if (const auto* exited = std::get_if<TaskExited>(&e)) return exited->key.tid;
  if (const auto* role = std::get_if<TaskRoleSet>(&e)) return role->key.tid;
  return 0;
}

}  // namespace c2c
