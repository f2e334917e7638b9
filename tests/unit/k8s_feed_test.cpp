// The feed into claim2cored without a daemon: claim requests and generations (ClaimFeedPlanner
// driven by a real BindingCache), policy CRD decoding and caching, and the sender's coalescing,
// retries, full resends and pruning against a scripted transport.
#include <deque>
#include <thread>

#include <gtest/gtest.h>

#include "k8s/feed.hpp"

namespace c2c::k8s {
namespace {

using nlohmann::json;
using R = BindingCache::Resource;
using namespace std::chrono_literals;

json claim(const std::string& uid, const std::string& device, const std::string& rv,
           std::vector<std::string> pods = {}) {
  if (pods.empty()) pods = {"pod-" + uid};
  json reserved = json::array();
  for (const auto& p : pods) reserved.push_back({{"resource", "pods"}, {"name", p}, {"uid", p}});
  return {{"metadata", {{"name", "c-" + uid}, {"namespace", "n"}, {"uid", uid}, {"resourceVersion", rv}, {"generation", 1}}},
          {"spec", {{"devices", {{"requests", {{{"name", "r"}, {"exactly", {{"deviceClassName", "x"}}}}}}}}}},
          {"status",
           {{"allocation", {{"devices", {{"results", {{{"request", "r"}, {"driver", "d.example.com"}, {"pool", "p"}, {"device", device}}}}}}}},
            {"reservedFor", reserved}}}};
}

json pod(const std::string& uid, const std::string& claim_name, const std::string& rv, const std::string& app = "llm") {
  return {{"metadata", {{"name", uid}, {"namespace", "n"}, {"uid", uid}, {"resourceVersion", rv}, {"labels", {{"app", app}}}}},
          {"spec", {{"containers", {{{"name", "c"}}}}, {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", claim_name}}}}}}};
}

// Runs the planner on every state the cache reports, as DaemonFeed does.
struct PlannerProbe : BindingListener {
  ClaimFeedPlanner planner;
  std::vector<ClaimFeedChanges> changes;
  void on_bindings_changed(const std::vector<ClaimDeviceBinding>&, const std::vector<ClaimDeviceBinding>&) override {}
  void on_binding_state(const BindingState& s) override { changes.push_back(planner.update(s)); }
  ClaimFeedChanges last() const { return changes.empty() ? ClaimFeedChanges{} : changes.back(); }
};

TEST(K8sFeedClaims, OneRequestPerClaimWithPodInfoAndTheRevisionAsGeneration) {
  PlannerProbe probe;
  BindingCache cache(probe, {});
  cache.replace(R::Slices, {}, "t", "100");
  cache.replace(R::Pods, {pod("pod-a", "c-a", "101"), pod("pod-b", "c-b", "102", "web")}, "t", "105");
  cache.replace(R::Claims, {claim("a", "gpu-0", "103"), claim("b", "gpu-1", "104")}, "t", "106");
  auto c = probe.last();
  ASSERT_EQ(c.upserts.size(), 2u);
  EXPECT_TRUE(c.deletes.empty());
  const auto& a = c.upserts[0];
  ASSERT_EQ(a.bindings_size(), 1);
  EXPECT_EQ(a.bindings(0).claim_uid(), "a");
  EXPECT_EQ(a.bindings(0).device(), "gpu-0");
  EXPECT_EQ(a.bindings(0).claim_generation(), 106);  // the highest resourceVersion seen
  EXPECT_EQ(a.bindings(0).claim_name(), "c-a");
  ASSERT_EQ(a.pods_size(), 1);
  EXPECT_EQ(a.pods(0).uid(), "pod-a");
  EXPECT_EQ(a.pods(0).labels().at("app"), "llm");
  EXPECT_EQ(a.pods(0).claims().at("gpu"), "a");  // pod claim name -> claim UID
  EXPECT_TRUE(a.pods(0).cgroup().empty());       // the daemon resolves it on the node
  EXPECT_TRUE(a.pods(0).cpus().empty());
  EXPECT_EQ(c.upserts[1].pods(0).labels().at("app"), "web");

  // An event that changes nothing for claim b sends nothing for it.
  size_t calls = probe.changes.size();
  cache.apply(R::Claims, "MODIFIED", claim("a", "gpu-2", "110"), "t");
  ASSERT_GT(probe.changes.size(), calls);
  c = probe.last();
  ASSERT_EQ(c.upserts.size(), 1u);
  EXPECT_EQ(c.upserts[0].bindings(0).device(), "gpu-2");
  EXPECT_EQ(c.upserts[0].bindings(0).claim_generation(), 110);

  // A pod label change reaches the claims that name the pod, at a newer generation (the core
  // refuses a changed claim at the same generation).
  cache.apply(R::Pods, "MODIFIED", pod("pod-b", "c-b", "111", "batch"), "t");
  c = probe.last();
  ASSERT_EQ(c.upserts.size(), 1u);
  EXPECT_EQ(c.upserts[0].bindings(0).claim_uid(), "b");
  EXPECT_EQ(c.upserts[0].pods(0).labels().at("app"), "batch");
  EXPECT_EQ(c.upserts[0].bindings(0).claim_generation(), 111);
}

TEST(K8sFeedClaims, DeallocationDeletesAndAReallocationGoesAboveTheTombstone) {
  PlannerProbe probe;
  BindingCache cache(probe, {});
  cache.replace(R::Slices, {}, "t");
  cache.replace(R::Pods, {}, "t");
  cache.replace(R::Claims, {claim("a", "gpu-0", "7")}, "t", "9");
  ASSERT_EQ(probe.last().upserts.size(), 1u);
  EXPECT_EQ(probe.last().upserts[0].bindings(0).claim_generation(), 9);

  json deallocated = claim("a", "gpu-0", "12");
  deallocated["status"].erase("allocation");
  deallocated["status"].erase("reservedFor");
  cache.apply(R::Claims, "MODIFIED", deallocated, "t");
  auto c = probe.last();
  ASSERT_EQ(c.deletes.size(), 1u);
  EXPECT_EQ(c.deletes[0].claim_uid, "a");
  EXPECT_EQ(c.deletes[0].generation, 12);
  EXPECT_TRUE(c.upserts.empty());

  cache.apply(R::Claims, "MODIFIED", claim("a", "gpu-3", "15"), "t");
  c = probe.last();
  ASSERT_EQ(c.upserts.size(), 1u);
  EXPECT_EQ(c.upserts[0].bindings(0).claim_generation(), 15);
  EXPECT_GT(c.upserts[0].bindings(0).claim_generation(), 12);
}

TEST(K8sFeedClaims, WithoutNumericResourceVersionsGenerationsStillGrow) {
  PlannerProbe probe;
  BindingCache cache(probe, {});
  cache.replace(R::Slices, {}, "t");
  cache.replace(R::Pods, {}, "t");
  cache.replace(R::Claims, {claim("a", "gpu-0", "opaque-x")}, "t");
  ASSERT_EQ(probe.last().upserts.size(), 1u);
  EXPECT_EQ(probe.last().upserts[0].bindings(0).claim_generation(), 1);
  cache.apply(R::Claims, "MODIFIED", claim("a", "gpu-1", "opaque-y"), "t");
  ASSERT_EQ(probe.last().upserts.size(), 1u);
  EXPECT_EQ(probe.last().upserts[0].bindings(0).claim_generation(), 2);
}

// ---- policy CRDs ---------------------------------------------------------------------------------

json node_policy(const std::string& name, int64_t generation, const std::string& regex) {
  return {{"apiVersion", "scheduling.gthulhu.io/v1alpha1"},
          {"kind", "NodeSchedulingPolicy"},
          {"metadata", {{"name", name}, {"generation", generation}, {"uid", "u-" + name}, {"resourceVersion", "5"},
                        {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
          {"spec", {{"nodeNames", {"kind-worker"}}, {"commandRegex", regex}, {"priority", 1}, {"executionTime", 2000000}}},
          {"status", {{"observedGeneration", generation}}}};
}

TEST(K8sFeedPolicies, DecodesCrdObjectsAndNamesTheFieldOfABadOne) {
  std::string err;
  json item = node_policy("vllm", 3, "^EngineCore(_DP[0-9]+)?$");
  item.erase("apiVersion");  // typed-list items carry neither
  item.erase("kind");
  auto p = decode_policy_object(PolicyKind::Node, item, &err);
  ASSERT_TRUE(p) << err;
  const auto& n = std::get<NodeSchedulingPolicy>(*p);
  EXPECT_EQ(n.name, "vllm");
  EXPECT_EQ(n.generation, 3);
  EXPECT_EQ(n.command_regex, "^EngineCore(_DP[0-9]+)?$");

  EXPECT_FALSE(decode_policy_object(PolicyKind::Node, node_policy("x", 1, "(unclosed"), &err));
  EXPECT_EQ(err.rfind("NodeSchedulingPolicy x: spec.commandRegex: ", 0), 0u) << err;
  json no_gen = node_policy("y", 1, "a");
  no_gen["metadata"].erase("generation");
  EXPECT_FALSE(decode_policy_object(PolicyKind::Node, no_gen, &err));
  EXPECT_EQ(err.rfind("NodeSchedulingPolicy y: metadata.generation: ", 0), 0u) << err;
  EXPECT_FALSE(decode_policy_object(PolicyKind::Dra, node_policy("z", 1, "a"), &err));
  EXPECT_EQ(err.rfind("DRAExecutionPolicy z: kind: ", 0), 0u) << err;
}

struct SinkLog : PolicySink {
  std::vector<std::string> log;
  void upsert_policy(const AnyPolicy& p) override {
    const auto& n = std::get<NodeSchedulingPolicy>(p);
    log.push_back("upsert " + n.name + "@" + std::to_string(n.generation) + " " + n.command_regex);
  }
  void delete_policy(PolicyKind, const std::string& name, int64_t generation) override {
    log.push_back("delete " + name + "@" + std::to_string(generation));
  }
  void on_policy_notice(const std::string& kind, const std::string& message) override { log.push_back(kind + ": " + message); }
};

TEST(K8sFeedPolicies, CacheSendsChangesKeepsTheLastGoodVersionAndDeletesAtTheLastGeneration) {
  SinkLog sink;
  PolicyCache cache(PolicyKind::Node, sink);
  cache.replace({node_policy("a", 1, "^a$"), node_policy("bad", 1, "(")});
  ASSERT_EQ(sink.log.size(), 2u);
  EXPECT_EQ(sink.log[0], "upsert a@1 ^a$");
  EXPECT_EQ(sink.log[1].rfind("refused: NodeSchedulingPolicy bad: spec.commandRegex: ", 0), 0u) << sink.log[1];
  sink.log.clear();

  json status_only = node_policy("a", 1, "^a$");
  status_only["status"]["conditions"] = json::array();
  cache.apply("MODIFIED", status_only);  // same generation, same spec: nothing to send
  EXPECT_TRUE(sink.log.empty());
  cache.apply("MODIFIED", node_policy("a", 2, "^a2$"));
  cache.apply("MODIFIED", node_policy("a", 3, "("));  // malformed: refused, a@2 stays
  ASSERT_EQ(sink.log.size(), 2u);
  EXPECT_EQ(sink.log[0], "upsert a@2 ^a2$");
  EXPECT_EQ(sink.log[1].rfind("refused: NodeSchedulingPolicy a: spec.commandRegex", 0), 0u);
  EXPECT_EQ(std::get<NodeSchedulingPolicy>(cache.current().at("a")).generation, 2);
  sink.log.clear();

  cache.apply("DELETED", node_policy("a", 3, "("));
  EXPECT_EQ(sink.log, std::vector<std::string>{"delete a@2"});
  sink.log.clear();
  cache.apply("ADDED", node_policy("b", 1, "^b$"));
  cache.replace({});  // relist: b is gone
  EXPECT_EQ(sink.log, (std::vector<std::string>{"upsert b@1 ^b$", "delete b@1"}));
}

// ---- sender --------------------------------------------------------------------------------------

// A scripted daemon: records calls, answers with the queued statuses (OK when none), holds claims.
class FakeTransport : public FeedTransport {
 public:
  std::mutex mu;
  std::vector<std::string> calls;
  std::deque<grpc::Status> script;
  std::map<std::string, int64_t> claims;  // uid -> generation held
  bool reconnect_flag = false;

  grpc::Status next(const std::string& call) {
    std::lock_guard<std::mutex> l(mu);
    calls.push_back(call);
    if (script.empty()) return grpc::Status::OK;
    auto s = script.front();
    script.pop_front();
    return s;
  }
  grpc::Status upsert_claim(const pb::UpsertClaimBindingRequest& req, pb::UpsertClaimBindingResponse*) override {
    auto s = next("upsert claim/" + req.bindings(0).claim_uid() + " " + req.bindings(0).device());
    if (s.ok()) {
      std::lock_guard<std::mutex> l(mu);
      claims[req.bindings(0).claim_uid()] = req.bindings(0).claim_generation();
    }
    return s;
  }
  grpc::Status delete_claim(const pb::DeleteClaimBindingRequest& req, pb::DeleteClaimBindingResponse*) override {
    auto s = next("delete claim/" + req.claim_uid() + "@" + std::to_string(req.claim_generation()));
    if (s.ok()) {
      std::lock_guard<std::mutex> l(mu);
      claims.erase(req.claim_uid());
    }
    return s;
  }
  grpc::Status upsert_policy(const pb::UpsertPolicyRequest& req, pb::UpsertPolicyResponse*) override {
    return next("upsert node/" + req.policy().node().name() + "@" + std::to_string(req.policy().node().generation()));
  }
  grpc::Status delete_policy(const pb::DeletePolicyRequest& req, pb::DeletePolicyResponse*) override {
    return next("delete node/" + req.name() + "@" + std::to_string(req.generation()));
  }
  grpc::Status list_bindings(pb::ListBindingsResponse* resp) override {
    auto s = next("list bindings");
    std::lock_guard<std::mutex> l(mu);
    for (const auto& [uid, gen] : claims) {
      auto* b = resp->add_bindings();
      b->set_claim_uid(uid);
      b->set_claim_generation(gen);
    }
    return s;
  }
  bool reconnected() override {
    std::lock_guard<std::mutex> l(mu);
    return std::exchange(reconnect_flag, false);
  }
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> l(mu);
    return calls;
  }
  void clear() {
    std::lock_guard<std::mutex> l(mu);
    calls.clear();
  }
};

pb::UpsertClaimBindingRequest claim_req(const std::string& uid, const std::string& device, int64_t gen) {
  pb::UpsertClaimBindingRequest r;
  auto* b = r.add_bindings();
  b->set_claim_uid(uid);
  b->set_device(device);
  b->set_claim_generation(gen);
  return r;
}

pb::Policy policy_pb(const std::string& name, int64_t gen) {
  pb::Policy p;
  p.mutable_node()->set_name(name);
  p.mutable_node()->set_generation(gen);
  return p;
}

struct SenderRun {
  FakeTransport& t;
  FeedSender sender;
  std::vector<std::string> notices;
  std::mutex mu;
  std::atomic<bool> stop{false};
  std::thread th;
  explicit SenderRun(FakeTransport& transport)
      : t(transport), sender(transport, {10ms, 40ms, 10ms}, [this](const std::string& k, const std::string& m) {
          std::lock_guard<std::mutex> l(mu);
          notices.push_back(k + ": " + m);
        }) {}
  void start() { th = std::thread([this] { sender.run(stop); }); }
  ~SenderRun() {
    stop = true;
    if (th.joinable()) th.join();
  }
  bool idle(std::chrono::milliseconds limit = 5000ms) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (sender.pending() == 0) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
};

TEST(K8sFeedSender, CoalescesPerKeyAndSendsTheLatestValueOnce) {
  FakeTransport t;
  SenderRun run(t);
  run.sender.set_claim("a", claim_req("a", "gpu-0", 1));
  run.sender.set_claim("a", claim_req("a", "gpu-1", 2));
  run.sender.set_claim("a", claim_req("a", "gpu-2", 3));
  run.sender.set_policy(policy_pb("p", 1));
  run.sender.delete_policy(PolicyKind::Node, "p", 1);  // deleted before it was ever sent
  run.start();
  ASSERT_TRUE(run.idle());
  EXPECT_EQ(t.snapshot(), (std::vector<std::string>{"upsert claim/a gpu-2", "delete node/p@1"}));
  EXPECT_EQ(run.sender.stats().sent.load(), 2);
}

TEST(K8sFeedSender, UnavailableRetriesWithBackoffThenResendsTheWholeState) {
  FakeTransport t;
  t.script = {grpc::Status::OK, grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused"),
              grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused")};
  SenderRun run(t);
  run.sender.set_claim("a", claim_req("a", "gpu-0", 1));
  run.sender.set_policy(policy_pb("p", 4));
  run.start();
  ASSERT_TRUE(run.idle());
  auto calls = t.snapshot();
  // a delivered, p failed twice, then everything again (a restarted daemon may have lost a).
  ASSERT_EQ(calls.size(), 5u) << ::testing::PrintToString(calls);
  EXPECT_EQ(calls[0], "upsert claim/a gpu-0");
  EXPECT_EQ(calls[1], "upsert node/p@4");
  EXPECT_EQ(calls[2], "upsert claim/a gpu-0");
  EXPECT_EQ(calls[3], "upsert claim/a gpu-0");
  EXPECT_EQ(calls[4], "upsert node/p@4");
  EXPECT_GE(run.sender.stats().full_resends.load(), 2);
  EXPECT_EQ(run.sender.stats().failed.load(), 2);
}

TEST(K8sFeedSender, InvalidArgumentIsReportedAndNotRetried) {
  FakeTransport t;
  t.script = {grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "policy.node.command_regex: invalid RE2 regex")};
  SenderRun run(t);
  run.sender.set_policy(policy_pb("p", 1));
  run.sender.set_policy(policy_pb("q", 1));
  run.start();
  ASSERT_TRUE(run.idle());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(t.snapshot(), (std::vector<std::string>{"upsert node/p@1", "upsert node/q@1"}));
  EXPECT_EQ(run.sender.stats().refused.load(), 1);
  std::lock_guard<std::mutex> l(run.mu);
  ASSERT_FALSE(run.notices.empty());
  EXPECT_NE(run.notices[0].find("policy.node.command_regex"), std::string::npos) << run.notices[0];
}

TEST(K8sFeedSender, ReconnectionResendsAndPrunesClaimsTheFeedNoLongerHolds) {
  FakeTransport t;
  t.claims = {{"stale", 40}};  // left in the daemon from before (deallocated while the feed was down)
  SenderRun run(t);
  run.sender.set_claim("a", claim_req("a", "gpu-0", 50));
  run.start();
  ASSERT_TRUE(run.idle());
  // Not synced yet: nothing is pruned.
  EXPECT_EQ(t.snapshot(), std::vector<std::string>{"upsert claim/a gpu-0"});
  run.sender.claims_synced();
  auto until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < until && run.sender.stats().sent.load() < 2) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(run.idle());
  EXPECT_EQ(t.snapshot(), (std::vector<std::string>{"upsert claim/a gpu-0", "list bindings", "delete claim/stale@40"}));
  EXPECT_EQ(run.sender.stats().pruned_claims.load(), 1);

  // The daemon restarted with an empty state: the feed notices the new connection and resends.
  t.clear();
  {
    std::lock_guard<std::mutex> l(t.mu);
    t.claims.clear();
    t.reconnect_flag = true;
  }
  until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < until && t.snapshot().size() < 2) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(run.idle());
  EXPECT_EQ(t.snapshot(), (std::vector<std::string>{"list bindings", "upsert claim/a gpu-0"}));
  std::lock_guard<std::mutex> l(t.mu);
  EXPECT_EQ(t.claims.at("a"), 50);
}

}  // namespace
}  // namespace c2c::k8s
