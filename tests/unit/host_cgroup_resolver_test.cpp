// CgroupResolver: a task's cgroup path and cpuset from the cgroup id BPF reports, on a fake
// cgroup2 tree: one hierarchy walk (again only for an id it does not know, once per pass), one
// cpuset read per cgroup per pass, and false (the caller reads /proc) where the id cannot say.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/cgroup_resolver.hpp"

using namespace c2c::host;
namespace fs = std::filesystem;

namespace {

uint64_t ino(const fs::path& p) {
  struct stat st{};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return static_cast<uint64_t>(st.st_ino);
}

class HostCgroupResolver : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("c2c-host-resolver-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "kubepods.slice/pod.slice/ctr.scope");
    std::ofstream(root_ / "cpuset.cpus.effective") << "0-7\n";
    std::ofstream(root_ / "kubepods.slice/pod.slice/cpuset.cpus.effective") << "2-3\n";
    std::vector<MountEntry> m = {{"/", root_.string(), "cgroup2", "cgroup2", {"rw"}}};
    mounts_ = CgroupMounts::from_mountinfo(m);
  }
  void TearDown() override { fs::remove_all(root_); }
  TaskInfo task(uint64_t cgroup_id) {
    TaskInfo t;
    t.tid = 11;
    t.tgid = 10;
    t.start_ticks = 700;
    t.comm = "EngineCore_DP0";
    t.cgroup_id = cgroup_id;
    return t;
  }
  fs::path root_;
  CgroupMounts mounts_;
};

TEST_F(HostCgroupResolver, FillsPathAndCpusetFromTheIdWithOneReadPerCgroup) {
  CgroupResolver r(&mounts_);
  ASSERT_TRUE(r.by_id());
  r.begin_pass();
  for (int i = 0; i < 100; ++i) {
    auto t = task(ino(root_ / "kubepods.slice/pod.slice/ctr.scope"));
    ASSERT_TRUE(r.fill(t));
    EXPECT_EQ(t.cgroup, "/kubepods.slice/pod.slice/ctr.scope");
    ASSERT_TRUE(t.cpuset);
    EXPECT_EQ(t.cpuset->to_string(), "2-3");  // the nearest cgroup with the file (walks up)
  }
  EXPECT_EQ(r.walks(), 1u);
  EXPECT_EQ(r.cpuset_reads(), 1u);
  // A new pass reads the cpuset again (it may have changed), not the hierarchy.
  std::ofstream(root_ / "kubepods.slice/pod.slice/cpuset.cpus.effective") << "3\n";
  r.begin_pass();
  auto t = task(ino(root_ / "kubepods.slice/pod.slice/ctr.scope"));
  ASSERT_TRUE(r.fill(t));
  EXPECT_EQ(t.cpuset->to_string(), "3");
  EXPECT_EQ(r.walks(), 1u);
  EXPECT_EQ(r.cpuset_reads(), 2u);
}

