// The observer (src/k8s) against a REAL kube-apiserver and etcd (tests/integration/k8s_real_apiserver.py,
// binaries from tools/k8s-apiserver/build.sh; ctest label `realk8s`), authenticated as the daemon's
// service account, so every request is authorized by deploy/kubernetes/base/rbac.yaml alone.
// Objects are written as an admin the way the cluster writes them: claims created, then their
// status.allocation and reservedFor written through the status subresource (the scheduler's way);
// slices in all four node-selection forms; pods bound to nodes; Nodes.
// Covered: initial list (paginated) and watch; a watch expired by etcd compaction (410 -> relist);
// bookmarks advancing the resourceVersion the next watch starts from (seen in the API server's
// audit log); a restarted API server; the revision (highest resourceVersion) the feed uses as
// the claim generation; this node's Node labels through NodeWatch.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <curl/curl.h>
#include <gtest/gtest.h>

#include "k8s/kube_config.hpp"
#include "k8s/node_watch.hpp"
#include "k8s/observer.hpp"
#include "source_dir.hpp"

namespace c2c::k8s {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The harness in `serve` mode: one JSON line when ready, then one JSON answer per command line.
class RealApiServer {
 public:
  // Extra kube-apiserver flags go after the source dir.
  bool start(std::string* why, const std::vector<std::string>& apiserver_args = {}) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[1]);
      close(out[0]);
      std::string script = C2C_K8S_REAL_APISERVER, src = c2c::test::source_dir();
      std::vector<char*> argv = {const_cast<char*>("python3"), script.data(), const_cast<char*>("serve"), src.data()};
      std::vector<std::string> args = apiserver_args;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv("/usr/bin/python3", argv.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = fdopen(in[1], "w");
    from_ = fdopen(out[0], "r");
    info_ = read_line();
    if (!info_.is_object() || !info_.contains("server")) {
      *why = "the real API server did not start: " + info_.dump();
      return false;
    }
    return true;
  }
  ~RealApiServer() {
    if (to_) fclose(to_);  // EOF: the harness stops etcd and the API server and removes its directory
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
    if (from_) fclose(from_);
  }
  const json& info() const { return info_; }
  json command(const std::string& cmd) {
    fprintf(to_, "%s\n", cmd.c_str());
    fflush(to_);
    return read_line();
  }

  // One API request as the admin; returns (HTTP status, parsed body).
  std::pair<long, json> request(const std::string& method, const std::string& path, const json& body = nullptr,
                                const std::string& ctype = "application/json") {
    CURL* c = curl_easy_init();
    std::string url = info_["server"].get<std::string>() + path, data = body.is_null() ? "" : body.dump(), out;
    std::string ca = info_["ca_file"], auth = "Authorization: Bearer " + info_["admin_token"].get<std::string>();
    std::string ct = "Content-Type: " + ctype;
    curl_slist* h = curl_slist_append(nullptr, auth.c_str());
    h = curl_slist_append(h, ct.c_str());
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
    if (!body.is_null()) curl_easy_setopt(c, CURLOPT_POSTFIELDS, data.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_CAINFO, ca.c_str());
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* ud) {
      static_cast<std::string*>(ud)->append(p, s * n);
      return s * n;
    });
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return {status, json::parse(out, nullptr, false)};
  }
  json create(const std::string& path, const json& obj) {
    auto [code, out] = request("POST", path, obj);
    EXPECT_EQ(code, 201) << path << ": " << out.dump();
    return out;
  }
  // As the scheduler does: the allocation (and reservedFor) through the status subresource.
  json put_status(const std::string& path, json obj, const json& status) {
    obj["status"] = status;
    auto [code, out] = request("PUT", path + "/status", obj);
    EXPECT_EQ(code, 200) << path << ": " << out.dump();
    return out;
  }

 private:
  json read_line() {
    std::string line;
    int ch;
    while (from_ && (ch = fgetc(from_)) != EOF && ch != '\n') line.push_back(static_cast<char>(ch));
    return json::parse(line, nullptr, false);
  }
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  json info_;
};

