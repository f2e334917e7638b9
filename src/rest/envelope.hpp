// The original's response envelopes and the gateway's status-code rules (pure).
//   success: {"success": true, "data": <T, absent when there is none>, "timestamp": RFC 3339 UTC}
//   error:   {"success": false, "error": "<message>"}  (+ "field" when a body field is to blame)
#pragma once

#include <grpcpp/support/status.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "client/node_client.hpp"

namespace c2c::rest {

using nlohmann::json;

struct Reply {
  int status = 200;
  json body;
};

// "2026-12-01T10:06:06Z" (the original formats time.Now().UTC() with RFC 3339).
std::string rfc3339(std::chrono::system_clock::time_point t);
Reply ok(std::optional<json> data, std::chrono::system_clock::time_point now);
Reply fail(int status, const std::string& message, const std::string& field = "");
// A bad body: 400 "Invalid request body: <field>: <why>", naming the field.
Reply bad_body(const std::string& field, const std::string& message);

// A failed daemon call: INVALID_ARGUMENT/OUT_OF_RANGE 400 (the daemon names the field),
// NOT_FOUND 404, FAILED_PRECONDITION 409, UNAVAILABLE/DEADLINE_EXCEEDED 503 (claim2cored is
// not there or too slow), PERMISSION_DENIED 502 (the daemon refused the gateway itself: a
// deployment problem, not the caller's), anything else 500.
int http_status_of(grpc::StatusCode c);
Reply from_rpc(const client::CallError& e, const std::string& what);

}  // namespace c2c::rest
