#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>

#include "sched/exit_info.hpp"

using namespace c2c::sched;

TEST(SchedExitInfo, KindNamesFollowTheKernelEnum) {
  EXPECT_EQ(exit_kind_name(0), "NONE");
  EXPECT_EQ(exit_kind_name(64), "UNREG");
  EXPECT_EQ(exit_kind_name(67), "SYSRQ");
  EXPECT_EQ(exit_kind_name(1026), "ERROR_STALL");
  EXPECT_EQ(exit_kind_name(5), "KIND_5");
  EXPECT_FALSE(exit_kind_is_error(64));
  EXPECT_TRUE(exit_kind_is_error(1025));
}

TEST(SchedExitInfo, ReportStopsAtNulAndAtTheBufferEnd) {
  UserExitInfo raw{};
  raw.kind = 1025;
  raw.exit_code = -3;
  std::strcpy(raw.reason, "scx_bpf_error");
  std::memset(raw.msg, 'x', sizeof raw.msg);  // no terminator: must not overrun
  const ExitReport r = to_report(raw);
  EXPECT_EQ(r.reason, "scx_bpf_error");
  EXPECT_EQ(r.msg.size(), sizeof raw.msg);
  const auto j = nlohmann::json::parse(exit_json(r));
  EXPECT_EQ(j["exit_kind"], "ERROR_BPF");
  EXPECT_EQ(j["exit_code"], -3);
}