class Recorder : public BindingListener {
 public:
  void on_bindings_changed(const std::vector<ClaimDeviceBinding>& added,
                           const std::vector<ClaimDeviceBinding>& removed) override {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& b : removed)
      if (set_.erase(b.key()) == 0) errors_.push_back("removed a binding that was not there: " + b.key());
    for (const auto& b : added)
      if (!set_.emplace(b.key(), b).second) errors_.push_back("added a binding twice: " + b.key());
    cv_.notify_all();
  }
  void on_notice(const std::string& kind, const std::string& message) override {
    std::lock_guard<std::mutex> l(mu_);
    notices_.push_back(kind + ": " + message);
  }
  void on_binding_state(const BindingState& s) override {
    std::lock_guard<std::mutex> l(mu_);
    revision_ = s.revision;
  }
  // claim name/device@pod name#numa nodes
  std::set<std::string> summary() {
    std::lock_guard<std::mutex> l(mu_);
    std::set<std::string> out;
    for (const auto& [_, b] : set_) {
      std::string numa;
      for (int n : b.numa_nodes) numa += (numa.empty() ? "" : ",") + std::to_string(n);
      out.insert(b.claim_name + "/" + b.device + "@" + b.pod_name + "#" + numa);
    }
    return out;
  }
  bool wait_for(const std::set<std::string>& want, std::chrono::seconds limit = 30s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (summary() == want) return true;
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait_for(l, 100ms);
    }
    return summary() == want;
  }
  uint64_t revision() {
    std::lock_guard<std::mutex> l(mu_);
    return revision_;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> l(mu_);
    return errors_;
  }
  std::string notices() {
    std::lock_guard<std::mutex> l(mu_);
    std::string s;
    for (const auto& n : notices_) s += n + "\n";
    return s;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, ClaimDeviceBinding> set_;
  std::vector<std::string> errors_, notices_;
  uint64_t revision_ = 0;
};

class LabelRecorder : public NodeLabelSink {
 public:
  void node_labels(const NodeLabels& l) override {
    std::lock_guard<std::mutex> g(mu_);
    last_ = l;
  }
  void on_node_notice(const std::string&, const std::string&) override {}
  NodeLabels last() {
    std::lock_guard<std::mutex> g(mu_);
    return last_;
  }

 private:
  std::mutex mu_;
  NodeLabels last_;
};

const std::string kNs = "dra-real";
const std::string kClaims = "/apis/resource.k8s.io/v1/namespaces/" + kNs + "/resourceclaims";
const std::string kPods = "/api/v1/namespaces/" + kNs + "/pods";
const std::string kSlices = "/apis/resource.k8s.io/v1/resourceslices";

json device(const std::string& name, int numa) {
  return {{"name", name}, {"attributes", {{"numa", {{"int", numa}}}}}};
}

json slice(const std::string& pool, const json& selection, json devices) {
  json spec = {{"driver", "gpu.example.com"},
               {"pool", {{"name", pool}, {"generation", 1}, {"resourceSliceCount", 1}}},
               {"devices", std::move(devices)}};
  spec.update(selection);
  return {{"apiVersion", "resource.k8s.io/v1"}, {"kind", "ResourceSlice"}, {"metadata", {{"name", pool}}}, {"spec", spec}};
}

json node_selector_for(const std::string& node) {
  return {{"nodeSelectorTerms", {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}}};
}

