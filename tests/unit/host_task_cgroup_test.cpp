// Cgroup/cpuset enrichment of discovered tasks, the cgroup id index and the core event mapping.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/core_events.hpp"
#include "host/task_cgroup.hpp"

using namespace c2c::host;
namespace fs = std::filesystem;

namespace {

class FakeProcCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("c2c-host-tcg-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    dir_ = root_ / "proc/10/task/11";
    fs::create_directories(dir_);
    fs::create_directories(root_ / "cpuset/kubepods/podX");
    std::ofstream(root_ / "cpuset/kubepods/podX/cpuset.effective_cpus") << "1,3\n";
    stat(700);
    std::ofstream(dir_ / "comm") << "EngineCore_DP0\n";
    std::ofstream(dir_ / "cgroup") << "3:cpuset:/kubepods/podX\n0::/\n";
    std::vector<MountEntry> m = {{"/", (root_ / "cpuset").string(), "cgroup", "cgroup", {"rw", "cpuset"}}};
    mounts_ = CgroupMounts::from_mountinfo(m);
    task_.tid = 11;
    task_.tgid = 10;
    task_.start_ticks = 700;
    task_.comm = "EngineCore_DP0";
  }
  void TearDown() override { fs::remove_all(root_); }
  void stat(uint64_t start) {
    std::ofstream(dir_ / "stat") << "11 (EngineCore_DP0) S 1 1 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " << start
                                 << " 0 0\n";
  }
  fs::path root_, dir_;
  CgroupMounts mounts_;
  TaskInfo task_;
};

TEST_F(FakeProcCgroup, FillsPathAndCpuset) {
  ParseError err;
  ASSERT_TRUE(fill_cgroup_from_proc(task_, &mounts_, &err, root_ / "proc")) << err.to_string();
  EXPECT_EQ(task_.cgroup, "/kubepods/podX");
  ASSERT_TRUE(task_.cpuset);
  EXPECT_EQ(task_.cpuset->to_string(), "1,3");
  const c2c::Task core = to_core_task(task_);
  EXPECT_EQ(core.key, (c2c::TaskKey{11, 700}));
  EXPECT_EQ(core.cgroup, "/kubepods/podX");
}

TEST_F(FakeProcCgroup, ReusedTidLeavesTaskUnchanged) {
  stat(701);  // the tid now belongs to a newer task (INV-2)
  const TaskInfo before = task_;
  ParseError err;
  EXPECT_FALSE(fill_cgroup_from_proc(task_, &mounts_, &err, root_ / "proc"));
  EXPECT_EQ(err.field, "task");
  EXPECT_EQ(task_, before);
}

TEST_F(FakeProcCgroup, GoneOrMalformedLeavesTaskUnchanged) {
  const TaskInfo before = task_;
  std::ofstream(dir_ / "cgroup") << "nonsense\n";
  ParseError err;
  EXPECT_FALSE(fill_cgroup_from_proc(task_, &mounts_, &err, root_ / "proc"));
  EXPECT_EQ(err.field, "cgroup line 1");
  fs::remove(dir_ / "cgroup");
  EXPECT_FALSE(fill_cgroup_from_proc(task_, &mounts_, &err, root_ / "proc"));
  EXPECT_EQ(err.field, "task");
  EXPECT_EQ(task_, before);
}

TEST(HostCgroupIdIndex, MapsInodeNumbersToPaths) {
  const fs::path root = fs::temp_directory_path() / ("c2c-host-cgid-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "kubepods.slice/pod.slice/ctr.scope");
  fs::create_directories(root / "system.slice");
  auto ino = [](const fs::path& p) {
    struct stat st{};
    EXPECT_EQ(::stat(p.c_str(), &st), 0);
    return static_cast<uint64_t>(st.st_ino);
  };
  const auto idx = CgroupIdIndex::build(CgroupMount{root, "/"});
  EXPECT_EQ(idx.size(), 5u);
  EXPECT_EQ(idx.path(ino(root)), "/");
  EXPECT_EQ(idx.path(ino(root / "kubepods.slice/pod.slice/ctr.scope")), "/kubepods.slice/pod.slice/ctr.scope");
  EXPECT_EQ(idx.path(ino(root / "system.slice")), "/system.slice");
  EXPECT_FALSE(idx.path(0));
  // A mount whose root is deeper in the hierarchy (inside a cgroup namespace or bind mount).
  const auto nested = CgroupIdIndex::build(CgroupMount{root / "kubepods.slice", "/kubepods.slice"});
  EXPECT_EQ(nested.path(ino(root / "kubepods.slice/pod.slice")), "/kubepods.slice/pod.slice");
  EXPECT_EQ(nested.path(ino(root / "kubepods.slice")), "/kubepods.slice");
  fs::remove_all(root);
}

TEST(HostCoreEvents, MapsEveryKind) {
  TaskEvent e;
  e.task.tid = 5;
  e.task.tgid = 4;
  e.task.start_ticks = 99;
  e.task.comm = "EngineCore_DP0";
  e.kind = TaskEventKind::New;
  const auto seen = std::get<c2c::TaskSeen>(to_core_event(e));
  EXPECT_EQ(seen.task.key, (c2c::TaskKey{5, 99}));
  EXPECT_EQ(seen.task.tgid, 4u);
  EXPECT_EQ(seen.task.comm, "EngineCore_DP0");
  e.kind = TaskEventKind::Rename;
  const auto ren = std::get<c2c::TaskRenamed>(to_core_event(e));
  EXPECT_EQ(ren.key, (c2c::TaskKey{5, 99}));
  EXPECT_EQ(ren.comm, "EngineCore_DP0");
  e.kind = TaskEventKind::Exit;
  EXPECT_EQ(std::get<c2c::TaskExited>(to_core_event(e)).key, (c2c::TaskKey{5, 99}));
  e.kind = TaskEventKind::Exec;
  EXPECT_TRUE(std::holds_alternative<c2c::TaskSeen>(to_core_event(e)));
  e.old_tid = 7;
  EXPECT_EQ(exec_retired_tid(e), 7u);
  e.old_tid = 5;
  EXPECT_FALSE(exec_retired_tid(e));
  e.kind = TaskEventKind::New;
  e.old_tid = 7;
  EXPECT_FALSE(exec_retired_tid(e));
}

}  // namespace
