// cgroup parsing and Kubernetes identity. Every path of
// tests/fixtures/dra/cgroup-path-examples.md is a case here (the table abbreviates the
// container id "413715dc...10ec"; the full id from the same fixture set is used).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/cgroup.hpp"

using namespace c2c::host;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUid = "c4dadf20-392a-474d-a47b-ab82080c8bd7";
constexpr const char* kUidSd = "c4dadf20_392a_474d_a47b_ab82080c8bd7";
constexpr const char* kCid = "413715dc061efe71c16ef989f2f2ff5cf999a7dc905bb7078eda82cbb38210ec";

std::string S(std::initializer_list<std::string> parts) {
  std::string s;
  for (const auto& p : parts) s += p;
  return s;
}

struct PodCase {
  std::string name;
  std::string path;
  std::string uid;
  std::string container;
  ContainerRuntime runtime;
  CgroupDriver driver;
  QosClass qos;
};

std::vector<PodCase> fixture_cases() {
  return {
      // A. verbatim
      {"qard_cgroupfs_v1_besteffort",
       "/kubepods/besteffort/pod74c13223-5a00-11e9-b385-42010a80018d/"
       "34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376",
       "74c13223-5a00-11e9-b385-42010a80018d", "34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376",
       ContainerRuntime::Unknown, CgroupDriver::Cgroupfs, QosClass::BestEffort},
      {"kubelet_doc_systemd_burstable_pod_level",
       "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd_5678_efgh.slice", "", "",
       ContainerRuntime::None, CgroupDriver::Systemd, QosClass::Burstable},  // not a real UID: rejected
      // B. derived
      {"systemd_v2_guaranteed",
       S({"/kubepods.slice/kubepods-pod", kUidSd, ".slice/cri-containerd-", kCid, ".scope"}), kUid, kCid,
       ContainerRuntime::Containerd, CgroupDriver::Systemd, QosClass::Guaranteed},
      {"systemd_v2_burstable",
       S({"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod", kUidSd, ".slice/cri-containerd-", kCid,
          ".scope"}),
       kUid, kCid, ContainerRuntime::Containerd, CgroupDriver::Systemd, QosClass::Burstable},
      {"systemd_v2_besteffort",
       S({"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod", kUidSd, ".slice/cri-containerd-", kCid,
          ".scope"}),
       kUid, kCid, ContainerRuntime::Containerd, CgroupDriver::Systemd, QosClass::BestEffort},
      {"systemd_v2_crio_burstable",
       S({"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod", kUidSd, ".slice/crio-", kCid, ".scope"}),
       kUid, kCid, ContainerRuntime::CriO, CgroupDriver::Systemd, QosClass::Burstable},
      {"cgroupfs_v2_guaranteed", S({"/kubepods/pod", kUid, "/", kCid}), kUid, kCid, ContainerRuntime::Unknown,
       CgroupDriver::Cgroupfs, QosClass::Guaranteed},
      {"cgroupfs_v2_burstable", S({"/kubepods/burstable/pod", kUid, "/", kCid}), kUid, kCid,
       ContainerRuntime::Unknown, CgroupDriver::Cgroupfs, QosClass::Burstable},
      {"cgroupfs_v1_memory_besteffort", S({"/kubepods/besteffort/pod", kUid, "/", kCid}), kUid, kCid,
       ContainerRuntime::Unknown, CgroupDriver::Cgroupfs, QosClass::BestEffort},
      {"systemd_v1_cpu_burstable",
       S({"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod", kUidSd, ".slice/cri-containerd-", kCid,
          ".scope"}),
       kUid, kCid, ContainerRuntime::Containerd, CgroupDriver::Systemd, QosClass::Burstable},
      // C. edge cases
      {"cgroup_root_kubelet_systemd",
       S({"/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod",
          kUidSd, ".slice/cri-containerd-", kCid, ".scope"}),
       kUid, kCid, ContainerRuntime::Containerd, CgroupDriver::Systemd, QosClass::Burstable},
      {"cgroup_root_kubelet_cgroupfs", S({"/kubelet/kubepods/burstable/pod", kUid, "/", kCid}), kUid, kCid,
       ContainerRuntime::Unknown, CgroupDriver::Cgroupfs, QosClass::Burstable},
      {"static_pod_32hex_systemd",
       S({"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod99dcb84d2a34f7e338778606703258c4.slice/"
          "cri-containerd-",
          kCid, ".scope"}),
       "99dcb84d2a34f7e338778606703258c4", kCid, ContainerRuntime::Containerd, CgroupDriver::Systemd,
       QosClass::Burstable},
      {"static_pod_32hex_cgroupfs", S({"/kubepods/pod99dcb84d2a34f7e338778606703258c4/", kCid}),
       "99dcb84d2a34f7e338778606703258c4", kCid, ContainerRuntime::Unknown, CgroupDriver::Cgroupfs,
       QosClass::Guaranteed},
      {"pod_level_systemd", S({"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod", kUidSd, ".slice"}),
       kUid, "", ContainerRuntime::None, CgroupDriver::Systemd, QosClass::BestEffort},
      {"pod_level_cgroupfs", S({"/kubepods/pod", kUid}), kUid, "", ContainerRuntime::None, CgroupDriver::Cgroupfs,
       QosClass::Guaranteed},
      {"crio_conmon",
       S({"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod", kUidSd, ".slice/crio-conmon-", kCid,
          ".scope"}),
       kUid, kCid, ContainerRuntime::CriOConmon, CgroupDriver::Systemd, QosClass::Burstable},
      {"docker_systemd",
       S({"/kubepods.slice/kubepods-pod", kUidSd, ".slice/docker-", kCid, ".scope"}), kUid, kCid,
       ContainerRuntime::Docker, CgroupDriver::Systemd, QosClass::Guaranteed},
      {"process_in_container_subcgroup",
       S({"/kubepods/burstable/pod", kUid, "/", kCid, "/init.scope"}), kUid, kCid, ContainerRuntime::Unknown,
       CgroupDriver::Cgroupfs, QosClass::Burstable},
  };
}

