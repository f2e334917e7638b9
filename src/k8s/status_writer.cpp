#include "k8s/status_writer.hpp"

#include <random>
#include <thread>
#include <vector>

#include "api/replies_proto.hpp"

namespace c2c::k8s {

using nlohmann::json;

namespace {

std::string object_path(const PolicyKey& key) { return policy_collection_path(key.first) + "/" + url_encode(key.second); }

std::string who(const PolicyKey& key) { return std::string(policy_kind_name(key.first)) + "/" + key.second; }

std::string now_rfc3339() {
  return rfc3339(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

void sleep_unless(const std::atomic<bool>& stop, std::chrono::milliseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (!stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

std::string metadata_name(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return {};
  auto it = obj["metadata"].find("name");
  return it != obj["metadata"].end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

// The Node list+watch: names only (labels are the observer's business).
class NodeCacheHandler : public ListWatchHandler {
 public:
  explicit NodeCacheHandler(StatusWriter& w) : w_(w) {}
  void on_list(std::vector<json> items, const std::string&, const std::string&) override {
    std::set<std::string> names;
    for (const auto& it : items)
      if (auto n = metadata_name(it); !n.empty()) names.insert(n);
    w_.node_list(names);
  }
  bool on_event(const std::string& type, const json& object, const std::string&) override {
    if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") return false;
    w_.node_event(type, metadata_name(object));
    return true;
  }
  void on_notice(const std::string& kind, const std::string& message) override { w_.notice_(kind, "nodes: " + message); }

 private:
  StatusWriter& w_;
};

StatusWriter::StatusWriter(KubeConfig cfg, StatusWriterOptions options, FeedTransport& daemon, Notice notice)
    : cfg_(cfg), options_(std::move(options)), daemon_(daemon), notice_(std::move(notice)), http_(std::move(cfg)) {}

void StatusWriter::node_list(const std::set<std::string>& names) {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& n : nodes_)
    if (!names.count(n)) sweep_due_ = true;  // a node left while the watch was down
  nodes_ = names;
  nodes_synced_ = true;
  cv_.notify_all();
}

void StatusWriter::node_event(const std::string& type, const std::string& name) {
  if (name.empty()) return;
  std::lock_guard<std::mutex> l(mu_);
  if (type == "DELETED") {
    nodes_.erase(name);
    sweep_due_ = true;
    cv_.notify_all();
  } else {
    nodes_.insert(name);
  }
}

bool StatusWriter::leader() const {
  std::lock_guard<std::mutex> l(mu_);
  return nodes_synced_ && !nodes_.empty() && *nodes_.begin() == options_.node;
}

std::set<std::string> StatusWriter::confirmed_gone(const json& status) {
  std::vector<std::string> candidates;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!nodes_synced_) return {};  // nothing is known to be gone yet
    for (const auto& n : status_nodes(status))
      if (n != options_.node && !nodes_.count(n)) candidates.push_back(n);
  }
  std::set<std::string> gone;
  for (const auto& n : candidates) {
    // Read after the object: a Node that exists now keeps its entry, however stale the cache.
    HttpResult r = http_.get("/api/v1/nodes/" + url_encode(n), options_.request_timeout_s);
    if (r.error.empty() && r.status == 404) gone.insert(n);
  }
  return gone;
}

StatusWriter::Result StatusWriter::write(const PolicyKey& key, const std::optional<NodeStatusEntry>& mine,
                                         std::optional<json> read, const std::atomic<bool>& stop) {
  const std::string path = object_path(key);
  static thread_local std::minstd_rand jitter(std::random_device{}());
  for (int attempt = 0; attempt < options_.max_attempts && !stop; ++attempt) {
    json obj;
    if (read) {
      obj = std::move(*read);
      read.reset();
    } else {
      HttpResult r = http_.get(path, options_.request_timeout_s, &stop);
      if (r.error.empty() && r.status == 404) return Result::NotFound;
      if (!r.ok()) {
        notice_("error", "status " + who(key) + ": read: " + describe_failure(r));
        return Result::Failed;
      }
      obj = json::parse(r.body, nullptr, false);
      if (!obj.is_object()) {
        notice_("error", "status " + who(key) + ": read: not a JSON object");
        return Result::Failed;
      }
    }
    json status = obj.contains("status") ? obj["status"] : json::object();
    std::set<std::string> gone = confirmed_gone(status);
    json next = merged_status(status, options_.node, mine, gone, now_rfc3339());
    if (next == status) return Result::Unchanged;
    // The resourceVersion read is the precondition: whoever wrote since makes this a 409.
    json body = {{"metadata", {{"resourceVersion", object_resource_version(obj)}}}, {"status", next}};
    HttpResult r =
        http_.patch(path + "/status", body.dump(), "application/merge-patch+json", options_.request_timeout_s);
    if (r.error.empty() && r.status == 200) {
      ++stats_.writes;
      for (const auto& n : gone) {
        ++stats_.pruned;
        notice_("status", who(key) + ": removed the entry of node " + n + " (its Node no longer exists)");
      }
      return Result::Written;
    }
    if (r.error.empty() && r.status == 404) return Result::NotFound;
    if (!(r.error.empty() && r.status == 409)) {
      notice_("error", "status " + who(key) + ": patch: " + describe_failure(r));
      return Result::Failed;
    }
    ++stats_.conflicts;
    auto wait = options_.conflict_backoff * (1 << attempt);
    wait += std::chrono::milliseconds(jitter() % (wait.count() + 1));  // two writers do not retry in step
    notice_("conflict", "status " + who(key) + ": 409 Conflict (attempt " + std::to_string(attempt + 1) + "/" +
                            std::to_string(options_.max_attempts) + "): re-reading, retry in " +
                            std::to_string(wait.count()) + " ms");
    sleep_unless(stop, wait);
  }
  if (stop) return Result::Failed;
  ++stats_.gave_up;
  notice_("error", "status " + who(key) + ": still conflicting after " + std::to_string(options_.max_attempts) +
                       " attempts; retried at the next pass");
  return Result::Failed;
}

void StatusWriter::remember(const PolicyKey& key, const std::optional<NodeStatusEntry>& mine, Result r) {
  if (r == Result::Failed) {  // the next pass tries again, whatever written_ holds
    ++stats_.failed;
    unsettled_.insert(key);
    return;
  }
  unsettled_.erase(key);
  if (r == Result::NotFound) absent_.insert(key);
  else absent_.erase(key);
  if (mine) written_[key] = *mine;
  else written_.erase(key);
}

void StatusWriter::sweep(const std::map<PolicyKey, NodeStatusEntry>& desired, const std::atomic<bool>& stop) {
  ++stats_.sweeps;
  for (PolicyKind kind : {PolicyKind::Dra, PolicyKind::Node}) {
    HttpResult r = http_.get(policy_collection_path(kind), 60, &stop);
    json list = r.ok() ? json::parse(r.body, nullptr, false) : json();
    if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
      notice_("error", std::string("status sweep: list ") + policy_plural(kind) + ": " + describe_failure(r));
      continue;
    }
    std::set<std::string> listed;
    for (auto& item : list["items"]) {
      PolicyKey key{kind, metadata_name(item)};
      if (key.second.empty()) continue;
      listed.insert(key.second);
      auto d = desired.find(key);
      std::optional<NodeStatusEntry> mine = d == desired.end() ? std::nullopt : std::optional(d->second);
      remember(key, mine, write(key, mine, std::move(item), stop));
    }
    for (const auto& [key, entry] : desired)  // held by the daemon, not a CRD object
      if (key.first == kind && !listed.count(key.second)) remember(key, entry, Result::NotFound);
  }
}

void StatusWriter::run(const std::atomic<bool>& stop) {
  NodeCacheHandler handler(*this);
  std::thread nodes([&] {
    ListWatchTarget target{"nodes", "/api/v1/nodes", ""};
    list_watch(cfg_, target, options_.node_watch, handler, ListWatchCounters{}, stop);
  });
  auto next_sweep = std::chrono::steady_clock::now();
  bool daemon_down = false;
  while (!stop) {
    pb::ListIntentsResponse resp;
    grpc::Status st = daemon_.list_intents(&resp);
    if (!st.ok()) {
      if (!daemon_down) notice_("error", "status: ListIntents: " + std::to_string(st.error_code()) + " " + st.error_message());
      daemon_down = true;
    } else {
      daemon_down = false;
      auto desired = entries_from_intents(api::plain(resp), options_.node);
      bool due;
      {
        std::lock_guard<std::mutex> l(mu_);
        due = sweep_due_;
        sweep_due_ = false;
      }
      // Only the first node sweeps for a departed Node; the others prune as they write.
      if (std::chrono::steady_clock::now() >= next_sweep || (due && leader())) {
        sweep(desired, stop);
        next_sweep = std::chrono::steady_clock::now() + options_.resync;
      } else {
        std::set<PolicyKey> keys;
        for (const auto& [k, _] : desired) keys.insert(k);
        for (const auto& [k, _] : written_) keys.insert(k);
        keys.insert(unsettled_.begin(), unsettled_.end());
        for (const auto& k : keys) {
          if (stop) break;
          auto d = desired.find(k);
          auto w = written_.find(k);
          std::optional<NodeStatusEntry> mine = d == desired.end() ? std::nullopt : std::optional(d->second);
          const bool unsettled = unsettled_.count(k) > 0;
          if (!unsettled && mine && w != written_.end() && w->second == *mine) continue;  // already on the object
          if (!unsettled && !mine && w == written_.end()) continue;
          if (absent_.count(k) && mine) {  // no object to write on; remember the change only
            written_[k] = *mine;
            continue;
          }
          remember(k, mine, write(k, mine, std::nullopt, stop));
        }
      }
    }
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, options_.interval, [&] { return stop.load() || (sweep_due_ && nodes_synced_); });
  }
  nodes.join();
}

}  // namespace c2c::k8s
