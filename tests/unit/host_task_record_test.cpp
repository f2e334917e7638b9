// Decoding of struct c2c_task_record as the iterator and the ring buffer deliver it.
#include <gtest/gtest.h>

#include <cstring>

#include "claim2core_abi.hpp"
#include "host/task_record.hpp"

using namespace c2c::host;

namespace {

c2c_task_record rec(uint32_t kind, uint32_t tid, const char* comm) {
  c2c_task_record r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  r.tid = tid;
  r.tgid = 100;
  r.reserved = 55;
  r.start_ticks = 12345;
  r.cgroup_id = 777;
  std::strncpy(r.comm, comm, sizeof r.comm);
  return r;
}

TEST(HostTaskRecord, DecodesEveryKind) {
  for (uint32_t k = C2C_EV_SNAPSHOT; k <= C2C_EV_RENAME; ++k) {
    const auto r = rec(k, 101, "EngineCore_DP0");
    ParseError err;
    const auto e = decode_task_record(&r, sizeof r, &err);
    ASSERT_TRUE(e) << err.to_string();
    EXPECT_EQ(static_cast<uint32_t>(e->kind), k);
    EXPECT_EQ(e->task.tid, 101u);
    EXPECT_EQ(e->task.tgid, 100u);
    EXPECT_EQ(e->task.start_ticks, 12345u);
    EXPECT_EQ(e->task.cgroup_id, 777u);
    EXPECT_EQ(e->task.comm, "EngineCore_DP0");
    EXPECT_EQ(e->old_tid, k == C2C_EV_EXEC ? 55u : 0u);
  }
}

TEST(HostTaskRecord, UnterminatedCommIsBounded) {
  auto r = rec(C2C_EV_RENAME, 5, "");
  std::memset(r.comm, 'x', sizeof r.comm);  // 16 bytes, no NUL
  const auto e = decode_task_record(&r, sizeof r);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->task.comm, std::string(16, 'x'));
}

TEST(HostTaskRecord, RejectsBadInputNamingTheField) {
  const auto good = rec(C2C_EV_NEW, 5, "a");
  ParseError err;
  EXPECT_FALSE(decode_task_record(&good, sizeof good - 1, &err));
  EXPECT_EQ(err.field, "record.size");
  const auto bad_kind = rec(99, 5, "a");
  EXPECT_FALSE(decode_task_record(&bad_kind, sizeof bad_kind, &err));
  EXPECT_EQ(err.field, "record.kind");
  const auto no_tid = rec(C2C_EV_EXIT, 0, "a");
  EXPECT_FALSE(decode_task_record(&no_tid, sizeof no_tid, &err));
  EXPECT_EQ(err.field, "record.tid");
}

}  // namespace
