#include "daemon/role_socket/role_limits.hpp"

#include <algorithm>

#include "codec/json_reader.hpp"

namespace c2c::daemon {

const char* reason_name(RoleRefusal r) {
  switch (r) {
    case RoleRefusal::None: return "none";
    case RoleRefusal::Connections: return "connections";
    case RoleRefusal::ConnectionsPerUid: return "connections_per_uid";
    case RoleRefusal::IdleTimeout: return "idle_timeout";
    case RoleRefusal::Rate: return "rate";
    case RoleRefusal::PeerExited: return "peer_exited";
    case RoleRefusal::LineTooLong: return "line_too_long";
    case RoleRefusal::UnreadReplies: return "unread_replies";
  }
  return "?";
}

std::string refusal_message(RoleRefusal r, const RoleLimits& l, uid_t uid) {
  const std::string who = "uid " + std::to_string(uid);
  switch (r) {
    case RoleRefusal::Connections:
      return "connections: " + std::to_string(l.connections) + " role-socket connections in use, " +
             std::to_string(l.privileged_reserve) +
             " of them kept for root and allowed uids (role_limits.connections, role_limits.privileged_reserve); "
             "connection closed";
    case RoleRefusal::ConnectionsPerUid:
      return "connections: " + who + " holds " + std::to_string(l.connections_per_uid) +
             " role-socket connections already (role_limits.connections_per_uid); connection closed";
    case RoleRefusal::IdleTimeout:
      return "idle: no request within " + codec::format_duration(l.idle_timeout_ns) +
             " (role_limits.idle_timeout); connection closed, reconnect";
    case RoleRefusal::Rate:
      return "rate: " + who + " is over " + std::to_string(l.rate_per_uid) + " requests/s (role_limits.rate_per_uid, " +
             "burst " + std::to_string(l.burst_per_uid) + "); not applied, retry later";
    case RoleRefusal::PeerExited:
      return "connection: the process that connected has exited; its pid may name another process now: reconnect";
    case RoleRefusal::LineTooLong: return "line: too long";
    case RoleRefusal::UnreadReplies: return "replies: not read";
    case RoleRefusal::None: break;
  }
  return "";
}

RoleRefusal RoleAdmission::admit(uid_t uid, bool privileged) {
  if (connections_ >= limits_.connections) return RoleRefusal::Connections;
  if (!privileged) {
    auto it = uids_.find(uid);
    if (it != uids_.end() && it->second.connections >= limits_.connections_per_uid) return RoleRefusal::ConnectionsPerUid;
    // The last privileged_reserve slots are root's and the allowed uids'.
    if (unprivileged_ + limits_.privileged_reserve >= limits_.connections) return RoleRefusal::Connections;
    ++uids_[uid].connections;
    ++unprivileged_;
  }
  ++connections_;
  return RoleRefusal::None;
}

void RoleAdmission::closed(uid_t uid, bool privileged) {
  if (connections_ > 0) --connections_;
  if (privileged) return;
  if (unprivileged_ > 0) --unprivileged_;
  if (auto it = uids_.find(uid); it != uids_.end() && it->second.connections > 0) --it->second.connections;
}

bool RoleAdmission::may_start(uid_t uid, bool privileged, uint32_t conn_in_flight) const {
  if (conn_in_flight >= limits_.in_flight_per_connection) return false;
  return privileged || in_flight_of(uid) < limits_.in_flight_per_uid;
}

void RoleAdmission::started(uid_t uid, bool privileged) {
  if (!privileged) ++uids_[uid].in_flight;
}

void RoleAdmission::finished(uid_t uid, bool privileged) {
  if (privileged) return;
  if (auto it = uids_.find(uid); it != uids_.end() && it->second.in_flight > 0) --it->second.in_flight;
}

double RoleAdmission::tokens_at(const PerUid& u, uint64_t now_ns) const {
  if (!u.bucket) return limits_.burst_per_uid;
  const double refill = static_cast<double>(now_ns > u.refilled_ns ? now_ns - u.refilled_ns : 0) * 1e-9 * limits_.rate_per_uid;
  return std::min<double>(limits_.burst_per_uid, u.tokens + refill);
}

bool RoleAdmission::take_token(uid_t uid, bool privileged, uint64_t now_ns) {
  if (privileged) return true;
  PerUid& u = uids_[uid];
  const double t = tokens_at(u, now_ns);
  u.bucket = true;
  u.refilled_ns = now_ns;
  if (t < 1.0) {
    u.tokens = t;
    return false;
  }
  u.tokens = t - 1.0;
  return true;
}

uint64_t RoleAdmission::token_at(uid_t uid, uint64_t now_ns) const {
  auto it = uids_.find(uid);
  if (it == uids_.end()) return now_ns;
  const double t = tokens_at(it->second, now_ns);
  if (t >= 1.0 || limits_.rate_per_uid == 0) return now_ns;
  return now_ns + static_cast<uint64_t>((1.0 - t) / limits_.rate_per_uid * 1e9) + 1;
}

void RoleAdmission::prune(uint64_t now_ns) {
  std::erase_if(uids_, [&](const auto& kv) {
    const PerUid& u = kv.second;
    return u.connections == 0 && u.in_flight == 0 && tokens_at(u, now_ns) >= limits_.burst_per_uid;
  });
}

uint32_t RoleAdmission::connections_of(uid_t uid) const {
  auto it = uids_.find(uid);
  return it == uids_.end() ? 0 : it->second.connections;
}

uint32_t RoleAdmission::in_flight_of(uid_t uid) const {
  auto it = uids_.find(uid);
  return it == uids_.end() ? 0 : it->second.in_flight;
}

}  // namespace c2c::daemon
