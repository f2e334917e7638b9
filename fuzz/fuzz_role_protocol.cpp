// fuzz_role_protocol: bytes -> the role socket's line protocol (src/daemon/role_socket/role_protocol.*,
// issue 42), split into lines as the role socket splits what it reads. Checks, on every line:
//  * parse_role_line never throws and never crashes;
//  * an accepted request has a tid > 0 and a role that is empty (CLEAR) or 1..63 bytes of
//    printable ASCII without whitespace (0x21..0x7e), checked here byte by byte, not with the
//    parser's own rule;
//  * an accepted request re-formats (format_role_request) to one line that parses to the same
//    request;
//  * a refusal names its field ("<field>: ...") with a known status code, and its reply line
//    (format_role_error) is one line: a single '\n', at its end;
//  * a reply built from the input's bytes (format_role_reply, any code, any role and message) is
//    one line too: no client ever reads half a reply as the next one.
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "daemon/role_socket/role_protocol.hpp"
#include "fuzz/harness_support.hpp"

namespace {

using c2c::daemon::RoleLineError;

[[noreturn]] void fail(const std::string& what, std::string_view line) {
  std::string shown;
  for (unsigned char ch : line) {
    char b[8];
    std::snprintf(b, sizeof b, ch >= 0x20 && ch < 0x7f ? "%c" : "\\x%02x", ch);
    shown += b;
  }
  std::fprintf(stderr, "fuzz_role_protocol: %s\nline: %s\n", what.c_str(), shown.c_str());
  c2c::fuzz::die();
}

void one_line(const std::string& text, std::string_view line) {
  if (text.empty() || text.back() != '\n' || text.find('\n') != text.size() - 1)
    fail("a reply or request line is not exactly one line: " + text, line);
}

bool role_bytes_ok(const std::string& role) {
  if (role.empty() || role.size() > 63) return false;
  for (unsigned char ch : role)
    if (ch < 0x21 || ch > 0x7e) return false;
  return true;
}

void check_line(std::string_view line) {
  static const std::set<std::string> kCodes = {"INVALID_ARGUMENT"};
  auto parsed = c2c::daemon::parse_role_line(line);
  if (auto* e = std::get_if<RoleLineError>(&parsed)) {
    if (!kCodes.count(e->code)) fail("a parse refusal with code " + e->code, line);
    const size_t colon = e->message.find(": ");
    if (colon == std::string::npos || colon == 0) fail("a parse refusal names no field: " + e->message, line);
    one_line(c2c::daemon::format_role_error(*e), line);
    return;
  }
  const auto& r = std::get<c2c::node::RoleRequest>(parsed);
  if (r.tid == 0) fail("accepted tid 0", line);
  if (!r.role.empty() && !role_bytes_ok(r.role)) fail("accepted a role that is not 1..63 printable ASCII bytes", line);
  const std::string again = c2c::daemon::format_role_request(r);
  one_line(again, line);
  auto back = c2c::daemon::parse_role_line(std::string_view(again).substr(0, again.size() - 1));
  const auto* same = std::get_if<c2c::node::RoleRequest>(&back);
  if (same == nullptr) fail("the re-formatted request does not parse: " + again, line);
  if (same->tid != r.tid || same->start != r.start || same->role != r.role)
    fail("the re-formatted request parses to another one: " + again, line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  // As the role socket does: a line ends at '\n'; the parser takes it without the newline.
  size_t from = 0;
  while (from <= in.size()) {
    const size_t nl = in.find('\n', from);
    const std::string_view line = in.substr(from, nl == std::string_view::npos ? std::string_view::npos : nl - from);
    check_line(line);
    if (nl == std::string_view::npos) break;
    from = nl + 1;
  }
  // Replies built from the input: every code, the input's bytes as role, field and message.
  if (size > 0) {
    c2c::node::RoleReply reply;
    reply.code = static_cast<c2c::node::RoleReply::Code>(data[0] % 6);
    reply.tid = static_cast<uint32_t>(size);
    reply.role = std::string(in.substr(1, 63));
    reply.field = std::string(in.substr(0, size / 2));
    reply.message = std::string(in);
    reply.changed = (data[0] & 0x80) != 0;
    if (reply.code == c2c::node::RoleReply::Code::Ok) {
      // An OK reply names the role the daemon accepted: only such roles reach it.
      if (!role_bytes_ok(reply.role)) reply.role.clear();
    }
    one_line(c2c::daemon::format_role_reply(reply), in);
    one_line(c2c::daemon::format_role_error({"UNAVAILABLE", std::string(in)}), in);
  }
  return 0;
}
