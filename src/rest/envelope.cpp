#include "rest/envelope.hpp"

#include <ctime>

namespace c2c::rest {

std::string rfc3339(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Reply ok(std::optional<json> data, std::chrono::system_clock::time_point now) {
  json b = {{"success", true}};
  if (data) b["data"] = std::move(*data);
  b["timestamp"] = rfc3339(now);
  return {200, std::move(b)};
}

Reply fail(int status, const std::string& message, const std::string& field) {
  json b = {{"success", false}, {"error", message}};
  if (!field.empty()) b["field"] = field;
  return {status, std::move(b)};
}

Reply bad_body(const std::string& field, const std::string& message) {
  return fail(400, "Invalid request body: " + (field.empty() ? message : field + ": " + message), field);
}

int http_status_of(grpc::StatusCode c) {
  switch (c) {
    case grpc::StatusCode::OK: return 200;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE: return 400;
    case grpc::StatusCode::NOT_FOUND: return 404;
    case grpc::StatusCode::FAILED_PRECONDITION: return 409;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED: return 503;
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED: return 502;
    default: return 500;
  }
}

Reply from_rpc(const client::CallError& e, const std::string& what) {
  int st = http_status_of(static_cast<grpc::StatusCode>(e.code));
  std::string msg = what + ": " + e.message;
  if (st == 503) msg = "claim2cored unavailable (" + what + "): " + e.message;
  return fail(st, msg);
}

}  // namespace c2c::rest
