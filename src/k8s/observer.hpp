// List+watch of resourceclaims, resourceslices and the node's pods. Bindings are computed from a
// local cache and only their difference is reported, so a relist (after 410 Gone or a broken
// connection) neither loses nor duplicates a binding.
#pragma once

#include <atomic>
#include <map>
#include <set>
#include <mutex>
#include <string>
#include <vector>

#include "k8s/bindings.hpp"
#include "k8s/decode.hpp"
#include "k8s/kube_config.hpp"

namespace c2c::k8s {

// Everything the cache knows after a recompute, for listeners that need more than the diff (the
// daemon feed needs the pods' labels and claim names, and a revision that only grows).
struct BindingState {
  const std::vector<ClaimDeviceBinding>& bindings;  // the current set, sorted by key()
  const std::vector<ResourceClaim>& claims;         // this node's claims
  const std::vector<Pod>& pods;                     // this node's pods
  // The highest numeric metadata.resourceVersion seen in any list or event (0: none). etcd
  // revisions grow with every write in the cluster, so a later change always sees a larger one.
  uint64_t revision = 0;
};

class BindingListener {
 public:
  virtual ~BindingListener() = default;
  // Called (serialized) whenever the set of bindings changes. A changed binding appears in
  // `removed` (old value) and in `added` (new value).
  virtual void on_bindings_changed(const std::vector<ClaimDeviceBinding>& added,
                                   const std::vector<ClaimDeviceBinding>& removed) = 0;
  // Diagnostics: "relist", "watch", "refused" (a malformed object, named with its field), "error".
  virtual void on_notice(const std::string& kind, const std::string& message) { (void)kind, (void)message; }
  // Called (serialized) after every recompute once all three resources are listed, changed or not.
  virtual void on_binding_state(const BindingState& state) { (void)state; }
};

struct ObserverOptions {
  std::string node;               // required: pods are listed with fieldSelector=spec.nodeName=<node>
  long watch_timeout_s = 300;     // server-side timeoutSeconds of one watch
  long list_page_size = 500;      // limit= for paginated lists
  int retry_backoff_ms = 500;     // after a failed request
};

// The observer's cache and diffing, without any I/O: tests drive it directly, the Observer feeds it.
class BindingCache {
 public:
  enum class Resource : uint8_t { Claims = 0, Slices = 1, Pods = 2 };
  static constexpr int kResources = 3;

  explicit BindingCache(BindingListener& listener, BindingOptions options);
  // Replace everything known about one resource with a fresh list; marks it synced.
  void replace(Resource r, const std::vector<nlohmann::json>& items, const std::string& source,
               const std::string& list_rv = {});
  // One watch event: ADDED, MODIFIED or DELETED. Returns false for an unknown type.
  bool apply(Resource r, const std::string& type, const nlohmann::json& object, const std::string& source);
  bool synced() const;
  std::vector<ClaimDeviceBinding> current() const;  // the last reported set

 private:
  void recompute_locked();
  bool relevant(const ResourceClaim& c) const;
  bool relevant(const ResourceSlice& s) const;
  void filter_locked(Decoded& d) const;
  bool decode_locked(Resource r, const nlohmann::json& obj, const std::string& source, Decoded& out);

  mutable std::mutex mu_;
  BindingListener& listener_;
  BindingOptions options_;
  bool synced_[kResources] = {false, false, false};
  std::map<std::string, ResourceClaim> claims_;
  std::map<std::string, ResourceSlice> slices_;
  std::map<std::string, Pod> pods_;
  std::map<std::string, ClaimDeviceBinding> last_;
  std::vector<std::string> last_warnings_;
  uint64_t revision_ = 0;
};

const char* resource_name(BindingCache::Resource r);

struct ObserverStats {
  std::atomic<int> lists[BindingCache::kResources] = {0, 0, 0};
  std::atomic<int> watches[BindingCache::kResources] = {0, 0, 0};
  std::atomic<int> relists_after_gone{0};
  std::atomic<int> relists_after_break{0};
};

class Observer {
 public:
  Observer(KubeConfig cfg, ObserverOptions options, BindingListener& listener);
  // Blocks until `stop` is true; one thread per resource.
  void run(const std::atomic<bool>& stop);
  const ObserverStats& stats() const { return stats_; }

 private:
  void resource_loop(BindingCache::Resource r, const std::atomic<bool>& stop);

  KubeConfig cfg_;
  ObserverOptions options_;
  BindingListener& listener_;
  BindingCache cache_;
  ObserverStats stats_;
};

}  // namespace c2c::k8s
