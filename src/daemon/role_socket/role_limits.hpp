// The role socket's bounds (issue 42, spec/daemon.md "Task roles", "Role socket limits"): any
// local uid may connect, so what one uid can hold or ask is bounded, and root and the allowed
// uids (privileged) can always get in. Pure bookkeeping, no fds and no clock of its own: the role
// socket's thread (role_socket.cpp) is its only user and passes the time in.
//
//  * connections: at most `connections` at once; an unprivileged uid at most
//    `connections_per_uid`, and all unprivileged uids together at most `connections` -
//    `privileged_reserve`, so the last `privileged_reserve` slots are only ever taken by root or an
//    allowed uid. Every connection is accepted and its credentials read; one over a limit gets
//    `ERR RESOURCE_EXHAUSTED` and is closed (the listening socket's backlog never fills up).
//  * idle: a connection must send its next complete request within `idle_timeout` of its accept
//    or of its last reply (partial bytes do not count: a client dripping bytes is idle too).
//  * in flight: a connection has at most `in_flight_per_connection` requests handed to the
//    engine and not yet answered, an unprivileged uid at most `in_flight_per_uid` over all its
//    connections; past that the socket is not read (backpressure: the kernel's socket buffer is
//    the client's queue, nothing grows in the daemon).
//  * rate: an unprivileged uid's requests take a token each from a bucket of `burst_per_uid`
//    tokens refilled at `rate_per_uid` per second; a request without a token is answered
//    `ERR RESOURCE_EXHAUSTED` (state unchanged) and the connection is not read again until the
//    bucket has a token.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>

namespace c2c::daemon {

struct RoleLimits {
  uint64_t idle_timeout_ns = 10'000'000'000ull;
  uint32_t connections = 256;
  uint32_t connections_per_uid = 16;
  uint32_t privileged_reserve = 32;
  uint32_t in_flight_per_connection = 4;
  uint32_t in_flight_per_uid = 16;
  uint32_t rate_per_uid = 200;   // requests per second
  uint32_t burst_per_uid = 400;  // tokens the bucket holds
  bool operator==(const RoleLimits&) const = default;
};

// Why the role socket refused something (the `reason` label of claim2core_role_refusals_total).
enum class RoleRefusal : uint8_t {
  None,
  Connections,        // every slot an unprivileged uid may take (or every slot) is in use
  ConnectionsPerUid,  // this uid holds connections_per_uid already
  IdleTimeout,        // no request within idle_timeout
  Rate,               // the uid's token bucket is empty
  PeerExited,         // the process that connected has exited (its pid may be reused)
  LineTooLong,        // a line longer than kMaxRoleLine
  UnreadReplies,      // the client does not read its replies (its receive buffer is full)
};
const char* reason_name(RoleRefusal r);
inline constexpr RoleRefusal kRoleRefusals[] = {RoleRefusal::Connections, RoleRefusal::ConnectionsPerUid,
                                                RoleRefusal::IdleTimeout, RoleRefusal::Rate,
                                                RoleRefusal::PeerExited,  RoleRefusal::LineTooLong,
                                                RoleRefusal::UnreadReplies};

// The refusal line's message (after "ERR RESOURCE_EXHAUSTED "), naming the limit's config key.
std::string refusal_message(RoleRefusal r, const RoleLimits& l, uid_t uid);

class RoleAdmission {
 public:
  explicit RoleAdmission(RoleLimits l) : limits_(l) {}
  const RoleLimits& limits() const { return limits_; }

  // A new connection of `uid`: None (and counted) or why it is refused (not counted).
  RoleRefusal admit(uid_t uid, bool privileged);
  void closed(uid_t uid, bool privileged);

  // Whether a connection with `conn_in_flight` requests outstanding may hand the engine another.
  bool may_start(uid_t uid, bool privileged, uint32_t conn_in_flight) const;
  void started(uid_t uid, bool privileged);
  void finished(uid_t uid, bool privileged);

  // One token of the uid's bucket at `now_ns` (privileged uids are not rate-limited): false when
  // the bucket is empty.
  bool take_token(uid_t uid, bool privileged, uint64_t now_ns);
  // When the uid's bucket has a token again (now_ns when it has one).
  uint64_t token_at(uid_t uid, uint64_t now_ns) const;

  // Drops the uids with no connection, nothing in flight and a full bucket (a uid that hangs up
  // and reconnects keeps its emptied bucket until it refilled): what is kept stays bounded.
  void prune(uint64_t now_ns);

  size_t connections() const { return connections_; }
  size_t unprivileged_connections() const { return unprivileged_; }
  uint32_t connections_of(uid_t uid) const;
  uint32_t in_flight_of(uid_t uid) const;

 private:
  struct PerUid {
    uint32_t connections = 0, in_flight = 0;
    double tokens = 0;
    uint64_t refilled_ns = 0;
    bool bucket = false;  // tokens/refilled_ns set (a uid starts with a full bucket)
  };
  double tokens_at(const PerUid& u, uint64_t now_ns) const;
  RoleLimits limits_;
  size_t connections_ = 0, unprivileged_ = 0;
  std::unordered_map<uid_t, PerUid> uids_;  // unprivileged uids with a connection or a bucket
};

}  // namespace c2c::daemon
