// The status writer (src/k8s/status_writer.*) against a fake API server in this process
// (cpp-httplib): objects with resourceVersions and a merge-patched /status, a Node list+watch whose
// watch can deliver a DELETED event, and faults armed per test: 409 Conflict, a response slower
// than the writer's request timeout, and a refusal (HTTP 500), each N times in a row.
//
// Issue 45: a write that gives up (every attempt used) or fails must be written again at the next
// pass, never only at the next resync. A sweep (every writer's resync, or the first node's sweep
// when a Node is deleted) writes objects where this node's entry is unchanged (someone removed it,
// or a departed node's entry goes): when that write failed, the next pass skipped the object
// (written_ said the entry was there) until the next resync, 60 s by default.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "k8s/status_writer.hpp"

namespace c2c::k8s {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kNode = "a-node";  // sorts first: the sweeping node
constexpr const char* kPrefix = "/apis/scheduling.gthulhu.io/v1alpha1/nodeschedulingpolicies";

enum class Fault { None, Conflict, SlowerThanTimeout, Refuse };

class FakeApiServer {
 public:
  FakeApiServer() {
    objects_["engine"] = {{"apiVersion", "scheduling.gthulhu.io/v1alpha1"},
                          {"kind", "NodeSchedulingPolicy"},
                          {"metadata", {{"name", "engine"}, {"generation", 3}, {"resourceVersion", "1"}}},
                          {"spec", json::object()}};
    srv_.Get("/api/v1/nodes", [this](const httplib::Request& q, httplib::Response& r) { nodes(q, r); });
    srv_.Get(R"(/api/v1/nodes/([^/]+))", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard<std::mutex> l(mu_);
      const bool known = node_names_.count(q.matches[1].str()) > 0;
      r.status = known ? 200 : 404;
      r.set_content(known ? json{{"metadata", {{"name", q.matches[1].str()}}}}.dump() : "{}", "application/json");
    });
    srv_.Get(kPrefix, [this](const httplib::Request&, httplib::Response& r) {
      std::lock_guard<std::mutex> l(mu_);
      json list = {{"metadata", {{"resourceVersion", std::to_string(rv_)}}}, {"items", json::array()}};
      for (const auto& [name, obj] : objects_) list["items"].push_back(obj);
      r.set_content(list.dump(), "application/json");
    });
    srv_.Get(std::string(kPrefix) + "/([^/]+)", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard<std::mutex> l(mu_);
      auto it = objects_.find(q.matches[1].str());
      r.status = it == objects_.end() ? 404 : 200;
      r.set_content(it == objects_.end() ? "{}" : it->second.dump(), "application/json");
    });
    srv_.Patch(std::string(kPrefix) + "/([^/]+)/status", [this](const httplib::Request& q, httplib::Response& r) {
      patch(q.matches[1].str(), q.body, r);
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    // Bound and listening already: a connection made before the accept loop runs waits in the queue.
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
  }
  ~FakeApiServer() {
    srv_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // The next `n` PATCHes of /status meet `f`.
  void arm(Fault f, int n) {
    std::lock_guard<std::mutex> l(mu_);
    fault_ = f;
    faults_left_ = n;
  }
  int faults_left() {
    std::lock_guard<std::mutex> l(mu_);
    return faults_left_;
  }
  // Someone else (a person, another tool) removes this node's entry from the object.
  void remove_entry(const std::string& node) {
    std::lock_guard<std::mutex> l(mu_);
    json& st = objects_["engine"]["status"];
    json kept = json::array();
    for (const auto& e : st["nodes"])
      if (e.value("node", "") != node) kept.push_back(e);
    st["nodes"] = kept;
    bump("engine");
  }
  // A Node leaves: the watch delivers DELETED (the first node then sweeps every object).
  void delete_node(const std::string& name) {
    std::lock_guard<std::mutex> l(mu_);
    node_names_.erase(name);
    watch_lines_.push_back(json{{"type", "DELETED"}, {"object", {{"metadata", {{"name", name}, {"resourceVersion", std::to_string(++rv_)}}}}}}.dump());
  }
  // This node's entry on the object, if any.
  std::optional<json> entry(const std::string& node) {
    std::lock_guard<std::mutex> l(mu_);
    const json& obj = objects_["engine"];
    if (!obj.contains("status")) return std::nullopt;
    for (const auto& e : obj["status"].value("nodes", json::array()))
      if (e.value("node", "") == node) return e;
    return std::nullopt;
  }
  int patches_ok() {
    std::lock_guard<std::mutex> l(mu_);
    return patches_ok_;
  }

 private:
  void bump(const std::string& name) { objects_[name]["metadata"]["resourceVersion"] = std::to_string(++rv_); }

  void nodes(const httplib::Request& q, httplib::Response& r) {
    if (q.has_param("watch")) {
      // One pending event a watch, else an empty watch (the client re-watches after its backoff).
      std::string line;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (!watch_lines_.empty()) {
          line = watch_lines_.front() + "\n";
          watch_lines_.pop_front();
        }
      }
      r.set_content(line, "application/json");
      return;
    }
    std::lock_guard<std::mutex> l(mu_);
    json list = {{"metadata", {{"resourceVersion", std::to_string(rv_)}}}, {"items", json::array()}};
    for (const auto& n : node_names_) list["items"].push_back({{"metadata", {{"name", n}}}});
    r.set_content(list.dump(), "application/json");
  }

  void patch(const std::string& name, const std::string& body, httplib::Response& r) {
    Fault f = Fault::None;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (faults_left_ > 0) {
        --faults_left_;
        f = fault_;
      }
    }
    if (f == Fault::SlowerThanTimeout) std::this_thread::sleep_for(1500ms);  // the writer waits 1 s
    std::lock_guard<std::mutex> l(mu_);
    auto it = objects_.find(name);
    if (it == objects_.end()) {
      r.status = 404;
      return;
    }
    json p = json::parse(body, nullptr, false);
    const bool stale = !p.is_object() || p["metadata"].value("resourceVersion", "") !=
                                             it->second["metadata"].value("resourceVersion", "");
    if (f == Fault::Conflict || stale) {
      r.status = 409;
      r.set_content(R"({"kind":"Status","message":"the object has been modified"})", "application/json");
      if (f == Fault::Conflict) bump(name);  // another writer got in first
      return;
    }
    if (f == Fault::Refuse) {
      r.status = 500;
      r.set_content(R"({"kind":"Status","message":"etcdserver: request timed out"})", "application/json");
      return;
    }
    if (f == Fault::SlowerThanTimeout) {  // the client has gone; the write is not applied either
      r.status = 504;
      return;
    }
    it->second["status"] = p["status"];
    bump(name);
    ++patches_ok_;
    r.set_content(it->second.dump(), "application/json");
  }

  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, json> objects_;
  std::set<std::string> node_names_{kNode, "z-node"};
  std::deque<std::string> watch_lines_;
  int rv_ = 1;
  Fault fault_ = Fault::None;
  int faults_left_ = 0;
  int patches_ok_ = 0;
};