TEST(HostPodCgroup, FixturePaths) {
  for (const auto& c : fixture_cases()) {
    SCOPED_TRACE(c.name + ": " + c.path);
    const auto p = parse_pod_cgroup(c.path);
    if (c.uid.empty()) {
      EXPECT_FALSE(p) << "accepted pod uid " << (p ? p->pod_uid : "");
      continue;
    }
    ASSERT_TRUE(p);
    EXPECT_EQ(p->pod_uid, c.uid);
    EXPECT_EQ(p->container_id, c.container);
    EXPECT_EQ(p->runtime, c.runtime) << to_string(p->runtime);
    EXPECT_EQ(p->driver, c.driver) << to_string(p->driver);
    EXPECT_EQ(p->qos, c.qos) << to_string(p->qos);
    // The pod cgroup is a prefix of the path ending in the pod component.
    EXPECT_EQ(c.path.rfind(p->pod_cgroup, 0), 0u);
    EXPECT_NE(p->pod_cgroup.find("pod"), std::string::npos);
  }
}

TEST(HostPodCgroup, FixtureLinesThroughProcCgroup) {
  // The v1/v2 rows of the fixture as whole /proc/<pid>/cgroup lines.
  const std::string v1_memory = S({"9:memory:/kubepods/besteffort/pod", kUid, "/", kCid});
  const std::string v1_cpu = S({"4:cpu,cpuacct:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod",
                                kUidSd, ".slice/cri-containerd-", kCid, ".scope"});
  const std::string v2 = S({"0::/kubepods.slice/kubepods-pod", kUidSd, ".slice/cri-containerd-", kCid, ".scope"});
  const auto lines = parse_proc_cgroup(v1_memory + "\n" + v1_cpu + "\n" + v2 + "\n");
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), 3u);
  EXPECT_EQ((*lines)[0].hierarchy, 9u);
  EXPECT_TRUE((*lines)[0].has_controller("memory"));
  EXPECT_TRUE((*lines)[1].has_controller("cpu"));
  EXPECT_TRUE((*lines)[1].has_controller("cpuacct"));
  EXPECT_TRUE((*lines)[2].unified());
  for (const auto& l : *lines) {
    const auto p = parse_pod_cgroup(l.path);
    ASSERT_TRUE(p) << l.path;
    EXPECT_EQ(p->pod_uid, kUid);
    EXPECT_EQ(p->container_id, kCid);
  }
  // cpu beats the unified line on a hybrid host.
  EXPECT_EQ(primary_cgroup_path(*lines), (*lines)[1].path);
}