TEST(K8sRealServer, ObserverListsWatchesAndSurvivesExpiryBookmarksAndRestart) {
  RealApiServer api;
  std::string why;
  // resourceclaims without the watch cache: their watches are served by etcd, so an etcd
  // compaction expires them (410) as it does behind any API server once the cache's window is
  // passed; pods, slices and nodes keep the cache (and its bookmarks).
  // perDeviceNodeSelection is behind the DRAPartitionableDevices feature gate, off by default in
  // 1.34: without it the API server drops the field and then refuses the slice.
  if (!api.start(&why, {"--watch-cache-sizes=resourceclaims.resource.k8s.io#0",
                        "--feature-gates=DRAPartitionableDevices=true"})) {
    if (why.find("not built") != std::string::npos) GTEST_SKIP() << why;
    FAIL() << why;
  }
  std::cerr << "real API server up in " << api.info()["startup_s"] << " s\n";

  api.create("/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNs}}}});
  api.create("/api/v1/namespaces/" + kNs + "/serviceaccounts",
             {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "default"}}}});
  for (const char* n : {"node-a", "node-b"})
    api.create("/api/v1/nodes", {{"apiVersion", "v1"}, {"kind", "Node"},
                                 {"metadata", {{"name", n}, {"labels", {{"zone", std::string(n) == "node-a" ? "a" : "b"}}}}}});

  // The four node-selection forms, plus one slice of another node (not this node's inventory).
  api.create(kSlices, slice("pool-name", {{"nodeName", "node-a"}}, {device("d-name", 0)}));
  api.create(kSlices, slice("pool-selector", {{"nodeSelector", {{"nodeSelectorTerms", {{{"matchExpressions",
                          {{{"key", "zone"}, {"operator", "In"}, {"values", {"a"}}}}}}}}}}}, {device("d-sel", 1)}));
  api.create(kSlices, slice("pool-all", {{"allNodes", true}}, {device("d-all", 2)}));
  json per = device("d-per", 3);
  per["nodeName"] = "node-a";
  api.create(kSlices, slice("pool-perdev", {{"perDeviceNodeSelection", true}}, {per}));
  api.create(kSlices, slice("pool-other", {{"nodeName", "node-b"}}, {device("d-other", 4)}));
  {
    auto [code, got] = api.request("GET", kSlices + "/pool-perdev");
    ASSERT_EQ(code, 200);
    ASSERT_TRUE(got["spec"].value("perDeviceNodeSelection", false))
        << "the API server dropped perDeviceNodeSelection (feature gate DRAPartitionableDevices off?): " << got.dump();
  }

  std::map<std::string, std::string> pod_uid;
  auto make_pod = [&](const std::string& name, const std::string& node) {
    json p = api.create(kPods, {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}},
                                {"spec", {{"nodeName", node}, {"containers", {{{"name", "c"}, {"image", "example.invalid/c:1"}}}}}}});
    pod_uid[name] = p["metadata"]["uid"];
  };
  for (const char* p : {"p0", "p1", "p2", "p3", "p4"}) make_pod(p, "node-a");
  make_pod("p-b", "node-b");

  auto allocate = [&](const std::string& claim, const std::string& pool, const std::string& dev,
                      const std::string& pod, const std::string& node) {
    json c = api.create(kClaims, {{"apiVersion", "resource.k8s.io/v1"}, {"kind", "ResourceClaim"},
                                  {"metadata", {{"name", claim}}},
                                  {"spec", {{"devices", {{"requests", {{{"name", "gpu"},
                                      {"exactly", {{"deviceClassName", "gpu.example.com"}}}}}}}}}}});
    return api.put_status(kClaims + "/" + claim, c,
                          {{"allocation", {{"devices", {{"results", {{{"request", "gpu"}, {"driver", "gpu.example.com"},
                                                                     {"pool", pool}, {"device", dev}}}}}},
                                           {"nodeSelector", node_selector_for(node)}}},
                           {"reservedFor", {{{"resource", "pods"}, {"name", pod}, {"uid", pod_uid[pod]}}}}});
  };
  allocate("c-name", "pool-name", "d-name", "p0", "node-a");
  allocate("c-sel", "pool-selector", "d-sel", "p1", "node-a");
  json c_all = allocate("c-all", "pool-all", "d-all", "p2", "node-a");
  allocate("c-per", "pool-perdev", "d-per", "p3", "node-a");
  allocate("c-b", "pool-other", "d-other", "p-b", "node-b");

  std::string err;
  auto cfg = kubeconfig_from_file(api.info()["daemon_kubeconfig"], "", &err);
  ASSERT_TRUE(cfg) << err;
  Recorder rec;
  ObserverOptions opt;
  opt.node = "node-a";
  opt.watch_timeout_s = 4;  // short watches: bookmarks (~2 s before the end) and re-watches happen here
  opt.list_page_size = 2;   // several pages per list (limit/continue)
  opt.retry_backoff_ms = 200;
  Observer observer(*cfg, opt, rec);
  LabelRecorder labels;
  ListWatchTiming timing{4, 500, 200};
  NodeWatch node_watch(*cfg, timing, "node-a", labels);
  std::atomic<bool> stop{false};
  std::thread runner([&] { observer.run(stop); });
  std::thread node_runner([&] { node_watch.run(stop); });
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread &a, &b;
    ~Joiner() {
      stop = true;
      a.join();
      b.join();
    }
  } joiner{stop, runner, node_runner};

  // 1. The initial lists: every form's device gives its topology; node-b's claim is not here.
  std::set<std::string> want = {"c-name/d-name@p0#0", "c-sel/d-sel@p1#1", "c-all/d-all@p2#2", "c-per/d-per@p3#3"};
  ASSERT_TRUE(rec.wait_for(want)) << "notices:\n" << rec.notices();
  EXPECT_GE(observer.stats().lists[0].load(), 3) << "5 claims in pages of 2";
  uint64_t rev = rec.revision();
  EXPECT_GE(rev, std::stoull(c_all["metadata"]["resourceVersion"].get<std::string>()));
  for (int i = 0; i < 50 && labels.last().empty(); ++i) std::this_thread::sleep_for(100ms);
  EXPECT_EQ(labels.last(), (NodeLabels{{"zone", "a"}}));

  // 2. Watch events: a deallocation (the scheduler clears reservedFor and allocation) and a new claim.
  {
    auto [code, cur] = api.request("GET", kClaims + "/c-all");
    cur["status"] = json::object();
    auto [c2, out] = api.request("PUT", kClaims + "/c-all/status", cur);
    ASSERT_EQ(c2, 200) << out.dump();
  }
  allocate("c-new", "pool-all", "d-all", "p4", "node-a");
  want = {"c-name/d-name@p0#0", "c-sel/d-sel@p1#1", "c-new/d-all@p4#2", "c-per/d-per@p3#3"};
  ASSERT_TRUE(rec.wait_for(want)) << rec.notices();
  EXPECT_GT(rec.revision(), rev) << "the revision grows with every write";
  {
    auto [code, n] = api.request("PATCH", "/api/v1/nodes/node-a", {{"metadata", {{"labels", {{"zone", "a2"}}}}}},
                                 "application/merge-patch+json");
    ASSERT_EQ(code, 200);
  }
  for (int i = 0; i < 100 && labels.last() != NodeLabels{{"zone", "a2"}}; ++i) std::this_thread::sleep_for(100ms);
  EXPECT_EQ(labels.last(), (NodeLabels{{"zone", "a2"}})) << "NodeWatch follows the Node's labels";

  // 3. Bookmarks: writes elsewhere in the cluster advance etcd's revision while the pods stay
  // quiet; pods (watch cache on) get a bookmark ~2 s before their watch ends, and the next pods
  // watch must start from that bookmark's resourceVersion, above every pod's.
  uint64_t pods_max_rv = 0;
  {
    auto [code, l] = api.request("GET", "/api/v1/pods");
    for (const auto& p : l["items"]) pods_max_rv = std::max<uint64_t>(pods_max_rv, std::stoull(p["metadata"]["resourceVersion"].get<std::string>()));
  }
  for (int i = 0; i < 3; ++i)
    api.create("/api/v1/namespaces/" + kNs + "/configmaps",
               {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm" + std::to_string(i)}}}});
  uint64_t after_writes = api.command("revision")["revision"];
  // The pods watch cache learns that etcd moved on only from a progress notification, which a
  // consistent list (no resourceVersion) makes it ask for; a busy cluster has them all the time.
  api.request("GET", "/api/v1/pods");
  int relists_before = observer.stats().relists_after_break.load() + observer.stats().relists_after_gone.load();
  std::this_thread::sleep_for(9s);  // two pod watches of 4 s: each ends with a bookmark, then re-watch
  EXPECT_EQ(observer.stats().relists_after_break.load() + observer.stats().relists_after_gone.load(), relists_before);
  {
    std::ifstream audit(api.info()["audit_log"].get<std::string>());
    std::string line;
    uint64_t best = 0;
    while (std::getline(audit, line)) {
      json ev = json::parse(line, nullptr, false);
      if (!ev.is_object() || ev.value("verb", "") != "watch") continue;
      std::string uri = ev.value("requestURI", "");
      if (uri.rfind("/api/v1/pods?", 0) != 0 || ev["user"].value("username", "").find("claim2cored") == std::string::npos)
        continue;
      auto at = uri.find("resourceVersion=");
      if (at != std::string::npos) best = std::max<uint64_t>(best, std::stoull(uri.substr(at + 16)));
    }
    EXPECT_GE(best, after_writes) << "a pods watch restarted from a bookmark's resourceVersion (pods' newest: "
                                  << pods_max_rv << ", etcd after the other writes: " << after_writes << ")";
  }

  // 4. Expiry: the claims watch runs on etcd; more writes elsewhere, then etcd compacts its history
  // past the claims watch's resourceVersion. The next claims watch gets 410 and the observer
  // relists without losing or duplicating a binding; a change made meanwhile is seen.
  for (int i = 3; i < 6; ++i)
    api.create("/api/v1/namespaces/" + kNs + "/configmaps",
               {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm" + std::to_string(i)}}}});
  json compacted = api.command("compact");
  ASSERT_TRUE(compacted.value("ok", false)) << compacted.dump();
  for (int i = 0; i < 150 && observer.stats().relists_after_gone.load() == 0; ++i) std::this_thread::sleep_for(100ms);
  EXPECT_GE(observer.stats().relists_after_gone.load(), 1) << rec.notices();
  EXPECT_NE(rec.notices().find("410 Gone"), std::string::npos) << rec.notices();
  ASSERT_TRUE(rec.wait_for(want)) << rec.notices();

  // 5. A restarted API server: watches break, lists fail until it is back, then everything relists;
  // a claim written after the restart arrives; the revision is at least etcd's before the restart.
  uint64_t before_restart = api.command("revision")["revision"];
  json restarted = api.command("restart");
  ASSERT_TRUE(restarted.value("ok", false)) << restarted.dump();
  std::cerr << "API server restarted in " << restarted["seconds"] << " s\n";
  allocate("c-after", "pool-name", "d-name", "p0", "node-a");
  want.insert("c-after/d-name@p0#0");
  ASSERT_TRUE(rec.wait_for(want, 40s)) << rec.notices();
  EXPECT_GE(observer.stats().relists_after_break.load(), 1) << rec.notices();
  EXPECT_GE(rec.revision(), before_restart);
  EXPECT_TRUE(rec.errors().empty()) << rec.errors().front();
}

}  // namespace
}  // namespace c2c::k8s
