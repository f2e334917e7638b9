// The two policy CRDs (scheduling.gthulhu.io/v1alpha1 draexecutionpolicies, nodeschedulingpolicies)
// -> the daemon's UpsertPolicy / DeletePolicy. Objects are decoded with src/trace/policy_codec
// (metadata.generation is the policy generation); a malformed one is reported with its kind, name
// and field and skipped, keeping the last good version. Policies are sent whatever their
// nodeNames/nodeSelectors say: the daemon's core decides per node (it knows the node's name and
// labels; the feed sends it the labels of its own Node object, node_watch.hpp).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "k8s/kube_config.hpp"
#include "k8s/list_watch.hpp"
#include "codec/policy_codec.hpp"

namespace c2c::k8s {


class PolicySink {
 public:
  virtual ~PolicySink() = default;
  virtual void upsert_policy(const AnyPolicy& p) = 0;
  virtual void delete_policy(PolicyKind kind, const std::string& name, int64_t generation) = 0;
  // "refused" (a malformed object: kind, name, field), "relist", "error".
  virtual void on_policy_notice(const std::string& kind, const std::string& message) = 0;
  // The object carries the cluster-wide preview acknowledgement of its current generation
  // (policy_status.hpp, kAckAnnotation); called once per acknowledged generation.
  virtual void acknowledge_preview(const AnyPolicy& p) { (void)p; }
};

// A CRD object (watch event object or typed-list item) -> the core's policy. Fields Kubernetes adds
// (status, metadata other than name and generation) are not the policy's business.
// nullopt and *error = "<Kind> <name>: <field>: <message>" when malformed.
std::optional<AnyPolicy> decode_policy_object(PolicyKind kind, const nlohmann::json& object, std::string* error);

// One kind's cache, without I/O: the last good version of every object, by name.
class PolicyCache {
 public:
  PolicyCache(PolicyKind kind, PolicySink& sink) : kind_(kind), sink_(sink) {}
  // A fresh list: upserts what is new or changed, deletes what is gone.
  void replace(const std::vector<nlohmann::json>& items);
  // ADDED, MODIFIED, DELETED; false for another type.
  bool apply(const std::string& type, const nlohmann::json& object);
  std::map<std::string, AnyPolicy> current() const;

 private:
  void upsert_locked(const nlohmann::json& object, std::map<std::string, AnyPolicy>& into);

  PolicyKind kind_;
  PolicySink& sink_;
  mutable std::mutex mu_;
  std::map<std::string, AnyPolicy> live_;
  std::map<std::string, int64_t> acknowledged_;  // name -> generation passed to acknowledge_preview
};

struct PolicyWatchStats {
  std::atomic<int> lists[2] = {0, 0};
  std::atomic<int> watches[2] = {0, 0};
  std::atomic<int> relists_after_gone{0};
  std::atomic<int> relists_after_break{0};
};

// List+watch of both kinds (one thread each) with the observer's machinery (list_watch.hpp).
class PolicyWatch {
 public:
  PolicyWatch(KubeConfig cfg, ListWatchTiming timing, PolicySink& sink);
  void run(const std::atomic<bool>& stop);  // blocks until stop
  const PolicyWatchStats& stats() const { return stats_; }

 private:
  KubeConfig cfg_;
  ListWatchTiming timing_;
  PolicySink& sink_;
  PolicyCache dra_, node_;
  PolicyWatchStats stats_;
};

const char* policy_kind_name(PolicyKind k);  // "DRAExecutionPolicy" / "NodeSchedulingPolicy"
const char* policy_plural(PolicyKind k);     // "draexecutionpolicies" / "nodeschedulingpolicies"
// The API path of the kind's collection: /apis/scheduling.gthulhu.io/v1alpha1/<plural>
std::string policy_collection_path(PolicyKind k);

}  // namespace c2c::k8s