// The daemon: one intent, Applied, for the policy the fake server holds.
class FakeDaemon final : public FeedTransport {
 public:
  grpc::Status upsert_claim(const pb::UpsertClaimBindingRequest&, pb::UpsertClaimBindingResponse*) override { return {}; }
  grpc::Status delete_claim(const pb::DeleteClaimBindingRequest&, pb::DeleteClaimBindingResponse*) override { return {}; }
  grpc::Status upsert_policy(const pb::UpsertPolicyRequest&, pb::UpsertPolicyResponse*) override { return {}; }
  grpc::Status delete_policy(const pb::DeletePolicyRequest&, pb::DeletePolicyResponse*) override { return {}; }
  grpc::Status list_bindings(pb::ListBindingsResponse*) override { return {}; }
  grpc::Status list_intents(pb::ListIntentsResponse* resp) override {
    pb::Intent* i = resp->add_intents();
    i->set_kind(pb::NODE_SCHEDULING_POLICY);
    i->set_policy("engine");
    i->set_policy_generation(3);
    i->set_node(kNode);
    i->set_state(pb::APPLIED);
    i->set_matched_tasks(2);
    i->set_applied_entries(2);
    return {};
  }
  bool reconnected() override { return false; }
};

struct StatusWriterFaults : ::testing::Test {
  FakeApiServer api;
  FakeDaemon daemon;
  std::atomic<bool> stop{false};
  std::unique_ptr<StatusWriter> writer;
  std::thread thread;
  std::vector<std::string> notices;
  std::mutex notices_mu;

