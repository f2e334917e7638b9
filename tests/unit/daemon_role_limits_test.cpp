// The role socket's bounds and identity (issue 42, src/daemon/role_socket/role_limits.*, role_socket.*,
// task_roles.*): connection slots per uid and in all with a reserve for privileged callers, in
// flight per connection and per uid, the per-uid token bucket, the config keys that set them,
// a non-ASCII role refused at parse, and a connection's process bound by a pidfd that tells when
// it exited. The whole socket under attack: tests/integration/role_socket_attack_test.py.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/process/config.hpp"
#include "daemon/role_socket/role_limits.hpp"
#include "daemon/role_socket/role_protocol.hpp"
#include "daemon/role_socket/role_socket.hpp"
#include "daemon/role_socket/task_roles.hpp"
#include "daemon/role_socket/peer_identity.hpp"

namespace c2c::daemon {
namespace {

RoleLimits small() {
  RoleLimits l;
  l.connections = 10;
  l.connections_per_uid = 3;
  l.privileged_reserve = 4;
  l.in_flight_per_connection = 2;
  l.in_flight_per_uid = 3;
  l.rate_per_uid = 10;
  l.burst_per_uid = 5;
  return l;
}

TEST(RoleLimits, AnUnprivilegedUidHoldsAtMostItsShareAndRootAlwaysGetsIn) {
  RoleAdmission a(small());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a.admit(65534, false), RoleRefusal::None);
  EXPECT_EQ(a.admit(65534, false), RoleRefusal::ConnectionsPerUid) << "connections_per_uid";
  EXPECT_EQ(a.connections_of(65534), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a.admit(1000, false), RoleRefusal::None);
  // 6 unprivileged of 10, 4 kept for root and the allowed uids: no seventh.
  EXPECT_EQ(a.admit(1001, false), RoleRefusal::Connections) << "the privileged reserve";
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.admit(0, true), RoleRefusal::None) << "root takes the reserve";
  EXPECT_EQ(a.admit(0, true), RoleRefusal::Connections) << "every slot in use";
  a.closed(65534, false);
  EXPECT_EQ(a.admit(65534, false), RoleRefusal::None) << "the slot it freed";
  EXPECT_EQ(a.admit(1000, false), RoleRefusal::Connections) << "every slot in use";
  a.closed(0, true);
  EXPECT_EQ(a.admit(1001, false), RoleRefusal::Connections) << "a slot root freed stays root's";
  EXPECT_EQ(a.admit(0, true), RoleRefusal::None);
  EXPECT_EQ(a.unprivileged_connections(), 6u);
  EXPECT_EQ(a.connections(), 10u);
}

TEST(RoleLimits, InFlightIsBoundedPerConnectionAndPerUid) {
  RoleAdmission a(small());
  EXPECT_TRUE(a.may_start(65534, false, 0));
  EXPECT_TRUE(a.may_start(65534, false, 1));
  EXPECT_FALSE(a.may_start(65534, false, 2)) << "in_flight_per_connection";
  for (int i = 0; i < 3; ++i) a.started(65534, false);
  EXPECT_FALSE(a.may_start(65534, false, 0)) << "in_flight_per_uid, over all its connections";
  EXPECT_TRUE(a.may_start(1000, false, 0)) << "another uid is not held up";
  EXPECT_TRUE(a.may_start(0, true, 0)) << "privileged uids have no per-uid bound";
  EXPECT_FALSE(a.may_start(0, true, 2)) << "but the per-connection one";
  a.finished(65534, false);
  EXPECT_TRUE(a.may_start(65534, false, 0));
  EXPECT_EQ(a.in_flight_of(65534), 2u);
}