TEST(HostPodCgroup, NonPodPathsAreRejected) {
  for (const std::string& path : std::vector<std::string>{"/", "/user.slice/user-1000.slice/session-1.scope", "/system.slice/containerd.service", "/kubepods",
        "/kubepods/burstable", "/kubepods.slice/kubepods-burstable.slice",
        // a pod-looking component without a kubepods ancestor
        S({"/other/pod", kUid, "/", kCid}), S({"/system.slice/system-pod", kUidSd, ".slice"}),
        // uppercase / wrong length / underscores in a cgroupfs name
        "/kubepods/podC4DADF20-392A-474D-A47B-AB82080C8BD7", "/kubepods/podc4dadf20-392a-474d-a47b",
        S({"/kubepods/pod", kUidSd}), "/process_api/44ef5553306b41aa5e2cb5c613345289"}) {
    EXPECT_FALSE(parse_pod_cgroup(path)) << path;
  }
}

TEST(HostPodCgroup, NonHexContainerComponentGivesPodOnly) {
  const auto p = parse_pod_cgroup(S({"/kubepods/pod", kUid, "/not-a-container"}));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pod_uid, kUid);
  EXPECT_TRUE(p->container_id.empty());
  EXPECT_EQ(p->runtime, ContainerRuntime::None);
}

TEST(HostProcCgroup, ParsesThisHostsFormat) {
  const auto lines = parse_proc_cgroup(
      "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/44ef\n3:cpuset:/\n0::/\n");
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), 5u);
  EXPECT_TRUE((*lines)[0].has_controller("name=systemd"));
  EXPECT_EQ((*lines)[2].path, "/process_api/44ef");
  EXPECT_EQ(primary_cgroup_path(*lines), "/");
}

TEST(HostProcCgroup, PathMayContainColons) {
  const auto lines = parse_proc_cgroup("0::/a:b:c\n");
  ASSERT_TRUE(lines);
  EXPECT_EQ((*lines)[0].path, "/a:b:c");
}

TEST(HostProcCgroup, MalformedLinesNameTheField) {
  struct Case {
    std::string text;
    std::string field;
  };
  for (const auto& c : std::vector<Case>{{"garbage", "cgroup line 1"},
                                         {"0::/\nx:cpu:/", "cgroup line 2 hierarchy-id"},
                                         {"3:cpu,,cpuacct:/", "cgroup line 1 controllers"},
                                         {"3:cpu:relative", "cgroup line 1 path"},
                                         {"3:cpu:", "cgroup line 1 path"}}) {
    ParseError err;
    EXPECT_FALSE(parse_proc_cgroup(c.text, &err)) << c.text;
    EXPECT_EQ(err.field, c.field) << err.to_string();
  }
}

constexpr const char* kHybridMountinfo =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "34 30 0:31 /nested /sys/fs/cgroup/memory rw,relatime shared:5 - cgroup cgroup rw,memory\n"
    "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "41 22 0:38 / /mnt/with\\040space rw - ext4 /dev/sda1 rw\n";

TEST(HostMountinfo, FindsCgroupMounts) {
  const auto mounts = parse_mountinfo(kHybridMountinfo);
  ASSERT_TRUE(mounts);
  ASSERT_EQ(mounts->size(), 7u);
  EXPECT_EQ((*mounts)[6].mount_point, "/mnt/with space");
  EXPECT_EQ((*mounts)[3].root, "/nested");
  const auto cm = CgroupMounts::from_mountinfo(*mounts);
  ASSERT_TRUE(cm.unified());
  EXPECT_EQ(cm.unified()->mount_point, "/sys/fs/cgroup/unified");
  ASSERT_TRUE(cm.v1("cpuset"));
  EXPECT_EQ(cm.v1("cpuset")->mount_point, "/sys/fs/cgroup/cpuset");
  ASSERT_TRUE(cm.v1("name=systemd"));
  EXPECT_FALSE(cm.v1("xattr"));
  EXPECT_FALSE(cm.v1("rw"));
  EXPECT_FALSE(cm.v1("blkio"));
  // A mount whose root is below the hierarchy root maps only paths under that root.
  const auto mem = *cm.v1("memory");
  EXPECT_EQ(CgroupMounts::dir_of(mem, "/nested/a"), fs::path("/sys/fs/cgroup/memory/a"));
  EXPECT_EQ(CgroupMounts::dir_of(mem, "/nested"), fs::path("/sys/fs/cgroup/memory"));
  EXPECT_FALSE(CgroupMounts::dir_of(mem, "/nestedX/a"));
  EXPECT_FALSE(CgroupMounts::dir_of(mem, "/other"));
}

