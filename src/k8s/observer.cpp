#include "k8s/observer.hpp"

#include <algorithm>
#include <chrono>
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

std::string object_rv(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return {};
  auto it = obj["metadata"].find("resourceVersion");
  return it != obj["metadata"].end() && it->is_string() ? it->get<std::string>() : std::string();
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

void BindingCache::replace(Resource r, const std::vector<json>& items, const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
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
}

Observer::Observer(KubeConfig cfg, ObserverOptions options, BindingListener& listener)
    : cfg_(std::move(cfg)),
      options_(std::move(options)),
      listener_(listener),
      cache_(listener, BindingOptions{options_.node, std::nullopt, /*pods_complete=*/true}) {}

namespace {

void sleep_unless_stopped(const std::atomic<bool>& stop, int ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

void Observer::resource_loop(BindingCache::Resource r, const std::atomic<bool>& stop) {
  HttpClient http(cfg_);
  int ri = static_cast<int>(r);
  std::string name = resource_name(r);
  std::string base = r == BindingCache::Resource::Pods ? "/api/v1/pods" : "/apis/resource.k8s.io/v1/" + name;
  std::string selector =
      r == BindingCache::Resource::Pods ? "&fieldSelector=" + url_encode("spec.nodeName=" + options_.node) : "";
  while (!stop) {
    // LIST (paginated): the resourceVersion of the list is where the watch starts.
    std::vector<json> items;
    std::string rv, cont;
    bool listed = true;
    do {
      std::string q = base + "?limit=" + std::to_string(options_.list_page_size) + selector +
                      (cont.empty() ? "" : "&continue=" + url_encode(cont));
      ++stats_.lists[ri];
      HttpResult res = http.get(q, 60, &stop);
      json page = res.ok() ? json::parse(res.body, nullptr, false) : json();
      if (!res.ok() || page.is_discarded() || !page.is_object()) {
        listener_.on_notice("error", "list " + name + ": " +
                                         (res.error.empty() ? "HTTP " + std::to_string(res.status) : res.error));
        listed = false;
        break;
      }
      if (page.contains("items") && page["items"].is_array())
        for (auto& it : page["items"]) items.push_back(std::move(it));
      const json& md = page.contains("metadata") && page["metadata"].is_object() ? page["metadata"] : json::object();
      rv = md.value("resourceVersion", "");
      cont = md.value("continue", "");
    } while (!cont.empty() && !stop);
    if (!listed) {
      sleep_unless_stopped(stop, options_.retry_backoff_ms);
      continue;
    }
    if (stop) break;
    cache_.replace(r, items, "list " + name);

    // WATCH from rv until 410 Gone or a broken connection; a clean end just re-watches.
    while (!stop) {
      bool gone = false;
      int lines = 0;
      auto started = std::chrono::steady_clock::now();
      std::string q = base + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + url_encode(rv) +
                      "&timeoutSeconds=" + std::to_string(options_.watch_timeout_s) + selector;
      ++stats_.watches[ri];
      HttpResult res = http.stream(
          q,
          [&](const std::string& line) {
            ++lines;
            json ev = json::parse(line, nullptr, false);
            if (ev.is_discarded() || !ev.is_object() || !ev.contains("type") || !ev["type"].is_string()) {
              listener_.on_notice("error", "watch " + name + ": not a watch event: " + line.substr(0, 200));
              return true;
            }
            std::string type = ev["type"];
            const json& obj = ev.contains("object") ? ev["object"] : json();
            if (type == "ERROR") {
              long code = obj.is_object() ? obj.value("code", 0L) : 0L;
              if (code == 410) gone = true;
              else listener_.on_notice("error", "watch " + name + ": " + obj.dump());
              return false;
            }
            std::string obj_rv = object_rv(obj);
            if (type != "BOOKMARK" && !cache_.apply(r, type, obj, "watch " + name))
              listener_.on_notice("error", "watch " + name + ": unknown event type " + type);
            if (!obj_rv.empty()) rv = obj_rv;
            return true;
          },
          stop, options_.watch_timeout_s + 30);
      if (stop) break;
      if (gone || res.status == 410) {
        ++stats_.relists_after_gone;
        listener_.on_notice("relist", name + ": 410 Gone (resourceVersion " + rv + " expired)");
        break;
      }
      if (!res.error.empty() || (res.status != 200 && res.status != 0)) {
        ++stats_.relists_after_break;
        listener_.on_notice("relist", name + ": watch broke: " +
                                          (res.error.empty() ? "HTTP " + std::to_string(res.status) : res.error));
        sleep_unless_stopped(stop, options_.retry_backoff_ms);
        break;
      }
      // A server that ends watches at once must not make this a busy loop.
      if (lines == 0 && std::chrono::steady_clock::now() - started < std::chrono::seconds(1))
        sleep_unless_stopped(stop, options_.retry_backoff_ms);
    }
  }
}

void Observer::run(const std::atomic<bool>& stop) {
  std::vector<std::thread> threads;
  for (auto r : {BindingCache::Resource::Claims, BindingCache::Resource::Slices, BindingCache::Resource::Pods})
    threads.emplace_back([this, r, &stop] { resource_loop(r, stop); });
  for (auto& t : threads) t.join();
}

}  // namespace c2c::k8s
