// The observer against a fake API server (tests/integration/k8s_fake_apiserver.py, loopback
// only) serving the real DRA fixtures: initial sync, watch events, a 410 Gone with changes made
// while the watch was frozen, a cut connection, a malformed object. The listener checks that no
// binding is ever added twice or removed while absent, and the final set is asserted exactly.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <curl/curl.h>
#include <gtest/gtest.h>

#include "k8s/decode.hpp"
#include "codec/yaml_json.hpp"
#include "k8s/http_client.hpp"
#include "k8s/observer.hpp"
#include "k8s_fixture_path.hpp"

namespace c2c::k8s {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class FakeApiServer {
 public:
  bool start(std::string* why, std::vector<std::string> args = {}) {
    if (access("/usr/bin/python3", X_OK) != 0) {
      *why = "/usr/bin/python3 is missing";
      return false;
    }
    int fds[2];
    if (pipe(fds) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      std::vector<char*> argv = {const_cast<char*>("python3"), const_cast<char*>(C2C_K8S_FAKE_APISERVER)};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv("/usr/bin/python3", argv.data());
      _exit(127);
    }
    close(fds[1]);
    std::string line;
    char c;
    while (read(fds[0], &c, 1) == 1 && c != '\n') line.push_back(c);
    close(fds[0]);
    if (line.empty()) {
      *why = "fake API server did not start";
      return false;
    }
    port_ = std::stoi(line);
    tls_ = std::find(args.begin(), args.end(), "--tls") != args.end();
    return true;
  }
  ~FakeApiServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string url() const { return (tls_ ? "https" : "http") + std::string("://127.0.0.1:") + std::to_string(port_); }

  json post(const std::string& op, const json& body) const {
    CURL* c = curl_easy_init();
    std::string u = url() + "/_control/" + op, data = body.dump(), out;
    curl_easy_setopt(c, CURLOPT_URL, u.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, data.c_str());
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* ud) {
      static_cast<std::string*>(ud)->append(p, s * n);
      return s * n;
    });
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);  // the control channel only
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    EXPECT_EQ(rc, CURLE_OK);
    EXPECT_EQ(status, 200) << op << ": " << out;
    return json::parse(out, nullptr, false);
  }
  void apply(const std::string& resource, const json& obj) const { post("apply", {{"resource", resource}, {"object", obj}}); }
  void remove(const std::string& resource, const std::string& ns, const std::string& name) const {
    post("delete", {{"resource", resource}, {"namespace", ns}, {"name", name}});
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  bool tls_ = false;
};

// Keeps the set the observer reported and flags impossible diffs.
class RecordingListener : public BindingListener {
 public:
  void on_bindings_changed(const std::vector<ClaimDeviceBinding>& added,
                           const std::vector<ClaimDeviceBinding>& removed) override {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& b : removed) {
      auto it = set_.find(b.key());
      if (it == set_.end() || !(it->second == b)) errors_.push_back("removed a binding that was not there: " + b.key());
      else set_.erase(it);
    }
    for (const auto& b : added)
      if (!set_.emplace(b.key(), b).second) errors_.push_back("added a binding twice: " + b.key());
    ++changes_;
    cv_.notify_all();
  }
  void on_notice(const std::string& kind, const std::string& message) override {
    std::lock_guard<std::mutex> l(mu_);
    notices_.push_back(kind + ": " + message);
    cv_.notify_all();
  }
  // Claim UID + device of every binding, sorted.
  std::set<std::string> summary() {
    std::lock_guard<std::mutex> l(mu_);
    std::set<std::string> s;
    for (const auto& [_, b] : set_) s.insert(b.claim_uid + "/" + b.device + "@" + b.pod_uid);
    return s;
  }
  bool wait_for(const std::set<std::string>& want, std::chrono::seconds limit = 20s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (summary() == want) return true;
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait_for(l, 100ms);
    }
    return summary() == want;
  }
  bool wait_notice(const std::string& needle, std::chrono::seconds limit = 20s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    std::unique_lock<std::mutex> l(mu_);
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& n : notices_)
        if (n.find(needle) != std::string::npos) return true;
      cv_.wait_for(l, 100ms);
    }
    return false;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> l(mu_);
    return errors_;
  }
  ClaimDeviceBinding get(const std::string& claim_uid) {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [_, b] : set_)
      if (b.claim_uid == claim_uid) return b;
    return {};
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, ClaimDeviceBinding> set_;
  std::vector<std::string> errors_, notices_;
  int changes_ = 0;
};