TEST(RoleLimits, ARateTokenBucketPerUid) {
  RoleAdmission a(small());  // 10/s, burst 5
  const uint64_t t0 = 1'000'000'000;
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(a.take_token(65534, false, t0)) << i;
  EXPECT_FALSE(a.take_token(65534, false, t0)) << "the burst is used up";
  EXPECT_TRUE(a.take_token(1000, false, t0)) << "another uid has its own bucket";
  EXPECT_TRUE(a.take_token(0, true, t0)) << "privileged uids are not rate-limited";
  const uint64_t at = a.token_at(65534, t0);
  EXPECT_GT(at, t0);
  EXPECT_LE(at, t0 + 100'000'001) << "one token per 100 ms";
  EXPECT_FALSE(a.take_token(65534, false, at - 2'000'000));
  EXPECT_TRUE(a.take_token(65534, false, at));
  EXPECT_FALSE(a.take_token(65534, false, at));
  // Reconnecting does not refill the bucket: it is kept while not full, dropped once it is.
  a.prune(at);
  EXPECT_FALSE(a.take_token(65534, false, at)) << "pruned too early";
  a.prune(at + 10'000'000'000ull);
  EXPECT_EQ(a.in_flight_of(65534), 0u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(a.take_token(65534, false, at + 10'000'000'000ull));
}

TEST(RoleLimits, TheConfigKeysSetTheLimitsAndBadValuesNameTheKey) {
  DaemonConfig c;
  FieldError err;
  ASSERT_TRUE(parse_config("role_limits:\n  idle_timeout: 2s\n  connections: 40\n  connections_per_uid: 8\n"
                           "  privileged_reserve: 8\n  in_flight_per_connection: 2\n  in_flight_per_uid: 6\n"
                           "  rate_per_uid: 50\n  burst_per_uid: 20\n",
                           &c, &err))
      << err.field << ": " << err.message;
  EXPECT_EQ(c.role_limits.idle_timeout_ns, 2'000'000'000ull);
  EXPECT_EQ(c.role_limits.connections, 40u);
  EXPECT_EQ(c.role_limits.connections_per_uid, 8u);
  EXPECT_EQ(c.role_limits.privileged_reserve, 8u);
  EXPECT_EQ(c.role_limits.in_flight_per_connection, 2u);
  EXPECT_EQ(c.role_limits.in_flight_per_uid, 6u);
  EXPECT_EQ(c.role_limits.rate_per_uid, 50u);
  EXPECT_EQ(c.role_limits.burst_per_uid, 20u);
  const std::pair<const char*, const char*> bad[] = {
      {"role_limits:\n  idle_timeout: 0s\n", "role_limits.idle_timeout"},
      {"role_limits:\n  connections: 0\n", "role_limits.connections"},
      {"role_limits:\n  rate_per_uid: 0\n", "role_limits.rate_per_uid"},
      {"role_limits:\n  burst_per_uid: x\n", "role_limits.burst_per_uid"},
      {"role_limits:\n  in_flight_per_connection: 0\n", "role_limits.in_flight_per_connection"},
      {"role_limits:\n  connections: 8\n  privileged_reserve: 8\n", "role_limits.privileged_reserve"},
      {"role_limits:\n  connections: 8\n  privileged_reserve: 4\n  connections_per_uid: 5\n",
       "role_limits.connections_per_uid"},
      {"role_limits:\n  nonsense: 1\n", "role_limits.nonsense"},
      {"role_limits: 3\n", "role_limits"},
      {"role_peer_identity: pidfd\n", "role_peer_identity"},
  };
  for (const auto& [yaml, field] : bad) {
    DaemonConfig keep;
    FieldError e;
    EXPECT_FALSE(parse_config(yaml, &keep, &e)) << yaml;
    EXPECT_EQ(e.field, field) << yaml << " -> " << e.message;
    EXPECT_EQ(keep, DaemonConfig{}) << "a refused config changes nothing";
  }
  DaemonConfig next = c;
  next.role_limits.rate_per_uid = 51;
  const auto changed = restart_only_changes(c, next);
  EXPECT_NE(std::find(changed.begin(), changed.end(), "role_limits"), changed.end());
  // role_peer_identity: the older kernels' binding, forced (so it is tested on any kernel).
  DaemonConfig st;
  ASSERT_TRUE(parse_config("role_peer_identity: start-time\n", &st, &err)) << err.field << ": " << err.message;
  EXPECT_EQ(st.role_peer_identity, PeerIdentityMode::StartTime);
  EXPECT_EQ(DaemonConfig{}.role_peer_identity, PeerIdentityMode::Auto);
  const auto changed2 = restart_only_changes(DaemonConfig{}, st);
  EXPECT_NE(std::find(changed2.begin(), changed2.end(), "role_peer_identity"), changed2.end());
  // The defaults are valid and keep root's reserve.
  EXPECT_FALSE(validate(DaemonConfig{}));
  EXPECT_GT(RoleLimits{}.privileged_reserve, 0u);
}

TEST(RoleLimits, RefusalsNameTheirConfigKey) {
  const RoleLimits l;
  EXPECT_NE(refusal_message(RoleRefusal::ConnectionsPerUid, l, 65534).find("role_limits.connections_per_uid"),
            std::string::npos);
  EXPECT_NE(refusal_message(RoleRefusal::Connections, l, 65534).find("role_limits.privileged_reserve"), std::string::npos);
  EXPECT_NE(refusal_message(RoleRefusal::IdleTimeout, l, 65534).find("role_limits.idle_timeout"), std::string::npos);
  EXPECT_NE(refusal_message(RoleRefusal::Rate, l, 65534).find("role_limits.rate_per_uid"), std::string::npos);
  EXPECT_NE(refusal_message(RoleRefusal::PeerExited, l, 65534).find("reconnect"), std::string::npos);
  for (RoleRefusal r : kRoleRefusals) EXPECT_STRNE(reason_name(r), "?");
}

// Issue 42, finding 1: a role with a byte that is not ASCII is refused at parse, naming `role`
// (it used to reach the durable state, whose JSON encoder threw and aborted the daemon).
TEST(RoleProtocolIssue42, ANonAsciiRoleIsRefusedAtParse) {
  for (const std::string& role : std::vector<std::string>{"dec\xff" "ode", "d\xc3\xa9" "code", "de\x7f" "x"}) {
    auto r = parse_role_line("C2C-ROLE/1 SET 4107 0 " + role);
    ASSERT_TRUE(std::holds_alternative<RoleLineError>(r)) << role;
    const auto& e = std::get<RoleLineError>(r);
    EXPECT_EQ(e.code, "INVALID_ARGUMENT");
    EXPECT_EQ(e.message.rfind("role: ", 0), 0u) << e.message;
  }
  EXPECT_EQ(format_role_error({"INVALID_ARGUMENT", "role: x"}), "ERR INVALID_ARGUMENT role: x\n");
  node::RoleRequest q;
  q.tid = 7;
  q.start = 9;
  q.role = "decode";
  EXPECT_EQ(format_role_request(q), "C2C-ROLE/1 SET 7 9 decode\n");
  q.role.clear();
  EXPECT_EQ(format_role_request(q), "C2C-ROLE/1 CLEAR 7 9\n");
}

// Issue 42, finding 4: a connection's process is bound by a pidfd, which tells when that process
// exited (its pid may then be reused); the caller's pid alone cannot.
TEST(RolePeerIdentity, APidfdOfThePeerTellsWhenItExited) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the peer: holds its end of the pair, waits, exits
    char b;
    close(sv[0]);
    [[maybe_unused]] auto n = read(go[0], &b, 1);
    _exit(0);
  }
  close(go[0]);
  // sv[0]'s peer credentials are the parent's (socketpair's creator): a connected socket names the
  // process that made the connection, as accept does for the role socket.
  std::string err;
  PeerCred me{getpid(), getuid(), getgid()};
  PeerIdentity self;
  ASSERT_TRUE(bind_peer(sv[0], me, PeerIdentityMode::Auto, "/proc", &self, &err)) << err;
  ASSERT_GE(self.pidfd, 0) << "this host's kernel has SO_PEERPIDFD (>= 6.5)";
  EXPECT_FALSE(peer_gone(self)) << "this process lives";
  close(self.pidfd);
  // The start-time path (the kernels before SO_PEERPIDFD, or role_peer_identity: start-time) on
  // the child, whose uid is this process's:
  PeerIdentity kid;
  ASSERT_TRUE(bind_peer(-1, PeerCred{child, getuid(), getgid()}, PeerIdentityMode::StartTime, "/proc", &kid, &err))
      << err;
  EXPECT_EQ(kid.pidfd, -1);
  ASSERT_TRUE(kid.start_ticks.has_value());
  EXPECT_EQ(kid.start_ticks, process_start_ticks("/proc", child));
  EXPECT_FALSE(peer_gone(kid));
  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(peer_gone(kid)) << "the child exited (and was reaped: its pid is free for reuse)";
  EXPECT_TRUE(peer_gone(PeerIdentity{getpid(), -1, std::nullopt})) << "neither pidfd nor start time: fail closed";
  EXPECT_TRUE(process_exited(-1)) << "no pidfd: fail closed";
  close(go[1]);
  close(sv[0]);
  close(sv[1]);
}

// The start-time binding against a /proc of our own making: a pid whose start changed is another
// process (reused); one whose uid is not the connection's was reused before the accept.
TEST(RolePeerIdentity, AReusedPidIsToldApartByItsStartTime) {
  const auto root = std::filesystem::temp_directory_path() / ("c2c-peer-identity-" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "4242");
  auto write_proc = [&](uint64_t start, uint32_t euid) {
    std::ofstream(root / "4242" / "stat")
        << "4242 (a b) c) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " << start << " 0 0\n";
    std::ofstream(root / "4242" / "status") << "Name:\tx\nUid:\t" << euid + 1 << "\t" << euid << "\t0\t0\n";
  };
  write_proc(1000, 65534);
  std::string err;
  PeerIdentity id;
  ASSERT_TRUE(bind_peer(-1, PeerCred{4242, 65534, 65534}, PeerIdentityMode::StartTime, root, &id, &err)) << err;
  EXPECT_EQ(id.start_ticks, 1000u);
  EXPECT_FALSE(peer_gone(id, root)) << "the same process";
  write_proc(1001, 65534);
  EXPECT_TRUE(peer_gone(id, root)) << "the pid now names a process that started a tick later: reused";
  std::filesystem::remove_all(root / "4242");
  EXPECT_TRUE(peer_gone(id, root)) << "no such process";
  // Reused between connect() and accept by a process of another uid (root's): refused at once.
  std::filesystem::create_directories(root / "4242");
  write_proc(2000, 0);
  EXPECT_FALSE(bind_peer(-1, PeerCred{4242, 65534, 65534}, PeerIdentityMode::StartTime, root, &id, &err));
  EXPECT_NE(err.find("not the process that connected"), std::string::npos) << err;
  EXPECT_FALSE(bind_peer(-1, PeerCred{4343, 65534, 65534}, PeerIdentityMode::StartTime, root, &id, &err));
  EXPECT_NE(err.find("no such process"), std::string::npos) << err;
  EXPECT_EQ(parse_peer_identity_mode("start-time"), PeerIdentityMode::StartTime);
  EXPECT_EQ(parse_peer_identity_mode("auto"), PeerIdentityMode::Auto);
  EXPECT_FALSE(parse_peer_identity_mode("pidfd"));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace c2c::daemon
