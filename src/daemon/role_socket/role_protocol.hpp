// The role socket's line protocol, version 1 (spec/daemon.md "Task roles"): what a workload
// speaks to register the role of its own threads without gRPC (clients/c/claim2core_role.h,
// clients/python/claim2core_role.py, `claim2core role set`). One request per line, one reply
// line each, ASCII, at most kMaxRoleLine bytes:
//
//   C2C-ROLE/1 SET <tid> <start> <role>     register (start 0: the daemon reads it from /proc)
//   C2C-ROLE/1 CLEAR <tid> <start>          unregister
//   OK <tid> <start> <tgid> <role|-> <changed 0|1>
//   ERR <CODE> <message>                    CODE: a gRPC status name (PERMISSION_DENIED,
//                                           INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION,
//                                           UNAVAILABLE; RESOURCE_EXHAUSTED: a role-socket
//                                           limit, UNAUTHENTICATED: the connecting process
//                                           exited, reconnect; role_limits.hpp)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

#include "api/node_api.hpp"

namespace c2c::daemon {

inline constexpr size_t kMaxRoleLine = 256;
inline constexpr std::string_view kRoleProtocol = "C2C-ROLE/1";

struct RoleLineError {
  std::string code;     // gRPC status name
  std::string message;  // names the field
};

// A request line (without its newline) -> tid, start and role of a RoleRequest (caller unset).
// A role the core would refuse (c2c::validate: printable ASCII, no whitespace, <= 63 bytes) is
// refused here, INVALID_ARGUMENT naming `role`.
std::variant<node::RoleRequest, RoleLineError> parse_role_line(std::string_view line);
// The request line (with its newline) that parses back to `r`'s tid, start and role.
std::string format_role_request(const node::RoleRequest& r);
// The reply line (with its newline).
std::string format_role_reply(const node::RoleReply& r);
std::string format_role_error(const RoleLineError& e);

}  // namespace c2c::daemon