json load(const std::filesystem::path& p, size_t doc = 0) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<json> docs;
  for (auto& d : codec::parse_documents(ss.str()))
    if (!d.is_null()) docs.push_back(d);
  return docs.at(doc);
}

json gpu_claim(const std::string& name, const std::string& uid, const std::string& device, const std::string& pod_uid) {
  return json::parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":")" + name + R"(","namespace":"dra-tutorial","uid":")" + uid + R"("},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"kind-worker","device":")" +
                     device + R"("}]},
      "nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["kind-worker"]}]}]}},
      "reservedFor":[{"resource":"pods","name":"p","uid":")" + pod_uid + R"("}]}})");
}

json pod_on(const std::string& uid, const std::string& node) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"},
          {"metadata", {{"name", uid}, {"namespace", "dra-tutorial"}, {"uid", uid}}},
          {"spec", {{"nodeName", node}, {"containers", {{{"name", "c"}}}}}}};
}

TEST(K8sObserver, SurvivesGoneAndCutConnectionsWithoutLosingOrDuplicatingBindings) {
  C2C_REQUIRE_FIXTURES(dir);
  FakeApiServer server;
  std::string why;
  if (!server.start(&why)) GTEST_SKIP() << why;

  // Real objects: the tutorial's allocated claim and its pod (given the uid and node the API
  // server and scheduler would have set), the example driver's slices, the CPU driver's claim.
  const std::string tutorial_uid = "d3e48dbf-40da-47c3-a7b9-f7d54d1051c3";
  const std::string pod_uid = "c4dadf20-392a-474d-a47b-ab82080c8bd7";
  server.apply("resourceclaims", load(dir / "resourceclaim-v1-allocated-reserved-k8s-tutorial.yaml"));
  server.apply("resourceclaims", load(dir / "resourceclaim-v1-allocated-consumedcapacity-opaque-cpuset-dra-driver-cpu.yaml"));
  const json gpu_slices = load(dir / "resourceslice-v1-nodename-dra-example-driver-gpu-list.yaml");
  ASSERT_EQ(gpu_slices["items"].size(), 1u);
  for (const auto& item : gpu_slices["items"]) server.apply("resourceslices", item);
  server.apply("resourceslices", load(dir / "resourceslice-v1-nodename-dra-driver-cpu-grouped-numa.yaml"));
  json pod = load(dir / "k8s-docs-v1-deviceclass-claim-pod-tutorial.yaml", 2);
  pod["metadata"]["uid"] = pod_uid;
  pod["spec"]["nodeName"] = "kind-worker";
  server.apply("pods", pod);
  json elsewhere = pod;
  elsewhere["metadata"]["name"] = "pod-elsewhere";
  elsewhere["metadata"]["uid"] = "0000-elsewhere";
  elsewhere["spec"]["nodeName"] = "other-node";
  server.apply("pods", elsewhere);
  for (const char* p : {"pod-two", "pod-three", "pod-four"}) server.apply("pods", pod_on(p, "kind-worker"));

  RecordingListener listener;
  KubeConfig cfg;
  cfg.server = server.url();
  ObserverOptions opt;
  opt.node = "kind-worker";
  opt.watch_timeout_s = 2;  // short watches: clean ends and re-watches happen during the test
  opt.list_page_size = 1;   // the two slices come in two pages (limit/continue)
  opt.retry_backoff_ms = 100;
  Observer observer(cfg, opt, listener);
  std::atomic<bool> stop{false};
  std::thread runner([&] { observer.run(stop); });
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Joiner() {
      stop = true;
      t.join();
    }
  } joiner{stop, runner};

  // 1. Initial sync.
  ASSERT_TRUE(listener.wait_for({tutorial_uid + "/gpu-0@" + pod_uid, "claim-uid-123456/cpudevmachine@"}));
  ClaimDeviceBinding t = listener.get(tutorial_uid);
  EXPECT_EQ(t.node_name, "kind-worker");
  EXPECT_EQ(t.pod_name, "pod0");
  EXPECT_EQ(t.pool, "kind-worker");
  EXPECT_EQ(listener.get("claim-uid-123456").cpus, CpuSet::range(2, 5));
  EXPECT_GE(observer.stats().lists[1].load(), 2);  // two slices, one per page

  // 2. Watch events. A claim usable everywhere but reserved for a pod on another node gives no
  // binding here.
  json five = gpu_claim("five", "uid-five", "gpu-5", "0000-elsewhere");
  five["status"]["allocation"].erase("nodeSelector");
  server.apply("resourceclaims", five);
  server.apply("resourceclaims", gpu_claim("two", "uid-two", "gpu-1", "pod-two"));
  ASSERT_TRUE(listener.wait_for(
      {tutorial_uid + "/gpu-0@" + pod_uid, "claim-uid-123456/cpudevmachine@", "uid-two/gpu-1@pod-two"}));

  // 3. Changes while the watch is frozen, then 410 Gone: only a relist can see them.
  server.post("freeze", json::object());
  server.remove("resourceclaims", "dra-tutorial", "some-gpu");
  server.apply("resourceclaims", gpu_claim("three", "uid-three", "gpu-3", "pod-three"));
  server.post("expire", json::object());
  ASSERT_TRUE(listener.wait_for({"claim-uid-123456/cpudevmachine@", "uid-two/gpu-1@pod-two", "uid-three/gpu-3@pod-three"}));
  EXPECT_GE(observer.stats().relists_after_gone.load(), 1);

  // 4. Changes while frozen, then the connection is cut.
  server.post("freeze", json::object());
  server.apply("resourceclaims", gpu_claim("two", "uid-two", "gpu-2", "pod-two"));
  server.remove("resourceclaims", "dra-tutorial", "three");
  server.post("cut", json::object());
  ASSERT_TRUE(listener.wait_for({"claim-uid-123456/cpudevmachine@", "uid-two/gpu-2@pod-two"}));
  EXPECT_GE(observer.stats().relists_after_break.load(), 1);

  // 5. A malformed object is refused by name and field; later events are still processed.
  json bad = gpu_claim("bad", "uid-bad", "gpu-5", "pod-bad");
  bad["spec"]["devices"]["requests"][0]["exactly"]["count"] = "four";
  server.apply("resourceclaims", bad);
  server.apply("resourceclaims", gpu_claim("four", "uid-four", "gpu-4", "pod-four"));
  ASSERT_TRUE(listener.wait_for({"claim-uid-123456/cpudevmachine@", "uid-two/gpu-2@pod-two", "uid-four/gpu-4@pod-four"}));
  EXPECT_TRUE(listener.wait_notice("ResourceClaim dra-tutorial/bad: field spec.devices.requests[0].exactly.count"));

  // 6. Quiet period across several watch timeouts (clean re-watches): nothing changes.
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(listener.summary(), (std::set<std::string>{"claim-uid-123456/cpudevmachine@", "uid-two/gpu-2@pod-two",
                                                        "uid-four/gpu-4@pod-four"}));
  EXPECT_GE(observer.stats().watches[0].load(), 3);
  EXPECT_TRUE(listener.errors().empty()) << listener.errors().front();
}

