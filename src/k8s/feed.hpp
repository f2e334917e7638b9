// The feed: the observer's bindings and the policy CRDs -> claim2cored (gRPC over its Unix socket).
// Watch callbacks only compute requests and hand them to the FeedSender (feed_sender.hpp), whose
// thread talks to the daemon.
#pragma once

#include <mutex>

#include "k8s/feed_claims.hpp"
#include "k8s/feed_sender.hpp"
#include "k8s/observer.hpp"
#include "k8s/node_watch.hpp"
#include "k8s/policy_watch.hpp"

namespace c2c::k8s {

class DaemonFeed : public BindingListener, public PolicySink, public NodeLabelSink {
 public:
  // `next` still gets every binding change and notice (the JSON-lines output); may be null.
  DaemonFeed(FeedSender& sender, BindingListener* next) : sender_(sender), next_(next) {}

  void on_bindings_changed(const std::vector<ClaimDeviceBinding>& added,
                           const std::vector<ClaimDeviceBinding>& removed) override;
  void on_notice(const std::string& kind, const std::string& message) override;
  void on_binding_state(const BindingState& state) override;

  void upsert_policy(const AnyPolicy& p) override;
  void delete_policy(PolicyKind kind, const std::string& name, int64_t generation) override;
  void on_policy_notice(const std::string& kind, const std::string& message) override;
  void acknowledge_preview(const AnyPolicy& p) override;

  void node_labels(const NodeLabels& labels) override;
  void on_node_notice(const std::string& kind, const std::string& message) override;

 private:
  FeedSender& sender_;
  BindingListener* next_;
  std::mutex mu_;  // the planner (binding callbacks are serialized by the cache; this is cheap insurance)
  ClaimFeedPlanner planner_;
  bool synced_ = false;
};

}  // namespace c2c::k8s
