// Topology from a fake sysfs tree: 2 NUMA nodes x 4 CPUs, SMT pairs, one L3 per node, two PCIe
// roots, devices with and without local_cpulist / NUMA information.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/topology.hpp"

using namespace c2c::host;
using c2c::CpuSet;
namespace fs = std::filesystem;

namespace {

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("c2c-host-sysfs-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    const fs::path cpu = root_ / "devices/system/cpu";
    write(cpu / "online", "0-7\n");
    write(cpu / "possible", "0-7\n");
    for (unsigned c = 0; c < 8; ++c) {
      const fs::path d = cpu / ("cpu" + std::to_string(c));
      const unsigned sib = c ^ 1u;  // SMT pairs (0,1) (2,3) ...
      write(d / "topology/thread_siblings_list", std::to_string(std::min(c, sib)) + "-" + std::to_string(std::max(c, sib)));
      const std::string node_cpus = c < 4 ? "0-3" : "4-7";
      cache(d, 0, 1, "Data", std::to_string(std::min(c, sib)) + "-" + std::to_string(std::max(c, sib)));
      cache(d, 1, 1, "Instruction", std::to_string(std::min(c, sib)) + "-" + std::to_string(std::max(c, sib)));
      cache(d, 2, 2, "Unified", std::to_string(std::min(c, sib)) + "-" + std::to_string(std::max(c, sib)));
      cache(d, 3, 3, "Unified", node_cpus);
    }
    write(root_ / "devices/system/node/node0/cpulist", "0-3\n");
    write(root_ / "devices/system/node/node1/cpulist", "4-7\n");
    write(root_ / "devices/system/node/online", "0-1\n");
    // PCI: a NIC under pci0000:00 behind a bridge, a GPU under pci0000:80, a device without locality.
    pci("pci0000:00/0000:00:01.0/0000:01:00.0", "0", "0-3");
    pci("pci0000:80/0000:80:02.0/0000:81:00.0", "1", "4-7");
    pci("pci0000:80/0000:80:03.0", "1", std::nullopt);
    pci("pci0000:00/0000:00:1f.0", "-1", std::nullopt);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  static void cache(const fs::path& cpu, int index, int level, const std::string& type, const std::string& shared) {
    const fs::path d = cpu / "cache" / ("index" + std::to_string(index));
    write(d / "level", std::to_string(level) + "\n");
    write(d / "type", type + "\n");
    write(d / "shared_cpu_list", shared + "\n");
  }
  void pci(const std::string& rel, const std::string& numa, const std::optional<std::string>& local) {
    const fs::path dev = root_ / "devices" / rel;
    write(dev / "numa_node", numa + "\n");
    if (local) write(dev / "local_cpulist", *local + "\n");
    fs::create_directories(root_ / "bus/pci/devices");
    // Like the kernel: a relative link ../../../devices/<path>.
    fs::create_directory_symlink(fs::path("../../../devices") / rel,
                                 root_ / "bus/pci/devices" / fs::path(rel).filename());
  }
  fs::path root_;
};

TEST_F(FakeSysfs, ReadsCpusNumaSmtAndLlc) {
  ParseError err;
  const auto t = read_topology(root_, &err);
  ASSERT_TRUE(t) << err.to_string();
  EXPECT_EQ(t->online.to_string(), "0-7");
  ASSERT_EQ(t->numa_cpus.size(), 2u);
  EXPECT_EQ(t->numa_cpus.at(0).to_string(), "0-3");
  EXPECT_EQ(t->numa_cpus.at(1).to_string(), "4-7");
  ASSERT_EQ(t->smt_groups.size(), 4u);
  EXPECT_EQ(t->smt_groups[0].to_string(), "0-1");
  EXPECT_EQ(t->smt_groups[3].to_string(), "6-7");
  ASSERT_EQ(t->llc_groups.size(), 2u);  // L3 wins over L2 and L1
  EXPECT_EQ(t->llc_groups[0].to_string(), "0-3");
  EXPECT_EQ(t->llc_groups[1].to_string(), "4-7");
}

TEST_F(FakeSysfs, ReadsPciRootsAndLocality) {
  const auto t = read_topology(root_);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->pci.size(), 4u);
  const auto& nic = t->pci.at("0000:01:00.0");
  EXPECT_EQ(nic.pcie_root, "pci0000:00");
  EXPECT_EQ(nic.numa_node, 0);
  ASSERT_TRUE(nic.local_cpus);
  EXPECT_EQ(nic.local_cpus->to_string(), "0-3");
  EXPECT_EQ(t->pci.at("0000:81:00.0").pcie_root, "pci0000:80");
  EXPECT_EQ(t->pci.at("0000:00:1f.0").numa_node, -1);
  EXPECT_FALSE(t->pci.at("0000:80:03.0").local_cpus);
  // pci0000:00 holds a device local to 0-3 and one without locality (all CPUs).
  EXPECT_EQ(t->pcie_root_cpus.at("pci0000:00").to_string(), "0-7");
  EXPECT_EQ(t->pcie_root_cpus.at("pci0000:80").to_string(), "4-7");
}