// TLS with a kubeconfig (CA data + bearer token), as against a real API server.
TEST(K8sObserver, KubeconfigWithCaDataAndTokenOverTls) {
  C2C_REQUIRE_FIXTURES(dir);
  if (access("/usr/bin/openssl", X_OK) != 0) GTEST_SKIP() << "/usr/bin/openssl is missing (needed to make a test certificate)";
  char tmpl[] = "/tmp/c2c-k8s-tls-XXXXXX";
  std::filesystem::path tmp = mkdtemp(tmpl);
  std::string cert = (tmp / "cert.pem").string(), key = (tmp / "key.pem").string();
  std::string cmd = "/usr/bin/openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                    "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  FakeApiServer server;
  std::string why;
  if (!server.start(&why, {"--tls", cert, key, "--token", "s3cret"})) GTEST_SKIP() << why;
  server.apply("resourceclaims", load(dir / "resourceclaim-v1-allocated-reserved-k8s-tutorial.yaml"));
  server.apply("pods", pod_on("c4dadf20-392a-474d-a47b-ab82080c8bd7", "kind-worker"));

  std::ifstream in(cert);
  std::stringstream pem;
  pem << in.rdbuf();
  // certificate-authority-data is base64 of the PEM.
  std::string b64;
  {
    static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string s = pem.str();
    size_t i = 0;
    for (; i + 2 < s.size(); i += 3) {
      uint32_t v = (uint32_t(uint8_t(s[i])) << 16) | (uint32_t(uint8_t(s[i + 1])) << 8) | uint8_t(s[i + 2]);
      for (int k = 3; k >= 0; --k) b64.push_back(tbl[(v >> (6 * k)) & 63]);
    }
    if (i < s.size()) {
      uint32_t v = uint32_t(uint8_t(s[i])) << 16;
      if (i + 1 < s.size()) v |= uint32_t(uint8_t(s[i + 1])) << 8;
      b64.push_back(tbl[(v >> 18) & 63]);
      b64.push_back(tbl[(v >> 12) & 63]);
      b64.push_back(i + 1 < s.size() ? tbl[(v >> 6) & 63] : '=');
      b64.push_back('=');
    }
  }
  auto kubeconfig = [&](const std::string& token) {
    std::string path = (tmp / ("config-" + token)).string();
    std::ofstream(path) << "current-context: t\nclusters: [{name: c, cluster: {server: \"" << server.url()
                        << "\", certificate-authority-data: " << b64 << "}}]\n"
                        << "contexts: [{name: t, context: {cluster: c, user: u}}]\n"
                        << "users: [{name: u, user: {token: " << token << "}}]\n";
    std::string err;
    auto cfg = kubeconfig_from_file(path, "", &err);
    EXPECT_TRUE(cfg) << err;
    return cfg.value_or(KubeConfig{});
  };
  ObserverOptions opt;
  opt.node = "kind-worker";
  opt.retry_backoff_ms = 100;

  RecordingListener good;
  {
    Observer observer(kubeconfig("s3cret"), opt, good);
    std::atomic<bool> stop{false};
    std::thread runner([&] { observer.run(stop); });
    bool synced = good.wait_for({"d3e48dbf-40da-47c3-a7b9-f7d54d1051c3/gpu-0@c4dadf20-392a-474d-a47b-ab82080c8bd7"});
    stop = true;
    runner.join();
    EXPECT_TRUE(synced);
  }
  RecordingListener bad;
  {
    Observer observer(kubeconfig("wrong"), opt, bad);
    std::atomic<bool> stop{false};
    std::thread runner([&] { observer.run(stop); });
    bool refused = bad.wait_notice("HTTP 401", 10s);
    stop = true;
    runner.join();
    EXPECT_TRUE(refused);
    EXPECT_TRUE(bad.summary().empty());
  }
  std::filesystem::remove_all(tmp);
}

TEST(K8sObserver, UnreachableServerIsRetriedAndReported) {
  RecordingListener listener;
  KubeConfig cfg;
  cfg.server = "http://127.0.0.1:1";  // nothing listens on port 1
  ObserverOptions opt;
  opt.node = "n";
  opt.retry_backoff_ms = 50;
  Observer observer(cfg, opt, listener);
  std::atomic<bool> stop{false};
  std::thread runner([&] { observer.run(stop); });
  bool reported = listener.wait_notice("list resourceclaims", 10s);
  stop = true;
  runner.join();
  EXPECT_TRUE(reported);
  EXPECT_GE(observer.stats().lists[0].load(), 1);
  EXPECT_TRUE(listener.summary().empty());
}

}  // namespace
}  // namespace c2c::k8s
