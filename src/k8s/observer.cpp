#include "k8s/observer.hpp"

#include "k8s/list_watch.hpp"

#include <algorithm>
#include <thread>

#include "k8s/http_client.hpp"

namespace c2c::k8s {

using nlohmann::json;

const char* resource_name(BindingCache::Resource r) {
  switch (r) {
    case BindingCache::Resource::Claims: return "resourceclaims";
    case BindingCache::Resource::Slices: return "resourceslices";
    case BindingCache::Resource::Pods: return "pods";
  }
  return "?";
}

namespace {

// Items of a typed list carry no apiVersion/kind; watch objects do, but be lenient.
json with_type(BindingCache::Resource r, json obj) {
  if (!obj.is_object()) return obj;
  const char* api = r == BindingCache::Resource::Pods ? "v1" : "resource.k8s.io/v1";
  const char* kind = r == BindingCache::Resource::Claims   ? "ResourceClaim"
                     : r == BindingCache::Resource::Slices ? "ResourceSlice"
                                                           : "Pod";
  if (!obj.contains("apiVersion")) obj["apiVersion"] = api;
  if (!obj.contains("kind")) obj["kind"] = kind;
  return obj;
}

std::string object_key(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return {};
  const json& md = obj["metadata"];
  if (md.contains("uid") && md["uid"].is_string() && !md["uid"].get<std::string>().empty()) return md["uid"];
  std::string ns = md.value("namespace", ""), name = md.value("name", "");
  return ns + "/" + name;
}

}  // namespace

BindingCache::BindingCache(BindingListener& listener, BindingOptions options)
    : listener_(listener), options_(std::move(options)) {}

bool BindingCache::decode_locked(Resource r, const json& obj, const std::string& source, Decoded& out) {
  size_t refused = out.refused.size();
  decode_object(with_type(r, obj), source, out);
  for (size_t i = refused; i < out.refused.size(); ++i) listener_.on_notice("refused", out.refused[i].to_string());
  return out.refused.size() == refused;
}

// Claims and slices are watched cluster-wide; keeping only what can concern this node makes the
// per-event recompute proportional to the node's objects, not the cluster's.
bool BindingCache::relevant(const ResourceClaim& c) const {
  if (options_.node.empty() || !c.allocation) return true;
  return selector_admits(c.allocation->node_selector, options_.node, options_.node_labels) != false;
}

bool BindingCache::relevant(const ResourceSlice& s) const {
  return options_.node.empty() || s.selection != NodeSelection::NodeName || s.node_name == options_.node;
}

void BindingCache::filter_locked(Decoded& d) const {
  std::erase_if(d.claims, [&](const ResourceClaim& c) { return !relevant(c); });
  std::erase_if(d.slices, [&](const ResourceSlice& s) { return !relevant(s); });
}

namespace {

// Kubernetes calls resourceVersion opaque; every etcd-backed API server gives the etcd revision,
// a decimal number that grows with every write in the cluster. Anything else counts as 0.
uint64_t numeric_rv(const std::string& rv) {
  if (rv.empty() || rv.size() > 19) return 0;
  uint64_t v = 0;
  for (char c : rv) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

void BindingCache::replace(Resource r, const std::vector<json>& items, const std::string& source,
                           const std::string& list_rv) {
  std::lock_guard<std::mutex> lock(mu_);
  revision_ = std::max(revision_, numeric_rv(list_rv));
  for (const auto& it : items) revision_ = std::max(revision_, numeric_rv(object_resource_version(it)));
  Decoded d;
  std::vector<std::string> keep;  // malformed objects keep their previous good version
  for (size_t i = 0; i < items.size(); ++i)
    if (!decode_locked(r, items[i], source + ".items[" + std::to_string(i) + "]", d)) keep.push_back(object_key(items[i]));
  filter_locked(d);
  auto rebuild = [&](auto& map, auto& decoded) {
    std::remove_reference_t<decltype(map)> next;
    for (auto& o : decoded) {
      std::string key = o.meta.uid.empty() ? o.meta.namespace_ + "/" + o.meta.name : o.meta.uid;
      next[key] = std::move(o);
    }
    for (const auto& k : keep)
      if (auto it = map.find(k); it != map.end()) next[k] = it->second;
    map = std::move(next);
  };
  switch (r) {
    case Resource::Claims: rebuild(claims_, d.claims); break;
    case Resource::Slices: rebuild(slices_, d.slices); break;
    case Resource::Pods: rebuild(pods_, d.pods); break;
  }
  synced_[static_cast<int>(r)] = true;
  recompute_locked();
}

bool BindingCache::apply(Resource r, const std::string& type, const json& object, const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string key = object_key(object);
  if (key.empty()) {
    listener_.on_notice("refused", source + ": " + type + " event without metadata");
    return false;
  }
  revision_ = std::max(revision_, numeric_rv(object_resource_version(object)));
  if (type == "DELETED") {
    switch (r) {
      case Resource::Claims: claims_.erase(key); break;
      case Resource::Slices: slices_.erase(key); break;
      case Resource::Pods: pods_.erase(key); break;
    }
  } else if (type == "ADDED" || type == "MODIFIED") {
    Decoded d;
    if (!decode_locked(r, object, source, d)) return true;  // state unchanged for this object
    size_t before = d.claims.size() + d.slices.size();
    filter_locked(d);
    if (d.claims.size() + d.slices.size() != before) {  // now allocated elsewhere: forget it
      claims_.erase(key);
      slices_.erase(key);
    }
    if (!d.claims.empty()) claims_[key] = std::move(d.claims.front());
    if (!d.slices.empty()) slices_[key] = std::move(d.slices.front());
    if (!d.pods.empty()) pods_[key] = std::move(d.pods.front());
  } else {
    return false;
  }
  recompute_locked();
  return true;
}

bool BindingCache::synced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_[0] && synced_[1] && synced_[2];
}

std::vector<ClaimDeviceBinding> BindingCache::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ClaimDeviceBinding> out;
  for (const auto& [_, b] : last_) out.push_back(b);
  return out;
}

void BindingCache::recompute_locked() {
  // Until every resource has been listed once, a partial cache would report bindings that are
  // about to change (e.g. claims before slices): wait.
  if (!(synced_[0] && synced_[1] && synced_[2])) return;
  std::vector<ResourceClaim> claims;
  std::vector<ResourceSlice> slices;
  std::vector<Pod> pods;
  for (const auto& [_, c] : claims_) claims.push_back(c);
  for (const auto& [_, s] : slices_) slices.push_back(s);
  for (const auto& [_, p] : pods_) pods.push_back(p);
  BindingSet set = compute_bindings(claims, Inventory::build(slices), pods, options_);
  std::map<std::string, ClaimDeviceBinding> next;
  for (auto& b : set.bindings) {
    std::string k = b.key();
    next.emplace(std::move(k), std::move(b));
  }
  std::vector<ClaimDeviceBinding> added, removed;
  for (const auto& [k, b] : last_) {
    auto it = next.find(k);
    if (it == next.end() || !(it->second == b)) removed.push_back(b);
  }
  for (const auto& [k, b] : next) {
    auto it = last_.find(k);
    if (it == last_.end() || !(it->second == b)) added.push_back(b);
  }
  last_ = std::move(next);
  for (const auto& w : set.warnings)
    if (std::find(last_warnings_.begin(), last_warnings_.end(), w) == last_warnings_.end())
      listener_.on_notice("warning", w);
  last_warnings_ = set.warnings;
  if (!added.empty() || !removed.empty()) listener_.on_bindings_changed(added, removed);
  std::vector<ClaimDeviceBinding> all;
  all.reserve(last_.size());
  for (const auto& [_, b] : last_) all.push_back(b);
  listener_.on_binding_state(BindingState{all, claims, pods, revision_});
}

Observer::Observer(KubeConfig cfg, ObserverOptions options, BindingListener& listener)
    : cfg_(std::move(cfg)),
      options_(std::move(options)),
      listener_(listener),
      cache_(listener, BindingOptions{options_.node, std::nullopt, /*pods_complete=*/true}) {}

namespace {

// Adapts one resource of the cache to the generic list+watch loop.
class CacheFeed : public ListWatchHandler {
 public:
  CacheFeed(BindingCache& cache, BindingCache::Resource r, BindingListener& listener)
      : cache_(cache), r_(r), listener_(listener) {}
  void on_list(std::vector<json> items, const std::string& list_rv, const std::string& source) override {
    cache_.replace(r_, items, source, list_rv);
  }
  bool on_event(const std::string& type, const json& object, const std::string& source) override {
    return cache_.apply(r_, type, object, source);
  }
  void on_notice(const std::string& kind, const std::string& message) override { listener_.on_notice(kind, message); }

