#include "rest/gateway.hpp"

#include <algorithm>

#include "core/names.hpp"
#include "rest/intent_body.hpp"

#ifndef C2C_VERSION
#define C2C_VERSION "unknown"
#endif

namespace c2c::rest {
namespace {

using Owned = std::map<std::string, NodeSchedulingPolicy>;

// 404 "no nodes match the policy criteria" when nodeNames leaves the daemon's node out (the node
// as the daemon's reply names it).
std::optional<Reply> unnamed_node(const NodeSchedulingPolicy& p, const std::string& node) {
  if (p.node_names.empty() || std::find(p.node_names.begin(), p.node_names.end(), node) != p.node_names.end())
    return std::nullopt;  // selectors: the daemon knows the node's labels
  return fail(404, "no nodes match the policy criteria (this node is '" + node + "')", "nodeNames");
}

}  // namespace

Reply refusal_reply(const RequestError& e) {
  if (e.reason == "body-id") return fail(e.status, e.message, e.field);  // the original's own sentence
  if (e.reason.rfind("body", 0) == 0) return bad_body(e.field == "body" ? "" : e.field, e.message);
  return fail(e.status, e.message, e.field);
}

Reply Gateway::refuse(const RequestError& e) const {
  if (o_.on_refusal) o_.on_refusal(e.reason);
  return refusal_reply(e);
}

std::variant<Principal, Reply> Gateway::caller(Auth a, const std::string& permission) const {
  auto who = authorize(tokens_, a, permission, o_.bearer);
  if (std::holds_alternative<Reply>(who) && o_.on_refusal) o_.on_refusal("auth");
  return who;
}

Gateway::Gateway(const client::NodeClient& node, TokenTable tokens, GatewayOptions o)
    : node_(node), tokens_(std::move(tokens)), o_(std::move(o)) {}

Reply Gateway::ok(std::optional<json> data) const { return rest::ok(std::move(data), o_.clock()); }

std::variant<Principal, Reply> Gateway::authorize_events(Auth a) const { return caller(a, kPermIntentRead); }

std::optional<Reply> Gateway::authorize_metrics(Auth a) const {
  auto who = caller(a, kPermIntentRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  return std::nullopt;
}

std::variant<Owned, Reply> Gateway::own_policies(const std::string& subject) {
  auto resp = node_.list_policies();
  if (!resp.ok()) return from_rpc(resp.error(), "ListPolicies");
  Owned out;
  for (const auto& p : resp->policies) {
    const auto* n = std::get_if<NodeSchedulingPolicy>(&p);
    if (!n) continue;
    auto parts = parse_policy_name(n->name);
    if (parts && parts->owner == subject) out[parts->id] = *n;
  }
  return out;
}

Reply Gateway::upsert(const NodeSchedulingPolicy& p, const std::string& id) {
  // The daemon refuses, unchanged, a policy whose nodeNames leave its node out and says so in the
  // reply: one RPC (the node's name came from a Status, a digest of the whole state, before).
  auto called = node_.upsert_policy(p, /*require_named_node=*/true);
  if (!called.ok()) return from_rpc(called.error(), "UpsertPolicy");
  const reply::Upsert& resp = *called;
  if (auto r = unnamed_node(p, resp.node)) return *r;
  // The gateway always sends generation 0 ("the next one"), which the daemon ignores only when the
  // spec equals the live policy's (INV-3: a duplicate; spec/state-machine.md). Such a write changed
  // nothing and is idempotent: a client retrying after a lost reply gets the reply it lost (the
  // live generation, its intent as it is now, the warnings the write had, kept in the intent),
  // not a conflict.
  const bool unchanged = resp.ignored && p.generation == 0 && resp.policy_generation > 0;
  if (resp.ignored && !unchanged) return fail(409, "the daemon ignored the policy: " + resp.message);
  json warnings = json::array();
  const auto& given = unchanged && resp.intent ? resp.intent->warnings : resp.warnings;
  for (const auto& w : given) warnings.push_back(w);
  return ok(json{{"id", id},
                 {"generation", resp.policy_generation},
                 // No intent: the policy does not select this node (its warnings say why).
                 {"intent", resp.intent ? intent_to_body(*resp.intent, id, &p) : json(nullptr)},
                 {"warnings", warnings}});
}

Reply Gateway::create_policy(Auth a, const std::string& body) {
  auto who = caller(a, kPermPolicyCreate);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  const std::string& subject = std::get<Principal>(who).subject;
  auto w = decode_policy_write(body, o_.limits, subject, IdRule::None);
  if (auto* e = std::get_if<RequestError>(&w)) return refuse(*e);
  std::string id = o_.new_id();
  NodeSchedulingPolicy p = std::move(std::get<PolicyWrite>(w).policy);
  p.name = policy_name(subject, id);  // same length and alphabet as the name it was validated with
  return upsert(p, id);
}

Reply Gateway::update_policy(Auth a, const std::string& body) {
  auto who = caller(a, kPermPolicyUpdate);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  const std::string& subject = std::get<Principal>(who).subject;
  auto w = decode_policy_write(body, o_.limits, subject, IdRule::Required);
  if (auto* e = std::get_if<RequestError>(&w)) return refuse(*e);
  const auto& [p, id] = std::get<PolicyWrite>(w);
  auto owned = own_policies(subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  if (!std::get<Owned>(owned).count(id))
    return fail(404, "node policy not found or you don't have permission to update it");
  return upsert(p, id);
}

Reply Gateway::delete_policy(Auth a, const std::string& body) {
  auto who = caller(a, kPermPolicyDelete);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto id = decode_policy_delete(body, o_.limits);
  if (auto* e = std::get_if<RequestError>(&id)) return refuse(*e);
  auto owned = own_policies(std::get<Principal>(who).subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  auto it = std::get<Owned>(owned).find(std::get<std::string>(id));
  if (it == std::get<Owned>(owned).end())
    return fail(404, "node policy not found or you don't have permission to delete it");
  if (auto r = node_.delete_policy(PolicyKind::Node, it->second.name); !r.ok())
    return from_rpc(r.error(), "DeletePolicy");
  return ok(json::object());
}

Reply Gateway::list_policies(Auth a) {
  auto who = caller(a, kPermPolicyRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto owned = own_policies(std::get<Principal>(who).subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  json list = json::array();
  for (const auto& [id, p] : std::get<Owned>(owned)) list.push_back(policy_to_body(p, id));
  return ok(json{{"policies", list}});
}

Reply Gateway::list_intents(Auth a) {
  auto who = caller(a, kPermIntentRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto owned = own_policies(std::get<Principal>(who).subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  auto resp = node_.list_intents({}, PolicyKind::Node);
  if (!resp.ok()) return from_rpc(resp.error(), "ListIntents");
  json list = json::array();
  for (const auto& in : *resp) {
    auto parts = parse_policy_name(in.policy);
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
  auto who = caller(a, kPermIntentDelete);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto decoded = decode_intent_ids(body, o_.limits);
  if (auto* e = std::get_if<RequestError>(&decoded)) return refuse(*e);
  const auto& ids = std::get<std::vector<std::string>>(decoded);
  auto owned = own_policies(std::get<Principal>(who).subject);
  if (auto* r = std::get_if<Reply>(&owned)) return *r;
  for (const auto& id : ids)
    if (!std::get<Owned>(owned).count(id))
      return fail(404, "node scheduling intent " + id + " not found or you don't have permission to delete it");
  for (const auto& id : ids) {
    if (auto r = node_.delete_policy(PolicyKind::Node, std::get<Owned>(owned).at(id).name); !r.ok())
      return from_rpc(r.error(), "DeletePolicy");
  }
  return ok(json::object());
}

Reply Gateway::list_tasks(Auth a, const std::multimap<std::string, std::string>& query) {
  auto who = caller(a, kPermIntentRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto decoded = decode_tasks_query(query);
  if (auto* e = std::get_if<RequestError>(&decoded)) return refuse(*e);
  const auto& q = std::get<TasksQuery>(decoded);
  const std::optional<std::string>& only = q.policy_id;
  auto listed = node_.list_tasks(client::TaskFilter{q.comm, q.title, 0, false});
  if (!listed.ok()) return from_rpc(listed.error(), "ListTasks");
  const auto& tasks = *listed;
  // Which policy holds each task, and whether the pinned map holds its entry: ListTasks says both
  // (Task.policy, Task.applied), so one request is one daemon call whatever the number of
  // policies (it was one Preview per live policy: p99 3.3 s with ~185 policies and 32 clients).
  struct Match {
    std::string policy, id, strategy;
    bool applied = false;
  };
  std::map<uint32_t, Match> held;
  const std::string node_kind = "NodeSchedulingPolicy/";
  for (const auto& t : tasks) {
    if (t.policy.empty()) continue;
    auto parts = t.policy.rfind(node_kind, 0) == 0 ? parse_policy_name(t.policy.substr(node_kind.size()))
                                                   : std::nullopt;
    held[t.tid] = Match{t.policy, parts ? parts->id : "", t.strategy, t.applied};
  }
  json list = json::array();
  for (const auto& t : tasks) {
    auto h = held.find(t.tid);
    if (only && (h == held.end() || h->second.id != *only)) continue;
    json row = {{"tid", t.tid},   {"tgid", t.tgid},      {"start", t.start}, {"comm", name_text(t.comm)},
                {"title", name_text(t.title)},   {"cgroup", name_text(t.cgroup)}, {"podUid", t.pod_uid}, {"policy", nullptr}, {"policyId", nullptr},
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
  auto who = caller(a, kPermIntentRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto n = decode_tid(tid);
  if (auto* e = std::get_if<RequestError>(&n)) return refuse(*e);
  auto resp = node_.explain(std::get<uint32_t>(n));
  if (!resp.ok()) return from_rpc(resp.error(), "Explain");
  if (!resp->found) return fail(404, "task " + tid + " is not known to claim2cored on this node");
  json lineage = resp->json.at("lineage");
  if (auto parts = parse_policy_name(resp->lineage ? resp->lineage->policy : "")) lineage["policyId"] = parts->id;
  json data{{"lineage", lineage}};
  // The controller acting on the task, beside its lineage (issue 46): null when none.
  data["controller"] = resp->controller ? resp->controller->json : json(nullptr);
  data["decisions"] = json::array();
  for (const auto& d : resp->decisions) data["decisions"].push_back(d.json);
  // The role proposed for it from activity (issue 46 item 4): [] when none.
  data["proposals"] = resp->json.contains("proposals") ? resp->json.at("proposals") : json::array();
  return ok(std::move(data));
}

Reply Gateway::list_decisions(Auth a, const std::multimap<std::string, std::string>& query) {
  auto who = caller(a, kPermIntentRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  auto decoded = decode_decisions_query(query);
  if (auto* e = std::get_if<RequestError>(&decoded)) return refuse(*e);
  const auto& q = std::get<DecisionsQuery>(decoded);
  // Filtered by policyId here (a REST id names one node policy of one owner): the newest `limit`
  // of that policy's among all the daemon keeps.
  auto resp = node_.list_decisions({}, q.tid, q.policy_id ? 0 : q.limit);
  if (!resp.ok()) return from_rpc(resp.error(), "ListDecisions");
  auto id_of = [](const std::string& policy) -> std::optional<std::string> {
    auto parts = parse_policy_name(policy);
    return parts ? std::optional<std::string>(parts->id) : std::nullopt;
  };
  json decisions = json::array();
  for (const auto& d : resp->decisions) {
    auto id = id_of(d.policy);
    if (q.policy_id && id != q.policy_id) continue;
    json row = d.json;
    row["policyId"] = id ? json(*id) : json(nullptr);
    decisions.push_back(std::move(row));
  }
  if (decisions.size() > q.limit) decisions.erase(decisions.begin(), decisions.end() - q.limit);
  json controllers = json::array();
  for (const auto& c : resp->controllers) {
    auto id = id_of(c.policy);
    if (q.policy_id && id != q.policy_id) continue;
    json row = c.json;
    row["policyId"] = id ? json(*id) : json(nullptr);
    controllers.push_back(std::move(row));
  }
  return ok(json{{"decisions", decisions}, {"controllers", controllers}});
}

Reply Gateway::preview(Auth a, const std::string& body) {
  auto who = caller(a, kPermPolicyRead);
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  const std::string& subject = std::get<Principal>(who).subject;
  // With a policyId the preview is of that policy's next generation (an edit), else of a new one.
  auto w = decode_policy_write(body, o_.limits, subject, IdRule::Optional);
  if (auto* e = std::get_if<RequestError>(&w)) return refuse(*e);
  NodeSchedulingPolicy p = std::move(std::get<PolicyWrite>(w).policy);
  if (std::get<PolicyWrite>(w).id.empty()) p.name = policy_name(subject, o_.new_id());
  auto resp = node_.preview(p);
  if (!resp.ok()) return from_rpc(resp.error(), "Preview");
  // Read-only, so the check may follow the call: its reply names the node (one RPC).
  if (auto r = unnamed_node(p, resp->node)) return *r;
  json data = resp->json;
  data["readOnly"] = true;
  return ok(std::move(data));
}

// The original's shape at the top ({"status": "healthy", "timestamp", "service"}: its GUI shows
// "API HEALTH: FAIL" unless status is "healthy"), and the envelope with this node's facts beside
// it for our own GUI and scripts.
Reply Gateway::health() {
  auto st = node_.status();
  Reply r;
  if (!st.ok()) {
    r = from_rpc(st.error(), "Status");
    r.body["status"] = "unhealthy";
  } else {
    r = ok(json{{"status", "ok"},
                {"node", st->node},
                {"nodeGeneration", st->node_generation},
                {"schedulerEnforcing", st->scheduler_enforcing},
                {"schedulerMessage", st->scheduler_message}});
    r.body["status"] = "healthy";
  }
  r.body["timestamp"] = rfc3339(o_.clock());
  r.body["service"] = "claim2core-rest";
  return r;
}

Reply Gateway::self_user(Auth a) {
  auto who = caller(a, "");
  if (auto* r = std::get_if<Reply>(&who)) return *r;
  const auto& p = std::get<Principal>(who);
  json perms = json::array();
  for (const auto& x : p.permissions) perms.push_back(x);
  // status 1: active, the original's UserStatus for a user who may log in.
  return ok(json{{"id", p.subject},
                 {"username", p.subject},
                 {"roles", json::array({p.role.empty() ? "token" : p.role})},
                 {"status", 1},
                 {"permissions", perms}});
}

Reply Gateway::version() { return ok(json{{"version", C2C_VERSION}, {"service", "claim2core-rest"}}); }

}  // namespace c2c::rest
