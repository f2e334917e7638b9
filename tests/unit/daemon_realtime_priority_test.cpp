// realtime_priority (src/daemon/loop/realtime_priority.hpp): the calling thread takes SCHED_FIFO and
// the threads it creates afterwards inherit it (the daemon sets it before its first thread); a
// refusal leaves the thread time-shared and names the field and what is missing. Each case runs
// in a thread of its own, so the test process keeps its own policy.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "daemon/loop/realtime_priority.hpp"
#include "daemon_fifo_probe.hpp"

namespace c2c::daemon {
namespace {

// Drops CAP_SYS_NICE from the calling thread's effective set only (capabilities are per thread).
bool drop_effective_sys_nice() {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &hdr, data) != 0) return false;
  data[CAP_TO_INDEX(CAP_SYS_NICE)].effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
  return ::syscall(SYS_capset, &hdr, data) == 0;
}

TEST(RealtimePriority, TheThreadAndTheThreadsItCreatesRunFifo) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  RealtimeOutcome got;
  int self_policy = -1, child_policy = -1, child_priority = -1;
  std::thread([&] {
    got = enter_realtime(2);
    self_policy = ::sched_getscheduler(0);
    std::thread([&] {
      child_policy = ::sched_getscheduler(0);
      sched_param p{};
      ::sched_getparam(0, &p);
      child_priority = p.sched_priority;
    }).join();
  }).join();
  EXPECT_EQ(got.refused, "");
  EXPECT_EQ(got.priority, 2u);
  EXPECT_EQ(self_policy, SCHED_FIFO);
  EXPECT_EQ(child_policy, SCHED_FIFO) << "a thread created afterwards must inherit it (no reset on fork)";
  EXPECT_EQ(child_priority, 2);
}

TEST(RealtimePriority, ZeroChangesNothing) {
  RealtimeOutcome got;
  int policy = -1;
  std::thread([&] {
    got = enter_realtime(0);
    policy = ::sched_getscheduler(0);
  }).join();
  EXPECT_EQ(got.priority, 0u);
  EXPECT_EQ(got.refused, "");
  EXPECT_EQ(policy, SCHED_OTHER);
}

TEST(RealtimePriority, ARefusalLeavesTheThreadTimeSharedAndSaysWhy) {
  // Whether the kernel refuses a thread without CAP_SYS_NICE here, asked directly (RLIMIT_RTPRIO
  // may allow it), so that a refusal reported as granted cannot pass for "allowed here".
  int direct = 0;
  bool dropped = false;
  std::thread([&] {
    dropped = drop_effective_sys_nice();
    sched_param p{};
    p.sched_priority = 3;
    direct = ::sched_setscheduler(0, SCHED_FIFO, &p);
  }).join();
  ASSERT_TRUE(dropped);
  if (direct == 0) GTEST_SKIP() << "SCHED_FIFO granted without CAP_SYS_NICE (RLIMIT_RTPRIO allows it here)";
  RealtimeOutcome got;
  int policy = -1;
  std::thread([&] {
    drop_effective_sys_nice();
    got = enter_realtime(3);
    policy = ::sched_getscheduler(0);
  }).join();
  EXPECT_EQ(got.priority, 0u);
  EXPECT_EQ(policy, SCHED_OTHER);
  EXPECT_NE(got.refused.find("realtime_priority: SCHED_FIFO 3 refused"), std::string::npos) << got.refused;
  EXPECT_NE(got.refused.find("CAP_SYS_NICE"), std::string::npos) << got.refused;
}

TEST(RealtimePriority, ATimeSharedScopeLowersTheThreadAndRestoresIt) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  int inside = -1, child = -1, after = -1;
  std::thread([&] {
    enter_realtime(2);
    {
      TimeSharedScope bulk(2);
      inside = ::sched_getscheduler(0);
      std::thread([&] { child = ::sched_getscheduler(0); }).join();
    }
    after = ::sched_getscheduler(0);
  }).join();
  EXPECT_EQ(inside, SCHED_OTHER);
  EXPECT_EQ(child, SCHED_OTHER) << "a thread made inside the scope inherits the time-shared class";
  EXPECT_EQ(after, SCHED_FIFO);
}

}  // namespace
}  // namespace c2c::daemon