TEST_F(FakeSysfs, CpusLocalToDevice) {
  const auto t = read_topology(root_);
  ASSERT_TRUE(t);
  EXPECT_EQ(cpus_local_to(*t, DeviceLocation{"0000:81:00.0", "", {}})->to_string(), "4-7");
  // No local_cpulist: the device's NUMA node.
  EXPECT_EQ(cpus_local_to(*t, DeviceLocation{"0000:80:03.0", "", {}})->to_string(), "4-7");
  // No locality at all: every online CPU.
  EXPECT_EQ(cpus_local_to(*t, DeviceLocation{"0000:00:1f.0", "", {}})->to_string(), "0-7");
  EXPECT_EQ(cpus_local_to(*t, DeviceLocation{"", "pci0000:80", {}})->to_string(), "4-7");
  EXPECT_EQ(cpus_local_to(*t, DeviceLocation{"", "", {1}})->to_string(), "4-7");
  EXPECT_EQ(cpus_local_to(*t, DeviceLocation{"", "", {0, 1}})->to_string(), "0-7");
  // The most specific location wins.
  EXPECT_EQ(cpus_local_to(*t, DeviceLocation{"0000:01:00.0", "pci0000:80", {1}})->to_string(), "0-3");

  c2c::AllocatedDevice gpu;
  gpu.pci_bus_id = "0000:81:00.0";
  EXPECT_EQ(cpus_local_to(*t, gpu)->to_string(), "4-7");
  c2c::AllocatedDevice cpu_dev;
  cpu_dev.cpus = CpuSet::range(2, 9);  // allocated CPUs, clipped to the online ones
  EXPECT_EQ(cpus_local_to(*t, cpu_dev)->to_string(), "2-7");
}

TEST_F(FakeSysfs, UnknownDeviceIsAnErrorNamingTheField) {
  const auto t = read_topology(root_);
  ASSERT_TRUE(t);
  struct Case {
    DeviceLocation where;
    std::string field;
  };
  for (const auto& c : std::vector<Case>{{{"0000:99:00.0", "", {}}, "pciBusID"},
                                         {{"", "pci0000:40", {}}, "pcieRoot"},
                                         {{"", "", {0, 7}}, "numaNode"},
                                         {{"", "", {}}, "device"}}) {
    ParseError err;
    EXPECT_FALSE(cpus_local_to(*t, c.where, &err));
    EXPECT_EQ(err.field, c.field) << err.to_string();
  }
}

TEST_F(FakeSysfs, NodeInfoForTheCore) {
  const auto t = read_topology(root_);
  ASSERT_TRUE(t);
  const c2c::NodeInfo n = to_node_info(*t, "node-a");
  EXPECT_EQ(n.name, "node-a");
  EXPECT_EQ(n.cpus.to_string(), "0-7");
  EXPECT_EQ(n.numa_cpus.size(), 2u);
  EXPECT_EQ(n.pcie_root_cpus.at("pci0000:80").to_string(), "4-7");
}

TEST_F(FakeSysfs, OfflineCpusAreExcluded) {
  write(root_ / "devices/system/cpu/online", "0-5\n");
  const auto t = read_topology(root_);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->numa_cpus.at(1).to_string(), "4-5");
  EXPECT_EQ(t->llc_groups.back().to_string(), "4-5");
}

TEST_F(FakeSysfs, NoNumaDirectoryMeansOneNode) {
  fs::remove_all(root_ / "devices/system/node");
  const auto t = read_topology(root_);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->numa_cpus.size(), 1u);
  EXPECT_EQ(t->numa_cpus.at(0).to_string(), "0-7");
}

TEST_F(FakeSysfs, MissingOrMalformedFilesNameTheFile) {
  {
    write(root_ / "devices/system/node/node1/cpulist", "4-x\n");
    ParseError err;
    EXPECT_FALSE(read_topology(root_, &err));
    EXPECT_NE(err.field.find("node1/cpulist"), std::string::npos) << err.to_string();
    write(root_ / "devices/system/node/node1/cpulist", "4-7\n");
  }
  {
    write(root_ / "devices/system/cpu/cpu3/cache/index3/level", "three\n");
    ParseError err;
    EXPECT_FALSE(read_topology(root_, &err));
    EXPECT_NE(err.field.find("cpu3/cache/index3/level"), std::string::npos) << err.to_string();
    write(root_ / "devices/system/cpu/cpu3/cache/index3/level", "3\n");
  }
  {
    write(root_ / "devices/pci0000:80/0000:80:02.0/0000:81:00.0/numa_node", "near\n");
    ParseError err;
    EXPECT_FALSE(read_topology(root_, &err));
    EXPECT_NE(err.field.find("numa_node"), std::string::npos) << err.to_string();
    write(root_ / "devices/pci0000:80/0000:80:02.0/0000:81:00.0/numa_node", "1\n");
  }
  ASSERT_TRUE(read_topology(root_));
  fs::remove(root_ / "devices/system/cpu/online");
  ParseError err;
  EXPECT_FALSE(read_topology(root_, &err));
  EXPECT_NE(err.field.find("devices/system/cpu/online"), std::string::npos) << err.to_string();
}

TEST(HostTopologyLive, ReadsThisHost) {
  ParseError err;
  const auto t = read_topology("/sys", &err);
  ASSERT_TRUE(t) << err.to_string();
  EXPECT_EQ(t->online.count(), static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN)));
  CpuSet numa_union;
  for (const auto& [n, cpus] : t->numa_cpus) numa_union = numa_union | cpus;
  EXPECT_EQ(numa_union, t->online);
  for (const auto& [id, d] : t->pci) EXPECT_EQ(d.pcie_root.rfind("pci", 0), 0u) << id;
}

}  // namespace
