// The loader's refusal paths on the real kernel: a pinned map of the wrong shape is refused with
// the mismatching field named, and a kernel without sched_ext is reported as such.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "sched/loader.hpp"

using namespace c2c::sched;

namespace {

bool bpffs_usable() {
  if (geteuid() != 0) return false;
  try {
    ensure_pin_dir("/sys/fs/bpf/c2c-test-sched");
  } catch (const LoadError&) {
    return false;
  }
  return true;
}

struct PinnedMap {
  std::string path;
  int fd = -1;
  PinnedMap(bpf_map_type type, uint32_t key, uint32_t value, const char* name) {
    path = std::string("/sys/fs/bpf/c2c-test-sched/") + name + std::to_string(getpid());
    fd = bpf_map_create(type, name, key, value, 1, nullptr);
    if (fd >= 0 && bpf_obj_pin(fd, path.c_str()) != 0) {
      close(fd);
      fd = -1;
    }
  }
  ~PinnedMap() {
    if (fd >= 0) close(fd);
    unlink(path.c_str());
  }
};

}  // namespace

TEST(VmSchedLoader, RefusesAPinnedStatsMapOfTheWrongType) {
  if (!bpffs_usable()) GTEST_SKIP() << "needs root and bpffs";
  PinnedMap m(BPF_MAP_TYPE_HASH, 4, sizeof(c2c_stats), "c2c_stats");
  ASSERT_GE(m.fd, 0) << "bpf_map_create/pin failed";
  try {
    read_pinned_stats(m.path);
    FAIL() << "a HASH map was accepted as the per-CPU stats map";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("map_type"), std::string::npos) << e.what();
  }
}

TEST(VmSchedLoader, RefusesAPinnedStatsMapOfTheWrongValueSize) {
  if (!bpffs_usable()) GTEST_SKIP() << "needs root and bpffs";
  PinnedMap m(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 64, "c2c_stats");
  ASSERT_GE(m.fd, 0) << "bpf_map_create/pin failed";
  try {
    read_pinned_stats(m.path);
    FAIL() << "a 64-byte value was accepted as struct c2c_stats";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("value_size=64"), std::string::npos) << e.what();
  }
}

TEST(VmSchedLoader, ReadsAndSumsAPinnedStatsMapOfTheRightShape) {
  if (!bpffs_usable()) GTEST_SKIP() << "needs root and bpffs";
  PinnedMap m(BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(c2c_stats), "c2c_stats");
  ASSERT_GE(m.fd, 0) << "bpf_map_create/pin failed";
  const int ncpu = libbpf_num_possible_cpus();
  ASSERT_GT(ncpu, 0);
  std::vector<c2c_stats> per_cpu(static_cast<size_t>(ncpu));
  for (auto& s : per_cpu) s.identity_mismatches = 3;
  uint32_t key = 0;
  ASSERT_EQ(bpf_map_update_elem(m.fd, &key, per_cpu.data(), BPF_ANY), 0);
  const c2c_stats total = read_pinned_stats(m.path);
  EXPECT_EQ(total.identity_mismatches, 3u * static_cast<uint64_t>(ncpu));
}

TEST(VmSchedLoader, ReportsAKernelWithoutSchedExt) {
  if (!scx_state().empty()) GTEST_SKIP() << "this kernel has sched_ext; covered by the vm_scenarios guest test";
  LoaderOptions opts;
  opts.object_path = "/nonexistent.bpf.o";
  try {
    Scheduler::load(opts);
    FAIL() << "load succeeded on a kernel without sched_ext";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("CONFIG_SCHED_CLASS_EXT"), std::string::npos) << e.what();
  }
}