TEST_F(HostCgroupResolver, BatchesWithinTheMaxAgeShareOneCpusetReadAndAnUnknownIdStillGetsAWalk) {
  CgroupResolver r(&mounts_);
  const auto ctr = ino(root_ / "kubepods.slice/pod.slice/ctr.scope");
  r.begin_batch(1'000, 100);
  auto t = task(ctr);
  ASSERT_TRUE(r.fill(t));
  EXPECT_EQ(t.cpuset->to_string(), "2-3");
  std::ofstream(root_ / "kubepods.slice/pod.slice/cpuset.cpus.effective") << "3\n";
  fs::create_directories(root_ / "kubepods.slice/pod3.slice");
  r.begin_batch(1'099, 100);  // still within the age: the cpuset read is reused
  t = task(ctr);
  ASSERT_TRUE(r.fill(t));
  EXPECT_EQ(t.cpuset->to_string(), "2-3");
  EXPECT_EQ(r.cpuset_reads(), 1u);
  auto fresh = task(ino(root_ / "kubepods.slice/pod3.slice"));
  ASSERT_TRUE(r.fill(fresh)) << "a cgroup created since the walk: one more walk in this batch";
  EXPECT_EQ(r.walks(), 2u);
  r.begin_batch(1'100, 100);  // the age reached: read again
  t = task(ctr);
  ASSERT_TRUE(r.fill(t));
  EXPECT_EQ(t.cpuset->to_string(), "3");
  EXPECT_EQ(r.cpuset_reads(), 3u);  // pod3's and ctr's again
  std::ofstream(root_ / "kubepods.slice/pod.slice/cpuset.cpus.effective") << "2\n";
  r.begin_pass();  // a rescan reads everything afresh, whatever the age
  r.begin_batch(1'101, 100);
  t = task(ctr);
  ASSERT_TRUE(r.fill(t));
  EXPECT_EQ(t.cpuset->to_string(), "2");
}

TEST_F(HostCgroupResolver, ACgroupCreatedSinceTheWalkIsFoundByOneMoreWalkPerPass) {
  CgroupResolver r(&mounts_);
  r.begin_pass();
  auto first = task(ino(root_));
  ASSERT_TRUE(r.fill(first));
  EXPECT_EQ(first.cgroup, "/");
  fs::create_directories(root_ / "kubepods.slice/pod2.slice");
  r.begin_pass();
  auto t = task(ino(root_ / "kubepods.slice/pod2.slice"));
  ASSERT_TRUE(r.fill(t));
  EXPECT_EQ(t.cgroup, "/kubepods.slice/pod2.slice");
  EXPECT_EQ(r.walks(), 2u);
  // An id no cgroup has: one walk this pass at most, then the caller reads /proc.
  r.begin_pass();
  auto unknown = task(1);
  const auto before = unknown;
  EXPECT_FALSE(r.fill(unknown));
  EXPECT_FALSE(r.fill(unknown));
  EXPECT_EQ(unknown, before);
  EXPECT_EQ(r.walks(), 3u);
}

TEST_F(HostCgroupResolver, NoIdOrAV1CpuHierarchyWithoutCpusetLeavesItToProc) {
  CgroupResolver r(&mounts_);
  EXPECT_EQ(r.id_of(), CgroupIdOf::DefaultHierarchy);
  auto zero = task(0);
  EXPECT_FALSE(r.fill(zero));
  EXPECT_EQ(r.walks(), 0u);
  // With a v1 cpu but no v1 cpuset hierarchy the primary path is the cpu one: no id names it.
  fs::create_directories(root_ / "v1cpu");
  std::vector<MountEntry> cpu_only = {{"/", root_.string(), "cgroup2", "cgroup2", {"rw"}},
                                      {"/", (root_ / "v1cpu").string(), "cgroup", "cgroup", {"rw", "cpu"}}};
  const auto cm = CgroupMounts::from_mountinfo(cpu_only);
  CgroupResolver c(&cm);
  EXPECT_FALSE(c.by_id());
  auto t = task(ino(root_));
  EXPECT_FALSE(c.fill(t));
  CgroupResolver none(nullptr);
  EXPECT_FALSE(none.by_id());
}

// A hybrid host (this project's CI host): a v1 cpuset hierarchy is the primary path, so the
// programs report the cpuset cgroup's id and the index is of the cpuset mount.
TEST_F(HostCgroupResolver, WithAV1CpusetHierarchyTheIdsAreTheCpusetCgroups) {
  const fs::path v1 = root_ / "v1cpuset";
  fs::create_directories(v1 / "kubepods/podX");
  std::ofstream(v1 / "cpuset.effective_cpus") << "0-7\n";
  std::ofstream(v1 / "kubepods/podX/cpuset.effective_cpus") << "1,3\n";
  std::vector<MountEntry> hybrid = {{"/", root_.string(), "cgroup2", "cgroup2", {"rw"}},
                                    {"/", v1.string(), "cgroup", "cgroup", {"rw", "cpuset"}}};
  const auto hm = CgroupMounts::from_mountinfo(hybrid);
  CgroupResolver h(&hm);
  ASSERT_TRUE(h.by_id());
  EXPECT_EQ(h.id_of(), CgroupIdOf::Cpuset);
  h.begin_pass();
  auto t = task(ino(v1 / "kubepods/podX"));
  ASSERT_TRUE(h.fill(t));
  EXPECT_EQ(t.cgroup, "/kubepods/podX");
  ASSERT_TRUE(t.cpuset);
  EXPECT_EQ(t.cpuset->to_string(), "1,3");
  auto v2 = task(ino(root_ / "kubepods.slice"));  // a v2 id means nothing here
  EXPECT_FALSE(h.fill(v2));
}

}  // namespace
