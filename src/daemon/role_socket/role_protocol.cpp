#include "daemon/role_socket/role_protocol.hpp"

#include <charconv>
#include <vector>

namespace c2c::daemon {
namespace {

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

template <class T>
bool number(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

RoleLineError bad(std::string field, std::string message) {
  return RoleLineError{"INVALID_ARGUMENT", std::move(field) + ": " + std::move(message)};
}

const char* code_of(node::RoleReply::Code c) {
  switch (c) {
    case node::RoleReply::Code::Ok: return "OK";
    case node::RoleReply::Code::Invalid: return "INVALID_ARGUMENT";
    case node::RoleReply::Code::PermissionDenied: return "PERMISSION_DENIED";
    case node::RoleReply::Code::NotFound: return "NOT_FOUND";
    case node::RoleReply::Code::StartMismatch: return "FAILED_PRECONDITION";
    case node::RoleReply::Code::CallerExited: return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

}  // namespace

std::variant<node::RoleRequest, RoleLineError> parse_role_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > kMaxRoleLine) return bad("line", "longer than " + std::to_string(kMaxRoleLine) + " bytes");
  auto w = words(line);
  if (w.empty() || w[0] != kRoleProtocol)
    return bad("version", "a request starts with " + std::string(kRoleProtocol) + " (this daemon speaks version 1)");
  if (w.size() < 2 || (w[1] != "SET" && w[1] != "CLEAR")) return bad("verb", "must be SET or CLEAR");
  const bool set = w[1] == "SET";
  if (w.size() != (set ? 5u : 4u))
    return bad("line", set ? "SET takes <tid> <start> <role>" : "CLEAR takes <tid> <start>");
  node::RoleRequest r;
  if (!number(w[2], &r.tid) || r.tid == 0) return bad("tid", "must be a positive thread id");
  if (!number(w[3], &r.start)) return bad("start", "must be a number of clock ticks (0: read it from /proc)");
  if (set) {
    r.role = std::string(w[4]);
    // The core's rule (printable ASCII, no whitespace, <= 63 bytes), checked here so that a role
    // no thread could be given never leaves the role socket's thread (issue 42).
    if (auto e = c2c::validate(Event{TaskRoleSet{{r.tid, r.start}, r.role}})) return bad(e->field, e->message);
  }
  return r;
}

std::string format_role_request(const node::RoleRequest& r) {
  std::string line = std::string(kRoleProtocol) + (r.role.empty() ? " CLEAR " : " SET ") + std::to_string(r.tid) + " " +
                     std::to_string(r.start);
  if (!r.role.empty()) line += " " + r.role;
  return line + "\n";
}

std::string format_role_reply(const node::RoleReply& r) {
  if (r.code != node::RoleReply::Code::Ok)
    return format_role_error(RoleLineError{code_of(r.code), r.field.empty() ? r.message : r.field + ": " + r.message});
  return "OK " + std::to_string(r.tid) + " " + std::to_string(r.start) + " " + std::to_string(r.tgid) + " " +
         (r.role.empty() ? "-" : r.role) + " " + (r.changed ? "1" : "0") + "\n";
}

std::string format_role_error(const RoleLineError& e) {
  std::string m = e.message;
  for (char& c : m)
    if (c == '\n' || c == '\r') c = ' ';
  return "ERR " + e.code + " " + m + "\n";
}

}  // namespace c2c::daemon
