#include "k8s/feed.hpp"

#include "api/convert.hpp"

namespace c2c::k8s {

void DaemonFeed::on_bindings_changed(const std::vector<ClaimDeviceBinding>& added,
                                     const std::vector<ClaimDeviceBinding>& removed) {
  if (next_) next_->on_bindings_changed(added, removed);
}

void DaemonFeed::on_notice(const std::string& kind, const std::string& message) {
  if (next_) next_->on_notice(kind, message);
}

void DaemonFeed::on_binding_state(const BindingState& state) {
  std::lock_guard<std::mutex> l(mu_);
  ClaimFeedChanges changes = planner_.update(state);
  for (auto& req : changes.upserts) {
    std::string uid = req.bindings(0).claim_uid();
    sender_.set_claim(uid, std::move(req));
  }
  for (const auto& d : changes.deletes) sender_.delete_claim(d.claim_uid, d.generation);
  if (!synced_) {  // the cache calls this only once every resource is listed
    synced_ = true;
    sender_.claims_synced();
  }
}

void DaemonFeed::upsert_policy(const AnyPolicy& p) { sender_.set_policy(api::to_proto(p)); }

void DaemonFeed::delete_policy(PolicyKind kind, const std::string& name, int64_t generation) {
  sender_.delete_policy(kind, name, generation);
}

void DaemonFeed::acknowledge_preview(const AnyPolicy& p) { sender_.acknowledge(api::to_proto(p)); }

void DaemonFeed::on_policy_notice(const std::string& kind, const std::string& message) { on_notice(kind, message); }

void DaemonFeed::node_labels(const NodeLabels& labels) { sender_.set_node_labels(labels); }

void DaemonFeed::on_node_notice(const std::string& kind, const std::string& message) {
  on_notice("node " + kind, message);
}

}  // namespace c2c::k8s
