// The REST endpoints as functions of (Authorization header, body) -> Reply, over the daemon's
// gRPC API only, through the client library's typed node API (src/client/node_client.hpp). The
// HTTP wiring is in http_routes.cpp; the body mapping in policy_body.*; auth in auth.*.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "client/node_client.hpp"
#include "rest/auth.hpp"
#include "rest/envelope.hpp"
#include "rest/policy_body.hpp"
#include "rest/request_decoder.hpp"

namespace c2c::rest {

struct GatewayOptions {
  std::function<std::string()> new_id;                           // a fresh 24-hex policy ID
  std::function<std::chrono::system_clock::time_point()> clock;  // for the envelopes' timestamp
  DecodeLimits limits;                                           // --max-json-depth
  // Called with the reason of every request the gateway refuses before calling the daemon
  // ("auth", "body-depth", "body-duplicate-key", ...): claim2core_rest_refusals_total.
  std::function<void(const std::string& reason)> on_refusal;
  // The login's signed tokens (login_service.hpp), tried after the token file's; unset: none.
  BearerCheck bearer;
};

// A decoding refusal as the reply the original gives: a bad body is 400 "Invalid request body:
// <field>: <why>" (the field omitted when the body as a whole is to blame); a missing ID is the
// original's own sentence.
Reply refusal_reply(const RequestError& e);

class Gateway {
 public:
  Gateway(const client::NodeClient& node, TokenTable tokens, GatewayOptions o);

  using Auth = const std::string*;  // the Authorization header, nullptr when absent
  Reply create_policy(Auth a, const std::string& body);
  Reply update_policy(Auth a, const std::string& body);
  Reply delete_policy(Auth a, const std::string& body);
  Reply list_policies(Auth a);
  Reply list_intents(Auth a);
  Reply delete_intents(Auth a, const std::string& body);
  // query: "comm" (an RE2 on comm, as ListTasks), "policyId" (only the tasks that policy matches).
  Reply list_tasks(Auth a, const std::multimap<std::string, std::string>& query);
  // The controller of the task's policy and its last decisions come with the lineage (issue 46).
  Reply explain(Auth a, const std::string& tid);
  // GET /api/v1/decisions: the controllers' decisions (query: tid, policyId, limit) and levels.
  Reply list_decisions(Auth a, const std::multimap<std::string, std::string>& query);
  Reply preview(Auth a, const std::string& body);
  // GET /api/v1/users/self (any authenticated caller): the original's {id, username, roles,
  // status} plus the permissions.
  Reply self_user(Auth a);
  Reply health();
  Reply version();
  // The caller of the event stream (node_scheduling_intent.read), or the refusal.
  std::variant<Principal, Reply> authorize_events(Auth a) const;
  // GET /metrics: node_scheduling_intent.read (the figures say how often and why callers are
  // refused, which helps someone probing the limits; they are not public).
  std::optional<Reply> authorize_metrics(Auth a) const;
  const DecodeLimits& limits() const { return o_.limits; }

 private:
  // The authorized caller, or the 401/403 reply (counted).
  std::variant<Principal, Reply> caller(Auth a, const std::string& permission) const;
  Reply refuse(const RequestError& e) const;
  Reply ok(std::optional<json> data) const;
  // The caller's node policies by ID, or the failed RPC's reply.
  std::variant<std::map<std::string, NodeSchedulingPolicy>, Reply> own_policies(const std::string& subject);
  // One UpsertPolicy; 404 "no nodes match the policy criteria" when nodeNames leaves the daemon's
  // node out (the daemon refuses such a write unchanged: require_named_node).
  Reply upsert(const NodeSchedulingPolicy& p, const std::string& id);

  const client::NodeClient& node_;
  TokenTable tokens_;
  GatewayOptions o_;
};

}  // namespace c2c::rest
