// The generation guard at startup (issue 45, bug 1): --recover-generation reads the pinned map
// with the core's bound. One foreign entry at 2^60 used to become the floor (2^60 + 2^20), which
// the core then refused at every start, plain restarts included, since the file now existed.
#include <bpf/bpf.h>  // the test pins a map of another layout itself
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/core.hpp"
#include "daemon/durable/durable_state.hpp"
#include "daemon/durable/generation_guard.hpp"
#include "mirror_fake_map.hpp"

namespace c2c::daemon {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kBound = static_cast<uint64_t>(kMaxGeneration);

struct GenerationGuard : ::testing::Test {
  fs::path dir;
  mirror::testing::FakePolicyMap map{64};
  void SetUp() override {
    dir = fs::temp_directory_path() / ("c2c-gen-guard-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    // A node that ran before: its state names generation 7, its generation file is lost.
    DurableState s;
    NodeSchedulingPolicy p;
    p.name = "vllm";
    p.generation = 7;
    p.node_names = {"node-a"};
    p.command_regex = "^EngineCore$";
    p.priority = 1;
    p.execution_time = 2'000'000;
    s.put_policy(p);
    ASSERT_EQ(save_state((dir / "state.json").string(), s), "");
  }
  void TearDown() override { fs::remove_all(dir); }
  void entry(uint32_t tid, uint64_t generation) {
    c2c_policy_value v{};
    v.start_ticks = 1;
    v.generation = generation;
    map.entries[tid] = v;
  }
  // What the engine does with the lease: the core must take its floor (DaemonRestart).
  static ApplyResult restart(const mirror::GenerationLease& lease) {
    Core core;
    return core.apply(DaemonRestart{lease.floor()});
  }
};

TEST_F(GenerationGuard, AForeignEntryBeyondTheBoundIsNotCountedAndTheNodeStaysStartable) {
  entry(100, 5);
  entry(200, 1ull << 60);  // foreign: beyond the bound
  std::string err;
  auto lease = open_node_lease(dir.string(), &map, /*recover=*/true, &err);
  ASSERT_TRUE(lease) << err;
  EXPECT_EQ(lease->floor(), 7 + kRecoveryMargin) << "the entry beyond 2^53 was counted";
  const ApplyResult r = restart(*lease);
  EXPECT_EQ(r.status, ApplyResult::Status::Applied) << r.field << ": " << r.message;
  // Every later plain start takes the stored floor too.
  auto again = open_node_lease(dir.string(), &map, /*recover=*/false, &err);
  ASSERT_TRUE(again) << err;
  EXPECT_EQ(restart(*again).status, ApplyResult::Status::Applied);
}

TEST_F(GenerationGuard, AnEntryAtTheBoundIsCountedAndItsRecoveryRefusedStoringNothing) {
  for (uint64_t g : {kBound, kBound - kRecoveryMargin}) {
    map.entries.clear();
    entry(100, g);
    std::string err;
    EXPECT_FALSE(open_node_lease(dir.string(), &map, true, &err)) << g;
    EXPECT_NE(err.find("INV-4"), std::string::npos) << err;
    EXPECT_NE(err.find("2^53"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(dir / "generation")) << "a refused recovery stored a floor";
    // The plain start still says what is wrong (the file is missing), not "refused by the core".
    EXPECT_FALSE(open_node_lease(dir.string(), &map, false, &err));
    EXPECT_NE(err.find("is missing"), std::string::npos) << err;
  }
}

TEST_F(GenerationGuard, JustBelowTheBoundTheRecoveredFloorLeavesTheLastGeneration) {
  entry(100, kBound - kRecoveryMargin - 1);
  std::string err;
  auto lease = open_node_lease(dir.string(), &map, true, &err);
  ASSERT_TRUE(lease) << err;
  EXPECT_EQ(lease->floor(), kBound - 1);
  Core core;
  ASSERT_EQ(core.apply(DaemonRestart{lease->floor()}).status, ApplyResult::Status::Applied);
  EXPECT_EQ(core.generation(), kBound);
  EXPECT_EQ(lease->cover(core.generation()), "");
}

TEST_F(GenerationGuard, HighestInMapCountsWithinTheBoundOnly) {
  entry(1, 3);
  entry(2, kBound);
  entry(3, kBound + 1);
  entry(4, ~0ull);
  const RecordedGeneration r = highest_in_map(map);
  EXPECT_EQ(r.highest, kBound);
  EXPECT_EQ(r.beyond_bound, 2u);
  EXPECT_EQ(r.highest_beyond, ~0ull);
}

// The recovery's read of the pinned policy map goes through src/kernel's map check: a pin of
// another layout (here a value of 104 bytes, an older ABI) is refused naming the pin and the
// field, nothing stored; it was read with this build's value size, past the end of each value.
TEST_F(GenerationGuard, APinnedPolicyMapOfAnotherLayoutIsRefusedNotRead) {
  struct statfs st;
  if (::geteuid() != 0 || ::statfs("/sys/fs/bpf", &st) != 0 || st.f_type != BPF_FS_MAGIC)
    GTEST_SKIP() << "needs root and bpffs at /sys/fs/bpf";
  const fs::path root = "/sys/fs/bpf/c2c-test-gen-guard-" + std::to_string(::getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string pin = (root / "c2c_policy").string();
  const int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "c2c_policy", 4, 104, 16, nullptr);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(bpf_obj_pin(fd, pin.c_str()), 0) << std::strerror(errno);
  ::close(fd);
  std::string err;
  EXPECT_FALSE(open_node_lease(dir.string(), pin, /*recover=*/true, &err));
  EXPECT_NE(err.find("pinned map " + pin + ": value_size is 104"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir / "generation")) << "nothing is stored on a refused recovery";
  // No pin at all: the recovery counts the state alone.
  fs::remove_all(root);
  err.clear();
  auto lease = open_node_lease(dir.string(), pin, /*recover=*/true, &err);
  ASSERT_TRUE(lease) << err;
  EXPECT_EQ(lease->floor(), 7 + kRecoveryMargin);
}

}  // namespace
}  // namespace c2c::daemon
