// The loader on the real kernel. On the host (no sched_ext): a pinned map of the wrong shape is
// refused with the mismatching field named, and a kernel without sched_ext is reported as such.
// In the qemu guest (tests/vm, where guest-init.sh runs this binary inside the vm_scenarios ctest
// with the VmSchedLoaderGuest filter and requires that none of them skips): the real scheduler
// object is loaded, attached, reuses pinned maps, refuses a stale pin and a second scheduler, and
// reports UNREG when detached. $C2C_SCHED_OBJECT names claim2core.bpf.o.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "sched/loader.hpp"

using namespace c2c::sched;

namespace {

// This process's own pin directory (each test runs in a process of its own under ctest), removed
// when the tests end: a directory shared by all of them was left behind in bpffs after every run.
const std::string& test_pin_dir() {
  static const std::string dir = "/sys/fs/bpf/c2c-test-sched-" + std::to_string(getpid());
  return dir;
}

class RemoveTestPinDir : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;  // best effort: nothing to remove when the tests skipped before creating it
    std::filesystem::remove_all(test_pin_dir(), ec);
  }
};
const auto* const kRemoveTestPinDir = ::testing::AddGlobalTestEnvironment(new RemoveTestPinDir);

bool bpffs_usable() {
  if (geteuid() != 0) return false;
  try {
    ensure_pin_dir(test_pin_dir());
  } catch (const LoadError&) {
    return false;
  }
  return true;
}

struct PinnedMap {
  std::string path;
  int fd = -1;
  PinnedMap(bpf_map_type type, uint32_t key, uint32_t value, const char* name) {
    path = test_pin_dir() + "/" + name;
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
    EXPECT_NE(std::string(e.what()).find("value_size is 64"), std::string::npos) << e.what();
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

// ---- in the guest: the real scheduler ------------------------------------------------------

namespace {

// Why the guest tests cannot run here, or "" if they can.
std::string guest_skip_reason() {
  if (scx_state().empty()) return "this kernel has no sched_ext (the vm_scenarios guest runs these)";
  if (scx_state() != "disabled") return "a sched_ext scheduler is already loaded";
  if (!bpffs_usable()) return "needs root and bpffs";
  const char* obj = std::getenv("C2C_SCHED_OBJECT");
  if (obj == nullptr || access(obj, R_OK) != 0) return "C2C_SCHED_OBJECT does not name claim2core.bpf.o";
  return "";
}

LoaderOptions guest_options(const std::string& pin_root) {
  LoaderOptions o;
  o.object_path = std::getenv("C2C_SCHED_OBJECT");
  o.pin_root = pin_root;
  return o;
}

// A private pin root (never the daemon's) with no pins in it.
std::string fresh_pin_root(const char* name) {
  const std::string root = test_pin_dir() + "/" + name;
  ensure_pin_dir(root);
  for (const char* m : {C2C_POLICY_MAP_NAME, C2C_STATS_MAP_NAME}) unlink((root + "/" + m).c_str());
  return root;
}

bool wait_for_state(const std::string& want) {
  for (int i = 0; i < 100; ++i) {
    if (scx_state() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return scx_state() == want;
}

}  // namespace

TEST(VmSchedLoaderGuest, LoadsAttachesAndReportsUnregWhenDetached) {
  if (auto why = guest_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  auto s = Scheduler::load(guest_options(fresh_pin_root("load")));
  EXPECT_EQ(scx_state(), "enabled");
  EXPECT_EQ(scx_root_ops(), "claim2core");
  EXPECT_FALSE(s->policy_map_reused()) << "the pin root was empty: the loader should have pinned";
  EXPECT_FALSE(s->exit_report().has_value()) << "an exit record while running";
  s->detach();
  EXPECT_TRUE(wait_for_state("disabled")) << "state " << scx_state();
  std::optional<ExitReport> r;
  for (int i = 0; i < 50 && !(r = s->exit_report()); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(r.has_value()) << "no exit record after detach";
  EXPECT_EQ(exit_kind_name(r->kind), "UNREG");
  EXPECT_FALSE(exit_kind_is_error(r->kind));
}

TEST(VmSchedLoaderGuest, ReusesThePinsLeftByAnEarlierLoad) {
  if (auto why = guest_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string root = fresh_pin_root("reuse");
  { auto first = Scheduler::load(guest_options(root)); }
  ASSERT_TRUE(wait_for_state("disabled"));
  // An entry written between the two loads must be what the second scheduler sees.
  int fd = bpf_obj_get((root + "/" C2C_POLICY_MAP_NAME).c_str());
  ASSERT_GE(fd, 0) << "the first load did not pin c2c_policy";
  c2c_task_key key{12345};
  c2c_policy_value v{};
  v.abi_version = C2C_ABI_VERSION;
  ASSERT_EQ(bpf_map_update_elem(fd, &key, &v, BPF_ANY), 0);
  auto second = Scheduler::load(guest_options(root));
  EXPECT_TRUE(second->policy_map_reused());
  c2c_policy_value got{};
  EXPECT_EQ(bpf_map_lookup_elem(fd, &key, &got), 0) << "the entry did not survive the reload";
  close(fd);
}

TEST(VmSchedLoaderGuest, RefusesAStalePolicyPinAndStaysDisabled) {
  if (auto why = guest_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string root = fresh_pin_root("stale");
  const std::string path = root + "/" C2C_POLICY_MAP_NAME;
  int fd = bpf_map_create(BPF_MAP_TYPE_HASH, C2C_POLICY_MAP_NAME, 4, 64, 16, nullptr);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(bpf_obj_pin(fd, path.c_str()), 0);
  close(fd);
  try {
    Scheduler::load(guest_options(root));
    ADD_FAILURE() << "a 64-byte policy value was accepted";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("value_size is 64"), std::string::npos) << e.what();
  }
  EXPECT_EQ(scx_state(), "disabled");
  unlink(path.c_str());
}

TEST(VmSchedLoaderGuest, RefusesASecondSchedulerWhileOneIsLoaded) {
  if (auto why = guest_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  auto first = Scheduler::load(guest_options(fresh_pin_root("busy")));
  try {
    Scheduler::load(guest_options(fresh_pin_root("busy2")));
    ADD_FAILURE() << "a second scheduler was loaded";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("another scheduler"), std::string::npos) << e.what();
  }
  EXPECT_EQ(scx_root_ops(), "claim2core") << "the first scheduler must stay loaded";
}
