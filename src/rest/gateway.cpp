#include "rest/gateway.hpp"

#include <algorithm>

#include "cli/structured_output.hpp"

#ifndef C2C_VERSION
#define C2C_VERSION "unknown"
#endif

namespace c2c::rest {
namespace {

using Owned = std::map<std::string, pb::NodeSchedulingPolicy>;

std::variant<json, Reply> parse_body(const std::string& body) {
  if (body.empty()) return bad_body("", "the body is empty (expected a JSON object)");
  try {
    return json::parse(body);
  } catch (const json::parse_error& e) {
    return bad_body("", std::string("not JSON: ") + e.what());
  }
}

// The original answers a missing ID with its own sentence, not as a bad body.
Reply id_refusal(const BodyError& e) {
  if (e.message == "Policy ID is required" || e.message == "At least one intent ID is required")
    return fail(400, e.message, e.field);
  return bad_body(e.field, e.message);
}

}  // namespace

std::variant<Gateway::Call, Reply> Gateway::start(Auth a, const std::string& permission, const std::string& body) const {
  auto who = authorize(tokens_, a, permission);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto j = parse_body(body);
  if (auto* r = std::get_if<Reply>(&j)) return *r;
  return Call{std::get<Principal>(who), std::move(std::get<json>(j))};
}

Gateway::Gateway(pb::Claim2Core::StubInterface& stub, TokenTable tokens, GatewayOptions o)
    : stub_(stub), tokens_(std::move(tokens)), o_(std::move(o)) {}

std::unique_ptr<grpc::ClientContext> Gateway::context() const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + o_.rpc_timeout);
  return ctx;
}

Reply Gateway::ok(std::optional<json> data) const { return rest::ok(std::move(data), o_.clock()); }

std::variant<Principal, Reply> Gateway::authorize_events(Auth a) const {
  return authorize(tokens_, a, kPermIntentRead);
}

std::variant<Owned, Reply> Gateway::own_policies(const std::string& subject) {
  pb::ListPoliciesResponse resp;
  auto ctx = context();
  if (auto s = stub_.ListPolicies(ctx.get(), {}, &resp); !s.ok()) return from_rpc(s, "ListPolicies");
  Owned out;
  for (const auto& p : resp.policies()) {
    if (!p.has_node()) continue;
    auto parts = parse_policy_name(p.node().name());
    if (parts && parts->owner == subject) out[parts->id] = p.node();
  }
  return out;
}

std::optional<Reply> Gateway::check_node(const NodeSchedulingPolicy& p) {
  if (p.node_names.empty()) return std::nullopt;  // selectors: the daemon knows the node's labels
  pb::StatusResponse st;
  auto ctx = context();
  if (auto s = stub_.Status(ctx.get(), {}, &st); !s.ok()) return from_rpc(s, "Status");
  if (std::find(p.node_names.begin(), p.node_names.end(), st.node()) == p.node_names.end())
    return fail(404, "no nodes match the policy criteria (this node is '" + st.node() + "')", "nodeNames");
  return std::nullopt;
}

Reply Gateway::upsert(const NodeSchedulingPolicy& p, const std::string& id) {
  if (auto r = check_node(p)) return *r;
  pb::UpsertPolicyRequest req;
  *req.mutable_policy()->mutable_node() = api::to_proto(p);
  pb::UpsertPolicyResponse resp;
  auto ctx = context();
  if (auto s = stub_.UpsertPolicy(ctx.get(), req, &resp); !s.ok()) return from_rpc(s, "UpsertPolicy");
  if (resp.ignored()) return fail(409, "the daemon ignored the policy: " + resp.message());
  const auto& node = req.policy().node();
  json warnings = json::array();
  for (const auto& w : resp.warnings()) warnings.push_back(w);
  return ok(json{{"id", id},
                 {"generation", resp.policy_generation()},
                 // No intent: the policy does not select this node (its warnings say why).
                 {"intent", resp.has_intent() ? intent_to_body(resp.intent(), id, &node) : json(nullptr)},
                 {"warnings", warnings}});
}

Reply Gateway::create_policy(Auth a, const std::string& body) {
  auto c = start(a, kPermPolicyCreate, body);
  if (auto* r = std::get_if<Reply>(&c)) return *r;
  const auto& [who, j] = std::get<Call>(c);
  std::string id = o_.new_id();
  auto p = policy_from_body(j, policy_name(who.subject, id));
  if (!p.ok()) return bad_body(p.error.field, p.error.message);
  return upsert(*p.value, id);
}

