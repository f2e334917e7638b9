// HostFeed::complete on real /proc entries: a TaskSeen for a task that is gone (or whose tid now
// names another task) becomes its TaskExited, so a record with no exit (a fork recorded just
// before a daemon was killed) cannot leave an entry; a live task is completed as before.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <variant>

#include "daemon/loop/host_feed.hpp"
#include "host/cgroup.hpp"
#include "host/procfs_walker.hpp"

namespace c2c::daemon {
namespace {

// A fork record as the ring buffer would carry it, without a cgroup id (so /proc is read).
host::TaskEvent seen(uint32_t tgid, uint32_t tid, uint64_t start) {
  host::TaskEvent s;
  s.kind = host::TaskEventKind::New;
  s.task.tid = tid;
  s.task.start_ticks = start;
  s.task.tgid = tgid;
  s.task.comm = "c2c-feed-test";
  return s;
}

// HostFeed::complete appends the core events of one record; these records mean exactly one.
Event complete_one(HostFeed& feed, const host::TaskEvent& e) {
  std::vector<Event> out;
  feed.complete(Core{}, e, 0, out);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Event{TaskExited{}} : out.front();
}

TEST(DaemonHostFeed, ATaskSeenOfADeadTaskBecomesItsExit) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // reaped: no /proc entry any more
  const auto tid = static_cast<uint32_t>(child);
  HostFeed feed(TaskDiscovery::Off, -1);
  const Event out = complete_one(feed, seen(tid, tid, 12345));
  const auto* exited = std::get_if<TaskExited>(&out);
  ASSERT_NE(exited, nullptr) << "kind " << event_kind(out);
  EXPECT_EQ(exited->key, (TaskKey{tid, 12345}));
}

TEST(DaemonHostFeed, ATaskSeenWhoseTidNowNamesAnotherTaskBecomesItsExit) {
  const auto self = static_cast<uint32_t>(::getpid());
  const auto me = host::read_proc_task("/proc", self, self);
  ASSERT_TRUE(me);
  HostFeed feed(TaskDiscovery::Off, -1);
  const Event out = complete_one(feed, seen(self, self, me->start_ticks + 1));
  ASSERT_TRUE(std::holds_alternative<TaskExited>(out)) << "kind " << event_kind(out);

  const Event live = complete_one(feed, seen(self, self, me->start_ticks));
  const auto* s = std::get_if<TaskSeen>(&live);
  ASSERT_NE(s, nullptr) << "kind " << event_kind(live);
  EXPECT_EQ(s->task.key, (TaskKey{self, me->start_ticks}));
  EXPECT_FALSE(s->task.cgroup.empty()) << "a live task is completed with its cgroup";
}

// Issue 13: a record's cgroup id (filled by the BPF program from the same task_struct as its tid and
// start) gives the cgroup path and cpuset from the index built once: nothing per task from /proc.
// A dead child's record shows it: /proc would have turned it into its exit (the test above), the
// index completes it (its exit record follows in the ring buffer).
TEST(DaemonHostFeed, ARecordWithACgroupIdIsCompletedFromTheIndexNotFromProc) {
  HostFeed feed(TaskDiscovery::Off, -1);
  if (!feed.cgroups().by_id()) GTEST_SKIP() << "a v1 cpu hierarchy without cpuset: ids name no primary path";
  host::ParseError perr;
  const auto mounts = host::CgroupMounts::discover(&perr);
  ASSERT_TRUE(mounts) << perr.to_string();
  // The hierarchy the ids are of: the v1 cpuset one on a hybrid host (this project's CI host),
  // else cgroup v2; the own cgroup path is that hierarchy's line of /proc/self/cgroup.
  const bool cpuset = feed.cgroups().id_of() == host::CgroupIdOf::Cpuset;
  const auto mount = cpuset ? mounts->v1("cpuset") : mounts->unified();
  ASSERT_TRUE(mount);
  std::ifstream in("/proc/self/cgroup");
  std::string line, own;
  while (std::getline(in, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    const std::string controllers = line.substr(a + 1, b - a - 1);
    if (cpuset ? (("," + controllers + ",").find(",cpuset,") != std::string::npos) : line.rfind("0::", 0) == 0)
      own = line.substr(b + 1);
  }
  ASSERT_FALSE(own.empty());
  const auto dir = host::CgroupMounts::dir_of(*mount, own);
  ASSERT_TRUE(dir);
  struct stat st{};
  ASSERT_EQ(::stat(dir->c_str(), &st), 0);

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const auto tid = static_cast<uint32_t>(child);
  auto rec = seen(tid, tid, 12345);
  rec.task.cgroup_id = static_cast<uint64_t>(st.st_ino);
  for (int i = 0; i < 3; ++i) {
    const Event out = complete_one(feed, rec);
    const auto* s = std::get_if<TaskSeen>(&out);
    ASSERT_NE(s, nullptr) << "kind " << event_kind(out) << ": /proc was read";
    EXPECT_EQ(s->task.key, (TaskKey{tid, 12345}));
    EXPECT_EQ(s->task.cgroup, own);
  }
  EXPECT_EQ(feed.cgroups().walks(), 1u) << "the hierarchy is walked once";
}

// An exec by a non-leader thread retires the exec'ing thread's former tid: its start is the one
// the core knows (looked up by tid, not from a copy of every task); an unknown tid retires nothing.
TEST(DaemonHostFeed, AnExecByANonLeaderRetiresTheFormerTidTheCoreKnows) {
  const auto self = static_cast<uint32_t>(::getpid());
  const auto me = host::read_proc_task("/proc", self, self);
  ASSERT_TRUE(me);
  Core core;
  Task old;
  old.key = {4000000, 77};
  old.tgid = self;
  old.comm = "c2c-old-thread";
  ASSERT_TRUE(core.apply(TaskSeen{old}).ok());
  HostFeed feed(TaskDiscovery::Off, -1);
  auto exec = seen(self, self, me->start_ticks);
  exec.kind = host::TaskEventKind::Exec;
  exec.old_tid = 4000000;
  std::vector<Event> out;
  feed.complete(core, exec, 0, out);
  ASSERT_EQ(out.size(), 2u);
  const auto* retired = std::get_if<TaskExited>(&out[0]);
  ASSERT_NE(retired, nullptr) << "kind " << event_kind(out[0]);
  EXPECT_EQ(retired->key, (TaskKey{4000000, 77}));
  const auto* leader = std::get_if<TaskSeen>(&out[1]);
  ASSERT_NE(leader, nullptr) << "kind " << event_kind(out[1]);
  EXPECT_EQ(leader->task.key, (TaskKey{self, me->start_ticks}));

  out.clear();
  exec.old_tid = 4000001;  // not a task the core has
  feed.complete(core, exec, 0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<TaskSeen>(out[0]));
}

}  // namespace
}  // namespace c2c::daemon
