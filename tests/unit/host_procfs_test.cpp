// The procfs walker: a fake /proc tree (malformed and vanished tasks) and this process's threads.
#include <gtest/gtest.h>

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "host/procfs_walker.hpp"
#include "host/task_snapshot.hpp"
#include "host_fake_proc.hpp"

using namespace c2c::host;
namespace fs = std::filesystem;

namespace {

using c2c::host::testing::stat_line;

class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("c2c-host-proc-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    task(100, 100, stat_line(100, "main", 500), "main\n");
    task(100, 101, stat_line(101, "Engine) (DP0", 501), "Engine) (DP0\n");
    task(100, 102, "102 (broken", "broken\n");                 // malformed stat
    task(200, 200, stat_line(200, "other", 600), std::nullopt);  // comm vanished
    fs::create_directories(root_ / "300/task");                 // process without threads
    fs::create_directories(root_ / "self");                     // non-numeric entries are skipped
    fs::create_directories(root_ / "sys");
  }
  void TearDown() override { fs::remove_all(root_); }
  void task(uint32_t tgid, uint32_t tid, const std::string& stat, const std::optional<std::string>& comm) {
    const fs::path d = root_ / std::to_string(tgid) / "task" / std::to_string(tid);
    fs::create_directories(d);
    std::ofstream(d / "stat") << stat;
    if (comm) std::ofstream(d / "comm") << *comm;
  }
  fs::path root_;
};

TEST_F(FakeProc, WalksToleratingMalformedAndVanishedTasks) {
  ProcfsWalkOptions o;
  o.proc_root = root_;
  ProcfsWalkStats st;
  auto tasks = walk_procfs(o, &st);
  std::sort(tasks.begin(), tasks.end(), [](const auto& a, const auto& b) { return a.tid < b.tid; });
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].tid, 100u);
  EXPECT_EQ(tasks[0].tgid, 100u);
  EXPECT_EQ(tasks[0].comm, "main");
  EXPECT_EQ(tasks[0].start_ticks, 500u);
  EXPECT_EQ(tasks[1].tid, 101u);
  EXPECT_EQ(tasks[1].comm, "Engine) (DP0");
  EXPECT_EQ(tasks[1].start_ticks, 501u);
  EXPECT_EQ(st.tasks, 2u);
  EXPECT_EQ(st.malformed, 1u);
  EXPECT_EQ(st.first_error.field, "stat.comm");
  EXPECT_EQ(st.vanished, 1u);
  EXPECT_EQ(st.processes, 3u);
}

TEST_F(FakeProc, ListsEveryNumericEntryAsAProcess) {
  auto tgids = list_proc_tgids(root_);
  std::sort(tgids.begin(), tgids.end());
  EXPECT_EQ(tgids, (std::vector<uint32_t>{100, 200, 300}));
}

// A process of which the iterator's pass holds no thread is withheld; one with any thread is not
// (its other threads started after the pass: the event stream has them).
TEST(HostSnapshotGaps, WithheldAreTheListedProcessesWithNoIteratedThread) {
  std::vector<TaskInfo> iterated(3);
  iterated[0].tgid = 5, iterated[0].tid = 5;
  iterated[1].tgid = 5, iterated[1].tid = 6;
  iterated[2].tgid = 2, iterated[2].tid = 2;
  EXPECT_EQ(withheld_tgids(iterated, {7, 1, 5, 2}), (std::vector<uint32_t>{1, 7}));
  EXPECT_TRUE(withheld_tgids(iterated, {2, 5}).empty());
  EXPECT_EQ(withheld_tgids({}, {3}), (std::vector<uint32_t>{3}));
}

TEST_F(FakeProc, StatPidMustMatchDirectory) {
  task(400, 401, stat_line(999, "liar", 1), "liar\n");
  ParseError err;
  EXPECT_FALSE(read_proc_task(root_, 400, 401, &err));
  EXPECT_EQ(err.field, "stat.pid");
}

TEST_F(FakeProc, OnlyTgid) {
  ProcfsWalkOptions o;
  o.proc_root = root_;
  o.only_tgid = 100;
  EXPECT_EQ(walk_procfs(o).size(), 2u);
  o.only_tgid = 12345;  // not there
  EXPECT_TRUE(walk_procfs(o).empty());
}

TEST(HostProcfsLive, SeesOwnNamedThreadsWithCgroup) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  int ready = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      ::pthread_setname_np(::pthread_self(), ("HostUnit_" + std::to_string(i)).c_str());
      std::unique_lock lk(m);
      ++ready;
      cv.notify_all();
      cv.wait(lk, [&] { return done; });
    });
  }
  {
    std::unique_lock lk(m);
    cv.wait(lk, [&] { return ready == 3; });
  }
  ProcfsWalkOptions o;
  o.only_tgid = static_cast<uint32_t>(::getpid());
  o.read_cgroup = true;
  const auto tasks = walk_procfs(o);
  {
    std::lock_guard lk(m);
    done = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();

  int named = 0;
  for (const auto& t : tasks) {
    EXPECT_EQ(t.tgid, static_cast<uint32_t>(::getpid()));
    EXPECT_FALSE(t.cgroup.empty());
    EXPECT_GT(t.start_ticks, 0u);
    if (t.comm.rfind("HostUnit_", 0) == 0) ++named;
  }
  EXPECT_EQ(named, 3);
  EXPECT_EQ(tasks.size(), 4u);  // main + 3
}

}  // namespace
