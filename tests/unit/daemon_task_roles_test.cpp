// RegisterTaskRole's daemon pieces (issue #14, spec/daemon.md "Task roles"): the role socket's
// line protocol, the own-thread-group rule, the /proc read of the target, and roles in the
// durable state (snapshot and log records).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "daemon/durable/durable_state.hpp"
#include "daemon/role_socket/role_protocol.hpp"
#include "daemon/role_socket/task_roles.hpp"

namespace c2c::daemon {
namespace {

node::RoleRequest parsed(std::string_view line) {
  auto r = parse_role_line(line);
  if (auto* e = std::get_if<RoleLineError>(&r)) ADD_FAILURE() << line << ": " << e->code << " " << e->message;
  return std::holds_alternative<node::RoleRequest>(r) ? std::get<node::RoleRequest>(r) : node::RoleRequest{};
}

std::string refusal_of(std::string_view line) {
  auto r = parse_role_line(line);
  if (auto* e = std::get_if<RoleLineError>(&r)) return e->code + " " + e->message;
  return "accepted";
}

TEST(RoleProtocol, SetAndClearLines) {
  auto set = parsed("C2C-ROLE/1 SET 4107 7001 decode");
  EXPECT_EQ(set.tid, 4107u);
  EXPECT_EQ(set.start, 7001u);
  EXPECT_EQ(set.role, "decode");
  auto clear = parsed("C2C-ROLE/1 CLEAR 4107 0\r");
  EXPECT_EQ(clear.tid, 4107u);
  EXPECT_EQ(clear.start, 0u);
  EXPECT_EQ(clear.role, "");
}

TEST(RoleProtocol, MalformedLinesNameTheField) {
  EXPECT_EQ(refusal_of("C2C-ROLE/2 SET 1 0 decode").rfind("INVALID_ARGUMENT version:", 0), 0u);
  EXPECT_EQ(refusal_of("C2C-ROLE/1 PUT 1 0 decode").rfind("INVALID_ARGUMENT verb:", 0), 0u);
  EXPECT_EQ(refusal_of("C2C-ROLE/1 SET 0 0 decode").rfind("INVALID_ARGUMENT tid:", 0), 0u);
  EXPECT_EQ(refusal_of("C2C-ROLE/1 SET x 0 decode").rfind("INVALID_ARGUMENT tid:", 0), 0u);
  EXPECT_EQ(refusal_of("C2C-ROLE/1 SET 1 -1 decode").rfind("INVALID_ARGUMENT start:", 0), 0u);
  EXPECT_EQ(refusal_of("C2C-ROLE/1 SET 1 0 two words").rfind("INVALID_ARGUMENT line:", 0), 0u);
  EXPECT_EQ(refusal_of("C2C-ROLE/1 SET 1 0 " + std::string(300, 'r')).rfind("INVALID_ARGUMENT line:", 0), 0u);
}

TEST(RoleProtocol, RepliesAreOneLine) {
  node::RoleReply ok;
  ok.tid = 4107;
  ok.start = 7001;
  ok.tgid = 4101;
  ok.role = "decode";
  ok.changed = true;
  EXPECT_EQ(format_role_reply(ok), "OK 4107 7001 4101 decode 1\n");
  ok.role.clear();
  ok.changed = false;
  EXPECT_EQ(format_role_reply(ok), "OK 4107 7001 4101 - 0\n");
  node::RoleReply denied;
  denied.code = node::RoleReply::Code::PermissionDenied;
  denied.message = "uid 65534 may label\nonly its own threads";
  EXPECT_EQ(format_role_reply(denied), "ERR PERMISSION_DENIED uid 65534 may label only its own threads\n");
  node::RoleReply bad;
  bad.code = node::RoleReply::Code::Invalid;
  bad.field = "role";
  bad.message = "longer than 63 bytes";
  EXPECT_EQ(format_role_reply(bad), "ERR INVALID_ARGUMENT role: longer than 63 bytes\n");
}

TEST(RoleAuth, AProcessMayLabelOnlyItsOwnThreadsUnlessPrivileged) {
  const RoleTarget t{4107, 4101, 7001, "decode"};
  EXPECT_FALSE(role_refusal(node::RoleCaller{4101, 1000, false}, t)) << "its own thread group";
  auto refused = role_refusal(node::RoleCaller{4200, 1000, false}, t);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("belongs to process 4101"), std::string::npos) << *refused;
  EXPECT_FALSE(role_refusal(node::RoleCaller{4200, 0, true}, t)) << "root or an allowed uid";
  // The thread's own tid is not its thread group: a non-leader thread's pid is not enough.
  EXPECT_TRUE(role_refusal(node::RoleCaller{4107, 1000, false}, t));
}

TEST(RoleAuth, TheTargetIsReadFromProc) {
  uint32_t tid = 0;
  std::thread th([&] { tid = static_cast<uint32_t>(syscall(SYS_gettid)); });
  th.join();  // gone now: its tid names no task (until reused)
  auto self = read_role_target("/proc", static_cast<uint32_t>(syscall(SYS_gettid)));
  ASSERT_TRUE(self);
  EXPECT_EQ(self->tgid, static_cast<uint32_t>(getpid()));
  EXPECT_GT(self->start, 0u);
  EXPECT_FALSE(read_role_target("/proc", 0));
  EXPECT_FALSE(read_role_target("/proc", 4194305)) << "beyond pid_max";
}

TEST(RoleAuth, ACallerInTheDaemonsPidNamespaceNamesHostTids) {
  const auto self = static_cast<uint32_t>(getpid());
  EXPECT_EQ(caller_tid_in_daemon_ns("/proc", self, 4107), 4107u) << "same namespace: as given";
  EXPECT_EQ(caller_tid_in_daemon_ns("/proc", 0, 4107), 4107u) << "no caller pid (gRPC): as given";
}

TEST(RoleDurableState, RolesRoundTripInTheSnapshotAndTheLog) {
  DurableState s;
  s.put_role(TaskRoleSet{{20, 5}, "decode"});
  s.put_role(TaskRoleSet{{10, 3}, "prefill"});
  s.put_role(TaskRoleSet{{20, 6}, "decode"});  // a new task under tid 20 replaces the old one
  ASSERT_EQ(s.roles.size(), 2u);
  EXPECT_EQ(s.roles[0].key.tid, 10u);
  EXPECT_EQ(s.role(20)->key.start, 6u);
  DurableState back;
  FieldError err;
  ASSERT_TRUE(decode_state(encode_state(s), &back, &err)) << err.field << ": " << err.message;
  EXPECT_EQ(back, s);
  // An empty role removes the registration; a state without roles has no "roles" member.
  std::vector<StateChange> changes{PutRole{TaskRoleSet{{10, 3}, ""}}};
  uint64_t seq = 0;
  std::vector<StateChange> decoded;
  ASSERT_TRUE(decode_changes(encode_changes(7, changes), &seq, &decoded, &err)) << err.field;
  for (const auto& c : decoded) apply_change(back, c);
  ASSERT_EQ(back.roles.size(), 1u);
  back.delete_role(20);
  EXPECT_TRUE(back.roles.empty());
  EXPECT_EQ(encode_state(back).find("\"roles\""), std::string::npos);
}

TEST(RoleDurableState, AMalformedRoleIsAnErrorNamingTheField) {
  DurableState s;
  s.put_role(TaskRoleSet{{20, 5}, "decode"});
  std::string text = encode_changes(1, {PutRole{TaskRoleSet{{20, 5}, "decode"}}});
  text.replace(text.find("\"decode\""), 8, "\"two words\"");
  uint64_t seq = 0;
  std::vector<StateChange> out;
  FieldError err;
  EXPECT_FALSE(decode_changes(text, &seq, &out, &err));
  EXPECT_EQ(err.field, "changes[0].putRole.role") << err.message;
}

}  // namespace
}  // namespace c2c::daemon