TEST(HostMountinfo, MalformedLineNamesIt) {
  ParseError err;
  EXPECT_FALSE(parse_mountinfo("30 22 0:27 / /x rw - tmpfs tmpfs rw\n31 30 0:28 / /y rw cgroup\n", &err));
  EXPECT_EQ(err.field, "mountinfo line 2");
}

class FakeCgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("c2c-host-cg-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "cpuset/kubepods/podA");
    fs::create_directories(root_ / "unified/kubepods.slice/pod.slice/ctr.scope");
    write(root_ / "cpuset/kubepods/podA/cpuset.effective_cpus", "2-3\n");
    write(root_ / "cpuset/kubepods/podA/cpuset.cpus", "0-7\n");
    write(root_ / "cpuset/kubepods/cpuset.cpus", "0-5\n");  // v1 without effective_cpus
    write(root_ / "unified/kubepods.slice/pod.slice/cpuset.cpus.effective", "4,6\n");
    std::vector<MountEntry> m = {
        {"/", (root_ / "cpuset").string(), "cgroup", "cgroup", {"rw", "cpuset"}},
        {"/", (root_ / "unified").string(), "cgroup2", "cgroup2", {"rw"}},
    };
    mounts_ = CgroupMounts::from_mountinfo(m);
  }
  void TearDown() override { fs::remove_all(root_); }
  static void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  fs::path root_;
  CgroupMounts mounts_;
};

TEST_F(FakeCgroupTree, V1EffectiveCpusPreferred) {
  const auto lines = parse_proc_cgroup("3:cpuset:/kubepods/podA\n0::/\n");
  ParseError err;
  const auto set = effective_cpuset(mounts_, *lines, &err);
  ASSERT_TRUE(set) << err.to_string();
  EXPECT_EQ(set->to_string(), "2-3");
}

TEST_F(FakeCgroupTree, V1FallsBackToCpusetCpus) {
  const auto set = effective_cpuset(mounts_, *parse_proc_cgroup("3:cpuset:/kubepods\n"));
  ASSERT_TRUE(set);
  EXPECT_EQ(set->to_string(), "0-5");
}

TEST_F(FakeCgroupTree, V2WalksUpToNearestEffectiveFile) {
  ParseError err;
  const auto set =
      effective_cpuset(mounts_, *parse_proc_cgroup("0::/kubepods.slice/pod.slice/ctr.scope\n"), &err);
  ASSERT_TRUE(set) << err.to_string();
  EXPECT_EQ(set->to_string(), "4,6");
}

TEST_F(FakeCgroupTree, MissingAndMalformedAreErrors) {
  ParseError err;
  EXPECT_FALSE(effective_cpuset(mounts_, *parse_proc_cgroup("0::/elsewhere\n"), &err));
  EXPECT_NE(err.message.find("cpuset.cpus.effective"), std::string::npos) << err.to_string();
  write(root_ / "cpuset/kubepods/podA/cpuset.effective_cpus", "2-x\n");
  err = {};
  EXPECT_FALSE(effective_cpuset(mounts_, *parse_proc_cgroup("3:cpuset:/kubepods/podA\n"), &err));
  EXPECT_NE(err.field.find("cpuset.effective_cpus"), std::string::npos) << err.to_string();
  err = {};
  EXPECT_FALSE(effective_cpuset(mounts_, {}, &err));
  EXPECT_EQ(err.field, "cgroup");
}

TEST(HostCgroupLive, OwnCpusetIsReadable) {
  ParseError err;
  const auto mounts = CgroupMounts::discover(&err);
  ASSERT_TRUE(mounts) << err.to_string();
  const auto text = read_file("/proc/self/cgroup");
  ASSERT_TRUE(text);
  const auto lines = parse_proc_cgroup(*text, &err);
  ASSERT_TRUE(lines) << err.to_string();
  const auto set = effective_cpuset(*mounts, *lines, &err);
  if (!set) GTEST_SKIP() << "no readable cpuset on this host: " << err.to_string();
  // The envelope must contain the CPUs this process may run on.
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  for (unsigned c = 0; c < c2c::kMaxCpus; ++c)
    if (CPU_ISSET(c, &mask)) {
      EXPECT_TRUE(set->test(c)) << "cpu " << c << " not in " << set->to_string();
    }
}

}  // namespace