Reply Gateway::update_policy(Auth a, const std::string& body) {
  auto c = start(a, kPermPolicyUpdate, body);
  if (auto* r = std::get_if<Reply>(&c)) return *r;
  const auto& [who, j] = std::get<Call>(c);
  auto id = policy_id_member(j);
  if (!id.ok()) return id_refusal(id.error);
  const std::string& subject = who.subject;
  auto p = policy_from_body(j, policy_name(subject, *id.value));
  if (!p.ok()) return bad_body(p.error.field, p.error.message);
  auto owned = own_policies(subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  if (!std::get<Owned>(owned).count(*id.value))
    return fail(404, "node policy not found or you don't have permission to update it");
  return upsert(*p.value, *id.value);
}

Reply Gateway::delete_policy(Auth a, const std::string& body) {
  auto c = start(a, kPermPolicyDelete, body);
  if (auto* r = std::get_if<Reply>(&c)) return *r;
  const auto& [who, j] = std::get<Call>(c);
  auto id = policy_id_member(j);
  if (!id.ok()) return id_refusal(id.error);
  auto owned = own_policies(who.subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  auto it = std::get<Owned>(owned).find(*id.value);
  if (it == std::get<Owned>(owned).end())
    return fail(404, "node policy not found or you don't have permission to delete it");
  pb::DeletePolicyRequest req;
  req.set_kind(pb::NODE_SCHEDULING_POLICY);
  req.set_name(it->second.name());
  pb::DeletePolicyResponse resp;
  auto ctx = context();
  if (auto s = stub_.DeletePolicy(ctx.get(), req, &resp); !s.ok()) return from_rpc(s, "DeletePolicy");
  return ok(json::object());
}

Reply Gateway::list_policies(Auth a) {
  auto who = authorize(tokens_, a, kPermPolicyRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto owned = own_policies(std::get<Principal>(who).subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  json list = json::array();
  for (const auto& [id, p] : std::get<Owned>(owned)) list.push_back(policy_to_body(p, id));
  return ok(json{{"policies", list}});
}

Reply Gateway::list_intents(Auth a) {
  auto who = authorize(tokens_, a, kPermIntentRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto owned = own_policies(std::get<Principal>(who).subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  pb::ListIntentsRequest req;
  req.set_kind(pb::NODE_SCHEDULING_POLICY);
  pb::ListIntentsResponse resp;
  auto ctx = context();
  if (auto s = stub_.ListIntents(ctx.get(), req, &resp); !s.ok()) return from_rpc(s, "ListIntents");
  json list = json::array();
  for (const auto& in : resp.intents()) {
    auto parts = parse_policy_name(in.policy());
    if (!parts) continue;
    auto it = std::get<Owned>(owned).find(parts->id);
    if (it == std::get<Owned>(owned).end()) continue;  // another subject's, or deleted meanwhile
    list.push_back(intent_to_body(in, parts->id, &it->second));
  }
  return ok(json{{"intents", list}});
}

// On one node a policy has exactly one intent (this node's), so the intent's ID is the
// policy's and deleting the intent takes the policy off this node. All IDs are checked before
// anything is deleted.
Reply Gateway::delete_intents(Auth a, const std::string& body) {
  auto c = start(a, kPermIntentDelete, body);
  if (auto* r = std::get_if<Reply>(&c)) return *r;
  const auto& [who, j] = std::get<Call>(c);
  auto ids = intent_ids_member(j);
  if (!ids.ok()) return id_refusal(ids.error);
  auto owned = own_policies(who.subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  for (const auto& id : *ids.value)
    if (!std::get<Owned>(owned).count(id))
      return fail(404, "node scheduling intent " + id + " not found or you don't have permission to delete it");
  for (const auto& id : *ids.value) {
    pb::DeletePolicyRequest req;
    req.set_kind(pb::NODE_SCHEDULING_POLICY);
    req.set_name(std::get<Owned>(owned).at(id).name());
    pb::DeletePolicyResponse resp;
    auto ctx = context();
    if (auto s = stub_.DeletePolicy(ctx.get(), req, &resp); !s.ok()) return from_rpc(s, "DeletePolicy");
  }
  return ok(json::object());
}

Reply Gateway::list_tasks(Auth a, const std::map<std::string, std::string>& query) {
  auto who = authorize(tokens_, a, kPermIntentRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  std::optional<std::string> only;
  if (auto q = query.find("policyId"); q != query.end()) {
    only = normalize_policy_id(q->second);
    if (!only) return fail(400, "policyId: must be 24 hex digits, got '" + q->second + "'", "policyId");
  }
  pb::ListTasksRequest treq;
  if (auto q = query.find("comm"); q != query.end()) treq.set_comm_regex(q->second);
  if (auto q = query.find("title"); q != query.end()) treq.set_title_regex(q->second);
  pb::ListTasksResponse tasks;
  {
    auto ctx = context();
    if (auto s = stub_.ListTasks(ctx.get(), treq, &tasks); !s.ok()) return from_rpc(s, "ListTasks");
  }
  pb::ListPoliciesResponse pols;
  {
    auto ctx = context();
    if (auto s = stub_.ListPolicies(ctx.get(), {}, &pols); !s.ok()) return from_rpc(s, "ListPolicies");
  }
  // Which policy holds each task: a read-only Preview of every live policy says which tasks it
  // wins (intended set) and what the pinned map holds for them now (actual).
  struct Match {
    std::string policy, id, strategy;
    bool applied = false;
  };
  std::map<uint32_t, Match> held;
  for (const auto& p : pols.policies()) {
    std::string name = p.has_node() ? p.node().name() : p.dra().name();
    auto parts = p.has_node() ? parse_policy_name(name) : std::nullopt;
    pb::PreviewRequest preq;
    *preq.mutable_policy() = p;
    pb::PreviewResponse presp;
    auto ctx = context();
    if (auto s = stub_.Preview(ctx.get(), preq, &presp); !s.ok()) return from_rpc(s, "Preview");
    for (const auto& m : presp.matched())
      if (m.has_intended())
        held[m.tid()] = Match{presp.policy(), parts ? parts->id : "", m.strategy(), m.has_actual()};
  }
  json list = json::array();
  for (const auto& t : tasks.tasks()) {
    auto h = held.find(t.tid());
    if (only && (h == held.end() || h->second.id != *only)) continue;
    json row = {{"tid", t.tid()},   {"tgid", t.tgid()},      {"start", t.start()}, {"comm", t.comm()},
                {"title", t.title()},   {"cgroup", t.cgroup()}, {"podUid", t.pod_uid()}, {"policy", nullptr}, {"policyId", nullptr},
                {"strategy", nullptr},  {"applied", false}};
    if (h != held.end()) {
      row["policy"] = h->second.policy;
      if (!h->second.id.empty()) row["policyId"] = h->second.id;
      row["strategy"] = h->second.strategy;
      row["applied"] = h->second.applied;
    }
    list.push_back(std::move(row));
  }
  return ok(json{{"tasks", list}});
}

Reply Gateway::explain(Auth a, const std::string& tid) {
  auto who = authorize(tokens_, a, kPermIntentRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  uint64_t n = 0;
  bool digits = !tid.empty() && tid.size() <= 10 && std::all_of(tid.begin(), tid.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) n = std::stoull(tid);
  if (!digits || n == 0 || n > 0xffffffffull) return fail(400, "tid: must be a thread id (1..4294967295), got '" + tid + "'", "tid");
  pb::ExplainRequest req;
  req.set_tid(static_cast<uint32_t>(n));
  pb::ExplainResponse resp;
  auto ctx = context();
  if (auto s = stub_.Explain(ctx.get(), req, &resp); !s.ok()) return from_rpc(s, "Explain");
  if (!resp.found()) return fail(404, "task " + tid + " is not known to claim2cored on this node");
  json lineage = cli::proto_to_json(resp.lineage());
  if (auto parts = parse_policy_name(resp.lineage().policy())) lineage["policyId"] = parts->id;
  return ok(json{{"lineage", lineage}});
}

Reply Gateway::preview(Auth a, const std::string& body) {
  auto c = start(a, kPermPolicyRead, body);
  if (auto* r = std::get_if<Reply>(&c)) return *r;
  const auto& [who, j] = std::get<Call>(c);
  // With a policyId the preview is of that policy's next generation (an edit), else of a new one.
  auto given = string_member(j, "policyId");
  if (!given.ok()) return bad_body(given.error.field, given.error.message);
  std::string id = o_.new_id();
  if (!given.value->empty()) {
    auto n = normalize_policy_id(*given.value);
    if (!n) return bad_body("policyId", "must be 24 hex digits, got '" + *given.value + "'");
    id = *n;
  }
  auto p = policy_from_body(j, policy_name(who.subject, id));
  if (!p.ok()) return bad_body(p.error.field, p.error.message);
  if (auto r = check_node(*p.value)) return *r;
  pb::PreviewRequest req;
  *req.mutable_policy()->mutable_node() = api::to_proto(*p.value);
  pb::PreviewResponse resp;
  auto ctx = context();
  if (auto s = stub_.Preview(ctx.get(), req, &resp); !s.ok()) return from_rpc(s, "Preview");
  json data = cli::proto_to_json(resp);
  data["readOnly"] = true;
  return ok(std::move(data));
}

Reply Gateway::health() {
  pb::StatusResponse st;
  auto ctx = context();
  if (auto s = stub_.Status(ctx.get(), {}, &st); !s.ok()) return from_rpc(s, "Status");
  return ok(json{{"status", "ok"},
                 {"node", st.node()},
                 {"nodeGeneration", st.node_generation()},
                 {"schedulerEnforcing", st.scheduler_enforcing()},
                 {"schedulerMessage", st.scheduler_message()}});
}

Reply Gateway::version() { return ok(json{{"version", C2C_VERSION}, {"service", "claim2core-rest"}}); }

}  // namespace c2c::rest
