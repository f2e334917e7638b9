// One Kubernetes list+watch loop, shared by the DRA observer and the policy watch: paginated LIST,
// then WATCH from the list's resourceVersion; 410 Gone or a broken watch -> relist, a clean end ->
// re-watch from the last resourceVersion (bookmarks advance it).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k8s/kube_config.hpp"

namespace c2c::k8s {

class ListWatchHandler {
 public:
  virtual ~ListWatchHandler() = default;
  // A complete list (every page); list_rv is the list's resourceVersion.
  virtual void on_list(std::vector<nlohmann::json> items, const std::string& list_rv, const std::string& source) = 0;
  // ADDED, MODIFIED or DELETED (bookmarks and errors are handled by the loop). False: unknown type.
  virtual bool on_event(const std::string& type, const nlohmann::json& object, const std::string& source) = 0;
  // "relist", "error" (see BindingListener::on_notice).
  virtual void on_notice(const std::string& kind, const std::string& message) = 0;
};

struct ListWatchTarget {
  std::string name;          // for messages: "resourceclaims"
  std::string path;          // "/apis/resource.k8s.io/v1/resourceclaims"
  std::string extra_query;   // appended to every request, e.g. "&fieldSelector=..."
};

struct ListWatchTiming {
  long watch_timeout_s = 300;
  long list_page_size = 500;
  int retry_backoff_ms = 500;
};

// Counters the caller owns (tests read them).
struct ListWatchCounters {
  std::atomic<int>* lists = nullptr;
  std::atomic<int>* watches = nullptr;
  std::atomic<int>* relists_after_gone = nullptr;
  std::atomic<int>* relists_after_break = nullptr;
};

// Blocks until `stop` is true.
void list_watch(const KubeConfig& cfg, const ListWatchTarget& target, const ListWatchTiming& timing,
                ListWatchHandler& handler, const ListWatchCounters& counters, const std::atomic<bool>& stop);

// metadata.resourceVersion of an object, empty when absent.
std::string object_resource_version(const nlohmann::json& obj);

}  // namespace c2c::k8s
