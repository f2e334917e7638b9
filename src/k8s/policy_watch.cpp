#include "k8s/policy_watch.hpp"

#include <thread>

#include "k8s/policy_status.hpp"
#include "codec/json_reader.hpp"

namespace c2c::k8s {

using nlohmann::json;

const char* policy_kind_name(PolicyKind k) { return c2c::to_string(k); }

const char* policy_plural(PolicyKind k) {
  return k == PolicyKind::Dra ? "draexecutionpolicies" : "nodeschedulingpolicies";
}

std::string policy_collection_path(PolicyKind k) {
  return std::string("/apis/scheduling.gthulhu.io/v1alpha1/") + policy_plural(k);
}

namespace {

const char* plural(PolicyKind k) { return policy_plural(k); }

std::string object_name(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return {};
  const json& md = obj["metadata"];
  std::string name = md.contains("name") && md["name"].is_string() ? md["name"].get<std::string>() : "";
  std::string ns = md.contains("namespace") && md["namespace"].is_string() ? md["namespace"].get<std::string>() : "";
  return ns.empty() ? name : ns + "/" + name;
}

// metadata.name, the cache key (policies are cluster-scoped).
std::string raw_name(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return {};
  auto it = obj["metadata"].find("name");
  return it != obj["metadata"].end() && it->is_string() ? it->get<std::string>() : std::string();
}

const std::string& policy_name(const AnyPolicy& p) {
  return std::visit([](const auto& v) -> const std::string& { return v.name; }, p);
}
int64_t policy_generation(const AnyPolicy& p) {
  return std::visit([](const auto& v) { return v.generation; }, p);
}

}  // namespace

std::optional<AnyPolicy> decode_policy_object(PolicyKind kind, const json& object, std::string* error) {
  std::string who = std::string(policy_kind_name(kind)) + " " + object_name(object);
  auto fail = [&](const std::string& field, const std::string& message) -> std::optional<AnyPolicy> {
    if (error) *error = who + ": " + field + ": " + message;
    return std::nullopt;
  };
  if (!object.is_object()) return fail("object", "not a JSON object");
  // Typed-list items carry no apiVersion/kind; status and the rest of metadata are Kubernetes'.
  json doc = {{"apiVersion", object.value("apiVersion", std::string(codec::kPolicyApiVersion))},
              {"kind", object.value("kind", std::string(policy_kind_name(kind)))}};
  if (!object.contains("metadata") || !object["metadata"].is_object()) return fail("metadata", "missing");
  const json& md = object["metadata"];
  doc["metadata"] = json::object();
  for (const char* f : {"name", "generation"})
    if (md.contains(f)) doc["metadata"][f] = md[f];
  if (object.contains("spec")) doc["spec"] = object["spec"];
  if (doc["kind"] != policy_kind_name(kind))
    return fail("kind", "'" + doc["kind"].dump() + "' on the " + plural(kind) + " endpoint");
  try {
    AnyPolicy p = codec::decode_policy(doc, "");
    // generation 0 would mean "the next one" to the daemon: a resend would then be a new version.
    if (policy_generation(p) < 1) return fail("metadata.generation", "missing or 0 (the API server sets it from 1)");
    return p;
  } catch (const codec::DecodeError& e) {
    return fail(e.field, e.what());
  }
}

void PolicyCache::upsert_locked(const json& object, std::map<std::string, AnyPolicy>& into) {
  std::string err;
  auto p = decode_policy_object(kind_, object, &err);
  if (!p) {
    sink_.on_policy_notice("refused", err + " (skipped; the last good version stays)");
    if (auto it = live_.find(raw_name(object)); it != live_.end()) into[it->first] = it->second;
    return;
  }
  const std::string& name = policy_name(*p);
  auto it = live_.find(name);
  if (it == live_.end() || !(it->second == *p)) sink_.upsert_policy(*p);
  // Only an acknowledgement of the generation the object is at now counts: one of an older
  // generation was for a spec that has changed since.
  if (auto ack = acknowledged_generation(object);
      ack && *ack == policy_generation(*p) && std::holds_alternative<DraExecutionPolicy>(*p)) {
    auto [a, fresh] = acknowledged_.try_emplace(name, *ack);
    if (fresh || a->second != *ack) {
      a->second = *ack;
      sink_.acknowledge_preview(*p);
    }
  }
  into[name] = *p;
}

void PolicyCache::replace(const std::vector<json>& items) {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, AnyPolicy> next;
  for (const auto& item : items) upsert_locked(item, next);
  for (const auto& [name, p] : live_)
    if (!next.count(name)) sink_.delete_policy(kind_, name, policy_generation(p));
  std::erase_if(acknowledged_, [&](const auto& a) { return !next.count(a.first); });
  live_ = std::move(next);
}

bool PolicyCache::apply(const std::string& type, const json& object) {
  std::lock_guard<std::mutex> lock(mu_);
  if (type == "ADDED" || type == "MODIFIED") {
    std::map<std::string, AnyPolicy> one;
    upsert_locked(object, one);
    for (auto& [name, p] : one) live_[name] = std::move(p);
    return true;
  }
  if (type == "DELETED") {
    std::string name = raw_name(object);
    if (auto it = live_.find(name); it != live_.end()) {
      // The last generation this feed sent: the daemon deletes it and keeps a tombstone (INV-3).
      sink_.delete_policy(kind_, name, policy_generation(it->second));
      live_.erase(it);
      acknowledged_.erase(name);
    }
    return true;
  }
  return false;
}

std::map<std::string, AnyPolicy> PolicyCache::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

namespace {

class CacheHandler : public ListWatchHandler {
 public:
  CacheHandler(PolicyCache& cache, PolicySink& sink) : cache_(cache), sink_(sink) {}
  void on_list(std::vector<json> items, const std::string&, const std::string&) override { cache_.replace(items); }
  bool on_event(const std::string& type, const json& object, const std::string&) override {
    return cache_.apply(type, object);
  }
  void on_notice(const std::string& kind, const std::string& message) override { sink_.on_policy_notice(kind, message); }

 private:
  PolicyCache& cache_;
  PolicySink& sink_;
};

}  // namespace

PolicyWatch::PolicyWatch(KubeConfig cfg, ListWatchTiming timing, PolicySink& sink)
    : cfg_(std::move(cfg)), timing_(timing), sink_(sink), dra_(PolicyKind::Dra, sink), node_(PolicyKind::Node, sink) {}

void PolicyWatch::run(const std::atomic<bool>& stop) {
  std::vector<std::thread> threads;
  for (PolicyKind k : {PolicyKind::Dra, PolicyKind::Node}) {
    threads.emplace_back([this, k, &stop] {
      int i = k == PolicyKind::Dra ? 0 : 1;
      ListWatchTarget target{plural(k), policy_collection_path(k), ""};
      ListWatchCounters counters{&stats_.lists[i], &stats_.watches[i], &stats_.relists_after_gone,
                                 &stats_.relists_after_break};
      CacheHandler handler(k == PolicyKind::Dra ? dra_ : node_, sink_);
      list_watch(cfg_, target, timing_, handler, counters, stop);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace c2c::k8s
