// The REST request decoder: an HTTP request (method, path, query, headers, body) -> the typed
// request the gateway acts on, or the refusal naming the field to blame. Pure (no sockets, no
// daemon, no clock), so that fuzz/fuzz_rest_decoder.cpp drives exactly the functions the gateway
// calls (Gateway uses the per-part decoders below; decode_request is the route table over them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "rest/json_body.hpp"
#include "rest/policy_body.hpp"

namespace c2c::rest {

struct DecodeLimits {
  size_t max_json_depth = kDefaultMaxJsonDepth;  // --max-json-depth
};

// Every reason the gateway counts a refusal under (claim2core_rest_refusals_total{reason}): the
// decoder's and the HTTP layer's (keep_alive_server.cpp, http_routes.cpp).
const std::vector<std::string>& refusal_reasons();

// A refused request: the HTTP status, the field to blame (never empty: "body" for the body as a
// whole, "Authorization", "path", "policyId", "nodeNames", ...), the message, and the reason
// counted in claim2core_rest_refusals_total.
struct RequestError {
  int status = 400;
  std::string field;
  std::string message;
  std::string reason;
};

// A policy body (POST/PUT .../node-scheduling-policies, POST /api/v1/preview), named
// policy_name(owner, id), where id is the body's policyId or kUnsetPolicyId when it has none
// (the gateway names a new policy once it has drawn its ID).
inline constexpr const char* kUnsetPolicyId = "000000000000000000000000";
enum class IdRule : uint8_t { None, Required, Optional };
struct PolicyWrite {
  NodeSchedulingPolicy policy;
  std::string id;  // the body's policyId (lower-cased), "" when none was given
};
std::variant<PolicyWrite, RequestError> decode_policy_write(const std::string& body, const DecodeLimits& l,
                                                            const std::string& owner, IdRule rule);
// DELETE .../node-scheduling-policies: {"policyId"}.
std::variant<std::string, RequestError> decode_policy_delete(const std::string& body, const DecodeLimits& l);
// DELETE .../node-scheduling-intents: {"intentIds": [...]}.
std::variant<std::vector<std::string>, RequestError> decode_intent_ids(const std::string& body, const DecodeLimits& l);

// GET /api/v1/tasks?comm=&title=&policyId=
struct TasksQuery {
  std::string comm, title;               // RE2 patterns (the daemon compiles them and names a bad one)
  std::optional<std::string> policy_id;  // lower-cased
};
std::variant<TasksQuery, RequestError> decode_tasks_query(const std::multimap<std::string, std::string>& query);
// GET /api/v1/tasks/{tid}/explain
std::variant<uint32_t, RequestError> decode_tid(const std::string& tid);
// GET /api/v1/decisions?tid=&policyId=&limit= (issue 46: the controllers' decisions)
struct DecisionsQuery {
  uint32_t tid = 0;                      // 0: every thread
  std::optional<std::string> policy_id;  // lower-cased
  uint32_t limit = 100;                  // the newest this many (1..1024)
};
std::variant<DecisionsQuery, RequestError> decode_decisions_query(const std::multimap<std::string, std::string>& query);

// ---- the whole request ------------------------------------------------------------------------
struct HttpRequest {
  std::string method, path;
  std::multimap<std::string, std::string> query;
  std::multimap<std::string, std::string> headers;  // names as sent; looked up case-insensitively
  std::string body;
};

enum class Route : uint8_t {
  CreatePolicy, UpdatePolicy, DeletePolicy, ListPolicies, ListIntents, DeleteIntents,
  ListTasks, Explain, Preview, Events, Health, Version, Metrics, Asset, ListDecisions
};
const char* route_name(Route r);

struct TypedRequest {
  Route route = Route::Health;
  std::optional<std::string> authorization;  // the header (or "Bearer " + ?access_token= for Events)
  std::optional<PolicyWrite> policy;         // Create/Update/Preview
  std::string policy_id;                     // DeletePolicy
  std::vector<std::string> intent_ids;       // DeleteIntents
  TasksQuery tasks;                          // ListTasks
  uint32_t tid = 0;                          // Explain
  DecisionsQuery decisions;                  // ListDecisions
};

// The route of (method, path) and its decoded parameters, or the refusal (404 for an unknown
// path, 405 for a known path with another method). Routes that need a permission get the
// Authorization header's shape checked too ("Bearer <token>", refused 401 naming
// "Authorization"); the token itself is the gateway's to check.
std::variant<TypedRequest, RequestError> decode_request(const HttpRequest& req, const DecodeLimits& l,
                                                        const std::string& owner);

}  // namespace c2c::rest
