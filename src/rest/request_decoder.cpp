#include "rest/request_decoder.hpp"

#include <algorithm>
#include <cctype>

namespace c2c::rest {
namespace {

RequestError body_error(const std::string& field, const std::string& message, const char* reason = "body-field") {
  return RequestError{400, field.empty() ? "body" : field, message, reason};
}

RequestError from_json_error(const JsonError& e) {
  return body_error(e.field, e.message, refusal_reason(e.kind));
}

std::variant<json, RequestError> body_json(const std::string& body, const DecodeLimits& l) {
  auto j = parse_json_body(body, l.max_json_depth);
  if (auto* e = std::get_if<JsonError>(&j)) return from_json_error(*e);
  return std::move(std::get<json>(j));
}

// The original answers a missing ID with its own sentence (not prefixed as a bad body).
RequestError id_error(const BodyError& e) {
  RequestError r = body_error(e.field, e.message);
  if (e.message == "Policy ID is required" || e.message == "At least one intent ID is required") r.reason = "body-id";
  return r;
}

bool lower_equal(const std::string& a, const char* b) {
  size_t n = std::char_traits<char>::length(b);
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

bool is_asset_path(const std::string& p) {
  if (p == "/" || p == "/index.html") return true;
  // /[a-z]+\.(js|css)
  size_t dot = p.rfind('.');
  if (p.size() < 2 || p[0] != '/' || dot == std::string::npos || dot < 2) return false;
  for (size_t i = 1; i < dot; ++i)
    if (p[i] < 'a' || p[i] > 'z') return false;
  std::string ext = p.substr(dot + 1);
  return ext == "js" || ext == "css";
}

}  // namespace

const std::vector<std::string>& refusal_reasons() {
  static const std::vector<std::string> k = {
      // connections (keep_alive_server.cpp)
      "connections-per-client", "connections-total", "header-deadline", "header-too-large", "body-deadline",
      // the HTTP layer (http_routes.cpp)
      "body-too-large", "event-streams",
      // requests: the token (auth.cpp), the body (json_body.cpp, policy_body.cpp), query, path, route, headers
      "auth", "body-empty", "body-syntax", "body-depth", "body-duplicate-key", "body-utf8", "body-field", "body-id",
      "query", "path", "route", "header",
      // issue 47: a preflight from an unlisted origin (cors_policy.cpp), a failed or throttled login
      "cors", "login", "login-throttled"};
  return k;
}

const char* route_name(Route r) {
  switch (r) {
    case Route::CreatePolicy: return "create-policy";
    case Route::UpdatePolicy: return "update-policy";
    case Route::DeletePolicy: return "delete-policy";
    case Route::ListPolicies: return "list-policies";
    case Route::ListIntents: return "list-intents";
    case Route::DeleteIntents: return "delete-intents";
    case Route::ListTasks: return "list-tasks";
    case Route::Explain: return "explain";
    case Route::Preview: return "preview";
    case Route::Events: return "events";
    case Route::Health: return "health";
    case Route::Version: return "version";
    case Route::Metrics: return "metrics";
    case Route::Asset: return "asset";
    case Route::ListDecisions: return "list-decisions";
  }
  return "unknown";
}

std::variant<PolicyWrite, RequestError> decode_policy_write(const std::string& body, const DecodeLimits& l,
                                                            const std::string& owner, IdRule rule) {
  auto j = body_json(body, l);
  if (auto* e = std::get_if<RequestError>(&j)) return *e;
  const json& doc = std::get<json>(j);
  std::string id;
  if (rule == IdRule::Required) {
    auto given = policy_id_member(doc);
    if (!given.ok()) return id_error(given.error);
    id = *given.value;
  } else if (rule == IdRule::Optional) {
    auto given = string_member(doc, "policyId");
    if (!given.ok()) return body_error(given.error.field, given.error.message);
    if (!given.value->empty()) {
      auto n = normalize_policy_id(*given.value);
      if (!n) return body_error("policyId", "must be 24 hex digits, got '" + *given.value + "'");
      id = *n;
    }
  }
  auto p = policy_from_body(doc, policy_name(owner, id.empty() ? kUnsetPolicyId : id));
  if (!p.ok()) return body_error(p.error.field, p.error.message);
  return PolicyWrite{std::move(*p.value), std::move(id)};
}

std::variant<std::string, RequestError> decode_policy_delete(const std::string& body, const DecodeLimits& l) {
  auto j = body_json(body, l);
  if (auto* e = std::get_if<RequestError>(&j)) return *e;
  auto id = policy_id_member(std::get<json>(j));
  if (!id.ok()) return id_error(id.error);
  return std::move(*id.value);
}

std::variant<std::vector<std::string>, RequestError> decode_intent_ids(const std::string& body, const DecodeLimits& l) {
  auto j = body_json(body, l);
  if (auto* e = std::get_if<RequestError>(&j)) return *e;
  auto ids = intent_ids_member(std::get<json>(j));
  if (!ids.ok()) return id_error(ids.error);
  return std::move(*ids.value);
}

std::variant<TasksQuery, RequestError> decode_tasks_query(const std::multimap<std::string, std::string>& query) {
  TasksQuery q;
  for (const char* key : {"comm", "title", "policyId"}) {
    auto [b, e] = query.equal_range(key);
    if (b == e) continue;
    if (std::next(b) != e)
      return RequestError{400, key, std::string(key) + ": given more than once in the query", "query"};
    if (auto at = first_invalid_utf8(b->second))
      return RequestError{400, key, std::string(key) + ": not UTF-8 (byte " + std::to_string(*at) + ")", "query"};
    if (std::string(key) == "comm") q.comm = b->second;
    else if (std::string(key) == "title") q.title = b->second;
    else {
      q.policy_id = normalize_policy_id(b->second);
      if (!q.policy_id)
        return RequestError{400, "policyId", "policyId: must be 24 hex digits, got '" + b->second + "'", "query"};
    }
  }
  return q;
}

std::variant<DecisionsQuery, RequestError> decode_decisions_query(const std::multimap<std::string, std::string>& query) {
  DecisionsQuery q;
  for (const char* key : {"tid", "policyId", "limit"}) {
    auto [b, e] = query.equal_range(key);
    if (b == e) continue;
    if (std::next(b) != e)
      return RequestError{400, key, std::string(key) + ": given more than once in the query", "query"};
    const std::string& v = b->second;
    const std::string k(key);
    if (k == "tid") {
      auto n = decode_tid(v);
      if (auto* err = std::get_if<RequestError>(&n)) return RequestError{400, "tid", err->message, "query"};
      q.tid = std::get<uint32_t>(n);
    } else if (k == "policyId") {
      q.policy_id = normalize_policy_id(v);
      if (!q.policy_id) return RequestError{400, "policyId", "policyId: must be 24 hex digits", "query"};
    } else {
      const bool digits = !v.empty() && v.size() <= 4 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
      const unsigned long n = digits ? std::stoul(v) : 0;
      if (n < 1 || n > 1024) return RequestError{400, "limit", "limit: must be between 1 and 1024", "query"};
      q.limit = static_cast<uint32_t>(n);
    }
  }
  return q;
}

std::variant<uint32_t, RequestError> decode_tid(const std::string& tid) {
  bool digits = !tid.empty() && tid.size() <= 10 &&
                std::all_of(tid.begin(), tid.end(), [](char c) { return c >= '0' && c <= '9'; });
  uint64_t n = digits ? std::stoull(tid) : 0;
  if (!digits || n == 0 || n > 0xffffffffull) {
    std::string shown = first_invalid_utf8(tid) ? "(not UTF-8)" : tid.substr(0, 64);
    return RequestError{400, "tid", "tid: must be a thread id (1..4294967295), got '" + shown + "'", "path"};
  }
  return static_cast<uint32_t>(n);
}

std::variant<TypedRequest, RequestError> decode_request(const HttpRequest& req, const DecodeLimits& l,
                                                        const std::string& owner) {
  TypedRequest t;
  const std::string& m = req.method;
  const std::string& p = req.path;
  bool known_path = true;
  auto route = [&]() -> std::optional<Route> {
    if (p == "/api/v1/node-scheduling-policies") {
      if (m == "POST") return Route::CreatePolicy;
      if (m == "PUT") return Route::UpdatePolicy;
      if (m == "DELETE") return Route::DeletePolicy;
    } else if (p == "/api/v1/node-scheduling-intents") {
      if (m == "DELETE") return Route::DeleteIntents;
    } else if (p == "/api/v1/node-scheduling-policies/self") {
      if (m == "GET") return Route::ListPolicies;
    } else if (p == "/api/v1/node-scheduling-intents/self") {
      if (m == "GET") return Route::ListIntents;
    } else if (p == "/api/v1/tasks") {
      if (m == "GET") return Route::ListTasks;
    } else if (p.rfind("/api/v1/tasks/", 0) == 0 && p.size() > 22 && p.compare(p.size() - 8, 8, "/explain") == 0 &&
               p.find('/', 14) == p.size() - 8) {
      if (m == "GET") return Route::Explain;
    } else if (p == "/api/v1/decisions") {
      if (m == "GET") return Route::ListDecisions;
    } else if (p == "/api/v1/preview") {
      if (m == "POST") return Route::Preview;
    } else if (p == "/api/v1/events") {
      if (m == "GET") return Route::Events;
    } else if (p == "/health") {
      if (m == "GET") return Route::Health;
    } else if (p == "/version") {
      if (m == "GET") return Route::Version;
    } else if (p == "/metrics") {
      if (m == "GET") return Route::Metrics;
    } else if (is_asset_path(p)) {
      if (m == "GET") return Route::Asset;
    } else {
      known_path = false;
    }
    return std::nullopt;
  }();
  if (!route) {
    if (!known_path) return RequestError{404, "path", "not found", "route"};
    return RequestError{405, "method", "this method is not allowed on this path", "route"};
  }
  t.route = *route;
  for (const auto& [name, value] : req.headers)
    if (lower_equal(name, "authorization")) {
      if (t.authorization) return RequestError{400, "Authorization", "Authorization given more than once", "header"};
      t.authorization = value;
    }
  const bool needs_token = !(t.route == Route::Health || t.route == Route::Version || t.route == Route::Asset);
  if (t.route == Route::Events && !t.authorization) {
    // EventSource cannot set headers: the GUI passes its token as ?access_token=.
    if (auto q = req.query.find("access_token"); q != req.query.end()) t.authorization = "Bearer " + q->second;
  }
  if (needs_token) {
    if (!t.authorization || t.authorization->empty())
      return RequestError{401, "Authorization", "Missing Authorization header", "auth"};
    if (t.authorization->size() <= 7 || t.authorization->compare(0, 7, "Bearer ") != 0)
      return RequestError{401, "Authorization", "Invalid Authorization header format", "auth"};
  }
  switch (t.route) {
    case Route::CreatePolicy:
    case Route::UpdatePolicy:
    case Route::Preview: {
      IdRule rule = t.route == Route::CreatePolicy ? IdRule::None
                    : t.route == Route::UpdatePolicy ? IdRule::Required
                                                      : IdRule::Optional;
      auto w = decode_policy_write(req.body, l, owner, rule);
      if (auto* e = std::get_if<RequestError>(&w)) return *e;
      t.policy = std::move(std::get<PolicyWrite>(w));
      break;
    }
    case Route::DeletePolicy: {
      auto id = decode_policy_delete(req.body, l);
      if (auto* e = std::get_if<RequestError>(&id)) return *e;
      t.policy_id = std::get<std::string>(id);
      break;
    }
    case Route::DeleteIntents: {
      auto ids = decode_intent_ids(req.body, l);
      if (auto* e = std::get_if<RequestError>(&ids)) return *e;
      t.intent_ids = std::get<std::vector<std::string>>(ids);
      break;
    }
    case Route::ListTasks: {
      auto q = decode_tasks_query(req.query);
      if (auto* e = std::get_if<RequestError>(&q)) return *e;
      t.tasks = std::get<TasksQuery>(q);
      break;
    }
    case Route::ListDecisions: {
      auto q = decode_decisions_query(req.query);
      if (auto* e = std::get_if<RequestError>(&q)) return *e;
      t.decisions = std::get<DecisionsQuery>(q);
      break;
    }
    case Route::Explain: {
      auto n = decode_tid(p.substr(14, p.size() - 14 - 8));
      if (auto* e = std::get_if<RequestError>(&n)) return *e;
      t.tid = std::get<uint32_t>(n);
      break;
    }
    default: break;
  }
  return t;
}

}  // namespace c2c::rest
