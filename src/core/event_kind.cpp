#include "core/events.hpp"

namespace c2c {

const char* event_kind(const Event& e) {
  static constexpr const char* kNames[] = {
      "node_info",   "claim_allocated", "claim_updated",  "claim_deallocated", "pod_bound",     "pod_removed",
      "task_seen",   "task_renamed",    "task_exited",    "policy_upsert",     "policy_upsert", "policy_delete",
      "preview",     "time_advance",    "daemon_restart", "sync_complete",     "bpf_observed",  "bpf_synced",
      "task_role_set", "node_labels"};
  static_assert(std::size(kNames) == std::variant_size_v<Event>, "one trace name per event alternative");
  return kNames[e.index()];
}

}  // namespace c2c