 private:
  BindingCache& cache_;
  BindingCache::Resource r_;
  BindingListener& listener_;
};

}  // namespace

void Observer::resource_loop(BindingCache::Resource r, const std::atomic<bool>& stop) {
  int ri = static_cast<int>(r);
  std::string name = resource_name(r);
  ListWatchTarget target{name, r == BindingCache::Resource::Pods ? "/api/v1/pods" : "/apis/resource.k8s.io/v1/" + name,
                         r == BindingCache::Resource::Pods
                             ? "&fieldSelector=" + url_encode("spec.nodeName=" + options_.node)
                             : ""};
  ListWatchTiming timing{options_.watch_timeout_s, options_.list_page_size, options_.retry_backoff_ms};
  ListWatchCounters counters{&stats_.lists[ri], &stats_.watches[ri], &stats_.relists_after_gone,
                             &stats_.relists_after_break};
  CacheFeed feed(cache_, r, listener_);
  list_watch(cfg_, target, timing, feed, counters, stop);
}

void Observer::run(const std::atomic<bool>& stop) {
  std::vector<std::thread> threads;
  for (auto r : {BindingCache::Resource::Claims, BindingCache::Resource::Slices, BindingCache::Resource::Pods})
    threads.emplace_back([this, r, &stop] { resource_loop(r, stop); });
  for (auto& t : threads) t.join();
}

}  // namespace c2c::k8s
