// HostFeed::complete on real /proc entries: a TaskSeen for a task that is gone (or whose tid now
// names another task) becomes its TaskExited, so a record with no exit (a fork recorded just
// before a daemon was killed) cannot leave an entry; a live task is completed as before.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <variant>

#include "daemon/host_feed.hpp"
#include "host/procfs_walker.hpp"

namespace c2c::daemon {
namespace {

TaskSeen seen(uint32_t tgid, uint32_t tid, uint64_t start) {
  TaskSeen s;
  s.task.key = {tid, start};
  s.task.tgid = tgid;
  s.task.comm = "c2c-feed-test";
  return s;
}

TEST(DaemonHostFeed, ATaskSeenOfADeadTaskBecomesItsExit) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // reaped: no /proc entry any more
  const auto tid = static_cast<uint32_t>(child);
  HostFeed feed(TaskDiscovery::Off, "");
  const Event out = feed.complete(seen(tid, tid, 12345));
  const auto* exited = std::get_if<TaskExited>(&out);
  ASSERT_NE(exited, nullptr) << "kind " << event_kind(out);
  EXPECT_EQ(exited->key, (TaskKey{tid, 12345}));
}

TEST(DaemonHostFeed, ATaskSeenWhoseTidNowNamesAnotherTaskBecomesItsExit) {
  const auto self = static_cast<uint32_t>(::getpid());
  const auto me = host::read_proc_task("/proc", self, self);
  ASSERT_TRUE(me);
  HostFeed feed(TaskDiscovery::Off, "");
  const Event out = feed.complete(seen(self, self, me->start_ticks + 1));
  ASSERT_TRUE(std::holds_alternative<TaskExited>(out)) << "kind " << event_kind(out);

  const Event live = feed.complete(seen(self, self, me->start_ticks));
  const auto* s = std::get_if<TaskSeen>(&live);
  ASSERT_NE(s, nullptr) << "kind " << event_kind(live);
  EXPECT_EQ(s->task.key, (TaskKey{self, me->start_ticks}));
  EXPECT_FALSE(s->task.cgroup.empty()) << "a live task is completed with its cgroup";
}

}  // namespace
}  // namespace c2c::daemon