  void start() {
    KubeConfig cfg;
    cfg.server = api.url();
    StatusWriterOptions o;
    o.node = kNode;
    o.interval = 50ms;
    o.resync = 600s;  // never within a test: only the pass (and a Node's delete) may write
    o.max_attempts = 3;
    o.conflict_backoff = 5ms;
    o.request_timeout_s = 1;
    o.node_watch = {5, 500, 50};
    writer = std::make_unique<StatusWriter>(cfg, o, daemon, [this](const std::string& k, const std::string& m) {
      std::lock_guard<std::mutex> l(notices_mu);
      notices.push_back(k + ": " + m);
    });
    thread = std::thread([this] { writer->run(stop); });
  }
  void TearDown() override {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  template <class Pred>
  bool within(std::chrono::milliseconds d, Pred p) {
    const auto until = Clock::now() + d;
    while (Clock::now() < until) {
      if (p()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return p();
  }
  std::string log() {
    std::lock_guard<std::mutex> l(notices_mu);
    std::string s;
    for (const auto& n : notices) s += n + "\n";
    return s;
  }
  // The first sweep writes the entry; then someone removes it and a Node leaves, so the sweep
  // that follows meets the fault `n` times in a row.
  void fault_in_a_sweep(Fault f, int n) {
    start();
    ASSERT_TRUE(within(5s, [&] { return api.entry(kNode).has_value(); })) << log();
    ASSERT_EQ(api.entry(kNode)->value("state", ""), "Applied");
    api.arm(f, n);
    api.remove_entry(kNode);
    api.delete_node("z-node");
    ASSERT_TRUE(within(15s, [&] { return api.faults_left() == 0; })) << "the faults were never met\n" << log();
  }
};

TEST_F(StatusWriterFaults, ConflictsEveryAttemptThenTheNextPassWritesWithoutWaitingForTheResync) {
  fault_in_a_sweep(Fault::Conflict, 3);  // max_attempts: the sweep's write gives up
  ASSERT_TRUE(within(2s, [&] { return writer->stats().gave_up.load() >= 1; })) << log();
  EXPECT_TRUE(within(3s, [&] { return api.entry(kNode).has_value(); }))
      << "the write that gave up was not retried (resync is 600 s)\n" << log();
  EXPECT_GE(writer->stats().conflicts.load(), 3);
}

TEST_F(StatusWriterFaults, TimeoutsTwiceInARowThenTheNextPassWrites) {
  fault_in_a_sweep(Fault::SlowerThanTimeout, 2);
  EXPECT_TRUE(within(5s, [&] { return api.entry(kNode).has_value(); }))
      << "a write that timed out was not retried (resync is 600 s)\n" << log();
  EXPECT_GE(writer->stats().failed.load(), 2);
  EXPECT_NE(log().find("patch:"), std::string::npos) << log();
}

TEST_F(StatusWriterFaults, RefusedFourTimesInARowThenTheNextPassWrites) {
  fault_in_a_sweep(Fault::Refuse, 4);
  EXPECT_TRUE(within(3s, [&] { return api.entry(kNode).has_value(); }))
      << "a refused write was not retried (resync is 600 s)\n" << log();
  EXPECT_GE(writer->stats().failed.load(), 4);
  EXPECT_NE(log().find("HTTP 500: etcdserver: request timed out"), std::string::npos) << log();
}

// In a plain pass (no sweep) conflicts beyond the attempts give up and the next pass goes on.
TEST_F(StatusWriterFaults, MoreConflictsThanAttemptsInAPassGiveUpAndTheNextPassWrites) {
  api.arm(Fault::Conflict, 7);  // two give-ups (3 + 3), then one more conflict
  start();
  EXPECT_TRUE(within(5s, [&] { return api.entry(kNode).has_value(); })) << log();
  EXPECT_EQ(writer->stats().gave_up.load(), 2);
  EXPECT_EQ(api.faults_left(), 0);
  EXPECT_EQ(api.patches_ok(), 1);
}

}  // namespace
}  // namespace c2c::k8s
