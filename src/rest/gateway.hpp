// The REST endpoints as functions of (Authorization header, body) -> Reply, over the daemon's
// gRPC API only (a StubInterface: the real client in claim2core-rest, anything in tests). The
// HTTP wiring is in server.cpp; the body mapping in policy_body.*; auth in auth.*.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "claim2core.grpc.pb.h"
#include "rest/auth.hpp"
#include "rest/envelope.hpp"
#include "rest/policy_body.hpp"

namespace c2c::rest {

struct GatewayOptions {
  std::chrono::milliseconds rpc_timeout{10000};
  std::function<std::string()> new_id;                           // a fresh 24-hex policy ID
  std::function<std::chrono::system_clock::time_point()> clock;  // for the envelopes' timestamp
};

class Gateway {
 public:
  Gateway(pb::Claim2Core::StubInterface& stub, TokenTable tokens, GatewayOptions o);

  using Auth = const std::string*;  // the Authorization header, nullptr when absent
  Reply create_policy(Auth a, const std::string& body);
  Reply update_policy(Auth a, const std::string& body);
  Reply delete_policy(Auth a, const std::string& body);
  Reply list_policies(Auth a);
  Reply list_intents(Auth a);
  Reply delete_intents(Auth a, const std::string& body);
  // query: "comm" (an RE2 on comm, as ListTasks), "policyId" (only the tasks that policy matches).
  Reply list_tasks(Auth a, const std::map<std::string, std::string>& query);
  Reply explain(Auth a, const std::string& tid);
  Reply preview(Auth a, const std::string& body);
  Reply health();
  Reply version();
  // The caller of the event stream (node_scheduling_intent.read), or the refusal.
  std::variant<Principal, Reply> authorize_events(Auth a) const;

 private:
  // An authorized caller and the request's JSON body, or the 401/403/400 reply.
  struct Call {
    Principal who;
    json body;
  };
  std::variant<Call, Reply> start(Auth a, const std::string& permission, const std::string& body) const;
  std::unique_ptr<grpc::ClientContext> context() const;
  Reply ok(std::optional<json> data) const;
  // The caller's node policies by ID, or the failed RPC's reply.
  std::variant<std::map<std::string, pb::NodeSchedulingPolicy>, Reply> own_policies(const std::string& subject);
  // 404 "no nodes match the policy criteria" when nodeNames leaves this node out (checked
  // before anything is sent, so nothing is applied), or a failed Status.
  std::optional<Reply> check_node(const NodeSchedulingPolicy& p);
  Reply upsert(const NodeSchedulingPolicy& p, const std::string& id);

  pb::Claim2Core::StubInterface& stub_;
  TokenTable tokens_;
  GatewayOptions o_;
};

}  // namespace c2c::rest
