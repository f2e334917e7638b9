// Kubernetes-native status without an API server: the per-node entries a feed writes
// (merged_status keeps every other node's entry, counts, moves lastTransitionTime only with the
// state, drops departed nodes), the intents -> entry mapping, and the cluster-wide preview
// acknowledgement from the annotation to the daemon (PolicyCache, FeedSender).
#include <thread>

#include <gtest/gtest.h>

#include "api/replies_proto.hpp"
#include "k8s/feed.hpp"
#include "k8s/policy_status.hpp"

namespace c2c::k8s {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json entry(const std::string& node, const std::string& state, const std::string& reason = "",
           const std::string& time = "2026-01-01T00:00:00Z") {
  return {{"node", node}, {"state", state}, {"observedGeneration", 1}, {"matchedTasks", 1}, {"entries", 1},
          {"reason", reason}, {"lastTransitionTime", time}};
}

NodeStatusEntry mine(const std::string& state, int64_t gen = 2, const std::string& reason = "") {
  return NodeStatusEntry{"b", state, gen, 3, 3, reason};
}

TEST(K8sStatus, MergeSetsThisNodesEntryKeepsEveryOtherAndCounts) {
  json status = {{"nodes", {entry("c", "Failed", "map full"), entry("a", "Applied")}}, {"foreign", 7}};
  json out = merged_status(status, "b", mine("Applied"), {}, "2026-12-01T10:00:00Z");
  ASSERT_EQ(out["nodes"].size(), 3u);
  EXPECT_EQ(out["nodes"][0], entry("a", "Applied"));  // other nodes' entries, byte for byte
  EXPECT_EQ(out["nodes"][2], entry("c", "Failed", "map full"));
  EXPECT_EQ(out["nodes"][1]["node"], "b");
  EXPECT_EQ(out["nodes"][1]["observedGeneration"], 2);
  EXPECT_EQ(out["nodes"][1]["matchedTasks"], 3);
  EXPECT_EQ(out["nodes"][1]["lastTransitionTime"], "2026-12-01T10:00:00Z");
  EXPECT_EQ(out["applied"], "2/3 nodes");
  EXPECT_EQ(out["reason"], "c: map full");
  EXPECT_EQ(out["foreign"], 7);  // fields of the status this writer does not own stay
}

TEST(K8sStatus, LastTransitionTimeMovesOnlyWithTheState) {
  json status = {{"nodes", {entry("b", "Applied", "", "2026-01-01T00:00:00Z")}}};
  json same = merged_status(status, "b", mine("Applied", 5, "new reason"), {}, "2026-12-01T10:00:00Z");
  EXPECT_EQ(same["nodes"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(same["nodes"][0]["reason"], "new reason");
  json changed = merged_status(status, "b", mine("Failed", 5, "map full"), {}, "2026-12-01T10:00:00Z");
  EXPECT_EQ(changed["nodes"][0]["lastTransitionTime"], "2026-12-01T10:00:00Z");
  EXPECT_EQ(changed["reason"], "b: map full");
}

TEST(K8sStatus, RemovesThisNodesEntryAndDepartedNodesOnly) {
  json status = {{"nodes", {entry("a", "Pending"), entry("b", "Applied"), entry("c", "Sent")}}};
  json out = merged_status(status, "b", std::nullopt, {"c"}, "t");
  ASSERT_EQ(out["nodes"].size(), 1u);
  EXPECT_EQ(out["nodes"][0], entry("a", "Pending"));
  EXPECT_EQ(out["applied"], "0/1 nodes");
  EXPECT_EQ(out["reason"], "a: Pending");  // no reason: the state
  json all = merged_status({{"nodes", {entry("a", "Failed", "x"), entry("c", "Sent")}}}, "b", mine("Applied"), {}, "t");
  EXPECT_EQ(all["reason"], "a: x (+1 more)");
  json none = merged_status(json(), "b", mine("Applied"), {}, "t");
  EXPECT_EQ(none["applied"], "1/1 nodes");
  EXPECT_EQ(none["reason"], "");
}

// An intent as the daemon sends it, then as the client library hands it over (api::plain).
reply::Intent intent(const std::string& node, const std::string& policy, int64_t gen, pb::IntentState st,
                     const std::string& reason = "") {
  pb::Intent i;
  i.set_kind(pb::DRA_EXECUTION_POLICY);
  i.set_policy(policy);
  i.set_node(node);
  i.set_policy_generation(gen);
  i.set_state(st);
  i.set_reason(reason);
  i.set_matched_tasks(4);
  i.set_applied_entries(3);
  return api::plain(i);
}

TEST(K8sStatus, EntriesFromIntentsAreThisNodesAtTheHighestGeneration) {
  std::string long_reason(1020, 'x');
  long_reason += "\xc3\xa9\xc3\xa9\xc3\xa9";  // 1026 bytes: cut before a UTF-8 sequence, not inside it
  auto out = entries_from_intents({intent("n1", "p", 2, pb::SENT), intent("n1", "p", 1, pb::FAILED),
                                   intent("n2", "q", 1, pb::APPLIED), intent("n1", "r", 1, pb::PENDING, long_reason)},
                                  "n1");
  ASSERT_EQ(out.size(), 2u);
  const auto& p = out.at({PolicyKind::Dra, "p"});
  EXPECT_EQ(p, (NodeStatusEntry{"n1", "Sent", 2, 4, 3, ""}));
  const auto& r = out.at({PolicyKind::Dra, "r"});
  EXPECT_LE(r.reason.size(), kMaxReasonBytes);
  EXPECT_EQ(r.reason.substr(r.reason.size() - 3), "...");
  EXPECT_EQ(r.reason.substr(0, 1020), std::string(1020, 'x'));
  EXPECT_EQ(entries_from_intents({intent("n1", "u", 1, pb::INTENT_STATE_UNSPECIFIED)}, "n1").at({PolicyKind::Dra, "u"}).state,
            "Unknown");
  EXPECT_EQ(rfc3339(0), "1970-01-01T00:00:00Z");
}

TEST(K8sStatus, AcknowledgedGenerationIsAPositiveDecimalAnnotation) {
  auto obj = [](json annotations) { return json{{"metadata", {{"name", "x"}, {"annotations", annotations}}}}; };
  EXPECT_EQ(acknowledged_generation(obj({{kAckAnnotation, "3"}})), 3);
  EXPECT_EQ(acknowledged_generation(obj({{kAckAnnotation, "0"}})), std::nullopt);
  EXPECT_EQ(acknowledged_generation(obj({{kAckAnnotation, "3a"}})), std::nullopt);
  EXPECT_EQ(acknowledged_generation(obj({{kAckAnnotation, ""}})), std::nullopt);
  EXPECT_EQ(acknowledged_generation(obj({{kAckAnnotation, 3}})), std::nullopt);  // annotations are strings
  EXPECT_EQ(acknowledged_generation(obj({{"other", "3"}})), std::nullopt);
  EXPECT_EQ(acknowledged_generation(json{{"metadata", {{"name", "x"}}}}), std::nullopt);
}

// ---- the acknowledgement from the object to the daemon ---------------------------------------------

json dra_object(int64_t generation, const std::string& regex, const std::string& ack) {
  json o = {{"apiVersion", "scheduling.gthulhu.io/v1alpha1"},
            {"kind", "DRAExecutionPolicy"},
            {"metadata", {{"name", "serving"}, {"generation", generation}}},
            {"spec",
             {{"workloadSelector", {{"matchLabels", {{"app", "vllm"}}}}},
              {"resourceClaims", {"gpu"}},
              {"taskRoles", {{{"name", "e"}, {"selector", {{"commandRegex", regex}}}, {"executionClass", "latency-critical"}}}},
              {"safety", {{"requirePreview", true}}}}}};
  if (!ack.empty()) o["metadata"]["annotations"] = {{kAckAnnotation, ack}};
  return o;
}

struct AckLog : PolicySink {
  std::vector<std::string> log;
  static std::string ref(const AnyPolicy& p) {
    const auto& d = std::get<DraExecutionPolicy>(p);
    return d.name + "@" + std::to_string(d.generation);
  }
  void upsert_policy(const AnyPolicy& p) override { log.push_back("upsert " + ref(p)); }
  void delete_policy(PolicyKind, const std::string& name, int64_t) override { log.push_back("delete " + name); }
  void on_policy_notice(const std::string& kind, const std::string& m) override { log.push_back(kind + ": " + m); }
  void acknowledge_preview(const AnyPolicy& p) override { log.push_back("ack " + ref(p)); }
};

TEST(K8sStatus, AnAcknowledgementOfTheCurrentGenerationIsPassedOnceAnOlderOneNever) {
  AckLog sink;
  PolicyCache cache(PolicyKind::Dra, sink);
  cache.replace({dra_object(1, "^E", "")});
  cache.apply("MODIFIED", dra_object(1, "^E", "1"));  // the operator acknowledged generation 1
  cache.apply("MODIFIED", dra_object(1, "^E", "1"));  // a status write: nothing new
  cache.apply("MODIFIED", dra_object(2, "^E2", "1"));  // the spec changed: the annotation is stale
  cache.apply("MODIFIED", dra_object(2, "^E2", "2"));
  cache.replace({dra_object(2, "^E2", "2")});  // a relist: already passed on
  EXPECT_EQ(sink.log, (std::vector<std::string>{"upsert serving@1", "ack serving@1", "upsert serving@2", "ack serving@2"}));
}

TEST(K8sStatus, AFeedThatStartsOnAStaleAcknowledgementPassesNothing) {
  AckLog sink;
  PolicyCache cache(PolicyKind::Dra, sink);
  cache.replace({dra_object(3, "^E3", "2")});  // acknowledged at 2, the spec moved on to 3 since
  EXPECT_EQ(sink.log, std::vector<std::string>{"upsert serving@3"});
}

// A daemon that records policy upserts and acknowledgements in order.
class AckTransport : public FeedTransport {
 public:
  std::mutex mu;
  std::vector<std::string> calls;
  void record(std::string c) {
    std::lock_guard<std::mutex> l(mu);
    calls.push_back(std::move(c));
  }
  grpc::Status upsert_claim(const pb::UpsertClaimBindingRequest&, pb::UpsertClaimBindingResponse*) override { return {}; }
  grpc::Status delete_claim(const pb::DeleteClaimBindingRequest&, pb::DeleteClaimBindingResponse*) override { return {}; }
  grpc::Status upsert_policy(const pb::UpsertPolicyRequest& r, pb::UpsertPolicyResponse*) override {
    record("upsert " + r.policy().dra().name() + "@" + std::to_string(r.policy().dra().generation()));
    return {};
  }
  grpc::Status delete_policy(const pb::DeletePolicyRequest& r, pb::DeletePolicyResponse*) override {
    record("delete " + r.name());
    return {};
  }
  grpc::Status list_bindings(pb::ListBindingsResponse*) override { return {}; }
  grpc::Status preview(const pb::PreviewRequest& r, pb::PreviewResponse* resp) override {
    record(std::string(r.acknowledge() ? "ack " : "preview ") + r.policy().dra().name() + "@" +
           std::to_string(r.policy().dra().generation()));
    resp->set_acknowledged(r.acknowledge());
    return {};
  }
  bool reconnected() override { return false; }
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> l(mu);
    return calls;
  }
};

pb::Policy dra_pb(const std::string& name, int64_t gen) {
  pb::Policy p;
  p.mutable_dra()->set_name(name);
  p.mutable_dra()->set_generation(gen);
  return p;
}

std::vector<std::string> run_until(AckTransport& t, FeedSender& s, size_t calls) {
  std::atomic<bool> stop{false};
  std::thread th([&] { s.run(stop); });
  auto until = std::chrono::steady_clock::now() + 5s;
  while (t.snapshot().size() < calls && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(50ms);  // nothing more arrives
  stop = true;
  th.join();
  return t.snapshot();
}

TEST(K8sStatus, TheSenderAcknowledgesAfterThePolicyAndDropsAnOlderGenerationsAcknowledgement) {
  AckTransport t;
  FeedSender s(t, {10ms, 40ms, 10ms}, [](const std::string&, const std::string&) {});
  // "ack/dra/a" sorts before "dra/a": the daemon must hold the policy first.
  s.acknowledge(dra_pb("a", 1));
  s.set_policy(dra_pb("a", 1));
  EXPECT_EQ(run_until(t, s, 2), (std::vector<std::string>{"upsert a@1", "ack a@1"}));

  AckTransport t2;
  FeedSender s2(t2, {10ms, 40ms, 10ms}, [](const std::string&, const std::string&) {});
  s2.set_policy(dra_pb("b", 1));
  s2.acknowledge(dra_pb("b", 1));
  s2.set_policy(dra_pb("b", 2));  // changed before the acknowledgement went out: it is not for this spec
  s2.set_policy(dra_pb("c", 1));
  s2.acknowledge(dra_pb("c", 1));
  s2.delete_policy(PolicyKind::Dra, "c", 1);  // deleted: nothing to acknowledge
  EXPECT_EQ(run_until(t2, s2, 2), (std::vector<std::string>{"upsert b@2", "delete c"}));
}

// The DRA policy's delete replaces its unsent upsert (one slot per kind and name): before the fix
// the delete's key was computed from a moved-from request ("node/c"), so both were sent and the
// upsert stayed in the state a reconnection resends.
TEST(K8sStatus, ADraPolicysDeleteTakesTheSlotOfItsUpsert) {
  AckTransport t;
  FeedSender s(t, {10ms, 40ms, 10ms}, [](const std::string&, const std::string&) {});
  s.set_policy(dra_pb("c", 1));
  s.delete_policy(PolicyKind::Dra, "c", 1);
  EXPECT_EQ(s.pending(), 1u);
  EXPECT_EQ(run_until(t, s, 1), std::vector<std::string>{"delete c"});
}

}  // namespace
}  // namespace c2c::k8s
