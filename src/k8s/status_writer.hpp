// The feed's status writer: this node's entry in status.nodes[] of every policy CRD object its
// daemon has an intent for (ListIntents over the node API), written with a JSON merge patch on the
// /status subresource that carries the resourceVersion it read. A 409 Conflict (another node wrote
// in between) re-reads and retries, bounded, with doubling jittered backoff; other nodes' entries
// are carried over untouched. RBAC: patch on */status only (deploy/kubernetes/base/rbac.yaml).
//
// Stale entries (a node that left): each writer drops, in any patch it writes, the entries of
// nodes that are absent from its Node list+watch cache AND answer 404 to a GET of the Node made
// after the object was read. The GET is what keeps this race-free: a node that joined after the
// cache was filled exists at GET time and keeps its entry; a node that answers 404 after its entry
// was written has left (if it comes back, its own feed writes it again). The node whose name
// sorts first in the cache sweeps every object when a Node disappears, so an entry is removed
// even where no node has anything new to write; every writer also sweeps every --status-resync.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "k8s/feed_sender.hpp"
#include "k8s/http_client.hpp"
#include "k8s/list_watch.hpp"
#include "k8s/policy_status.hpp"
#include "k8s/policy_watch.hpp"

namespace c2c::k8s {

struct StatusWriterOptions {
  std::string node;                                // this node (its entry's key)
  std::chrono::milliseconds interval{2000};        // how often the daemon's intents are read
  std::chrono::milliseconds resync{60000};         // every writer re-reads every object this often
  int max_attempts = 5;                            // per write, 409s included
  std::chrono::milliseconds conflict_backoff{50};  // first wait after a 409, doubled per attempt
  ListWatchTiming node_watch;                      // the Node list+watch
  long request_timeout_s = 30;                     // each GET and PATCH of an object
};

struct StatusWriterStats {
  std::atomic<int> writes{0};     // status patches answered 200
  std::atomic<int> conflicts{0};  // 409s (each re-read and retried)
  std::atomic<int> gave_up{0};    // writes that used every attempt (retried at the next pass)
  std::atomic<int> failed{0};     // writes that failed or gave up (each retried at the next pass)
  std::atomic<int> pruned{0};     // entries of departed nodes removed
  std::atomic<int> sweeps{0};
};

class StatusWriter {
 public:
  using Notice = std::function<void(const std::string& kind, const std::string& message)>;
  StatusWriter(KubeConfig cfg, StatusWriterOptions options, FeedTransport& daemon, Notice notice);
  void run(const std::atomic<bool>& stop);  // blocks until stop: the Node watch and the write loop
  const StatusWriterStats& stats() const { return stats_; }

 private:
  enum class Result { Written, Unchanged, NotFound, Failed };
  friend class NodeCacheHandler;

  Result write(const PolicyKey& key, const std::optional<NodeStatusEntry>& mine, std::optional<nlohmann::json> read,
               const std::atomic<bool>& stop);
  std::set<std::string> confirmed_gone(const nlohmann::json& status);
  void sweep(const std::map<PolicyKey, NodeStatusEntry>& desired, const std::atomic<bool>& stop);
  void remember(const PolicyKey& key, const std::optional<NodeStatusEntry>& mine, Result r);
  bool leader() const;
  void node_list(const std::set<std::string>& names);
  void node_event(const std::string& type, const std::string& name);

  KubeConfig cfg_;
  StatusWriterOptions options_;
  FeedTransport& daemon_;
  Notice notice_;
  HttpClient http_;
  StatusWriterStats stats_;

  mutable std::mutex mu_;  // the Node cache (the watch thread) and the wake-up
  std::condition_variable cv_;
  std::set<std::string> nodes_;
  bool nodes_synced_ = false;
  bool sweep_due_ = false;

  // The write loop's own view (one thread): what this node's entry is on each object.
  std::map<PolicyKey, NodeStatusEntry> written_;
  std::set<PolicyKey> absent_;  // not CRD objects (a policy applied by hand): nothing to write on
  // Objects whose last write failed or gave up, in a pass or in a sweep: written again at the next
  // pass whatever written_ says (a sweep's write can fail where this node's entry is unchanged,
  // e.g. when it was removed by someone else or a departed node's entry is pruned; without this
  // it waited for the next resync).
  std::set<PolicyKey> unsettled_;
};

}  // namespace c2c::k8s
