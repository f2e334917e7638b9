// The state file's bounds. Its end: nothing after the writer's newline (issue 42's NUL bytes).
// The claim tombstone bound at a restart (issue 45: the tests round-tripped one below it):
// exactly kMaxClaimTombstones (4,096), one below and one above, through the snapshot file, the
// state log's replay and the restore into a fresh core. At the bound every tombstone survives the
// restart and keeps its claim dead (INV-3); one more deallocation forgets the oldest; a file with
// one more than the bound was not written by claim2cored and is refused, naming the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/durable/durable_load.hpp"

namespace c2c::daemon {
namespace {

namespace fs = std::filesystem;

struct TombstoneBound : ::testing::TestWithParam<size_t> {
  fs::path dir;
  void SetUp() override {
    // tmpfs where there is one: thousands of fdatasyncs cost nothing there, with the same semantics.
    const fs::path shm("/dev/shm");
    dir = (fs::exists(shm) ? shm : fs::temp_directory_path()) /
          ("c2c-tombstones-" + std::to_string(::getpid()) + "-" + std::to_string(GetParam()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
};

std::string uid(size_t i) { return "claim-" + std::to_string(i); }

DurableState two_policies() {
  DurableState s;
  for (const char* name : {"a", "b"}) {
    NodeSchedulingPolicy p;
    p.name = name;
    p.generation = 3;
    p.node_names = {"node-a"};
    p.command_regex = "^x$";
    p.priority = 1;
    p.execution_time = 2'000'000;
    s.put_policy(p);
  }
  s.delete_claim("gone", 2);
  return s;
}

TEST_P(TombstoneBound, ThroughTheSnapshotTheLogAndARestart) {
  const size_t n = GetParam();
  // Half of the deallocations in the snapshot, the rest in the log after it.
  DurableState mem;
  for (size_t i = 0; i < n / 2; ++i) mem.delete_claim(uid(i), 3);
  ASSERT_EQ(save_state((dir / "state.json").string(), mem), "");
  {
    LoadedState loaded;
    std::string err;
    ASSERT_TRUE(load_durable_state(dir.string(), &loaded, &err)) << err;
    // 64 deallocations a record (a batch of RPCs), the last record with the rest.
    for (size_t i = n / 2; i < n; i += 64) {
      std::vector<StateChange> changes;
      for (size_t j = i; j < std::min(n, i + 64); ++j) changes.push_back(DeleteClaim{uid(j), 3});
      for (const auto& c : changes) apply_change(mem, c);
      ++mem.log_seq;
      ASSERT_EQ(loaded.log->append(encode_changes(mem.log_seq, changes)), "");
    }
  }
  LoadedState back;
  std::string err;
  ASSERT_TRUE(load_durable_state(dir.string(), &back, &err)) << err;
  EXPECT_EQ(back.state, mem);
  const size_t kept = std::min(n, kMaxClaimTombstones);
  ASSERT_EQ(back.state.claim_tombstones.size(), kept);
  EXPECT_EQ(back.state.claim_tombstones.front().uid, uid(n - kept)) << "the oldest is forgotten first";
  EXPECT_EQ(back.state.claim_tombstones.back().uid, uid(n - 1));
  // The restart's compaction writes exactly what it holds, and reads it back.
  ASSERT_EQ(save_state((dir / "state.json").string(), back.state), "");
  DurableState again;
  FieldError ferr;
  ASSERT_TRUE(load_state((dir / "state.json").string(), &again, &ferr)) << ferr.field << ": " << ferr.message;
  EXPECT_EQ(again.claim_tombstones, back.state.claim_tombstones);
  // Restored into a fresh core: every kept tombstone keeps its claim dead at its generation.
  Core core;
  ASSERT_TRUE(core.apply(DaemonRestart{10}).ok());
  for (const auto& e : restore_events(again)) ASSERT_TRUE(core.apply(e).ok());
  for (size_t i : {n - kept, n - 1}) {
    Claim c;
    c.uid = uid(i);
    c.generation = 3;
    EXPECT_EQ(core.apply(ClaimAllocated{c}).status, ApplyResult::Status::Ignored) << uid(i) << " came back";
  }
  if (n > kMaxClaimTombstones) {  // the price of the bound: the forgotten one is not dead any more
    Claim c;
    c.uid = uid(0);
    c.generation = 3;
    EXPECT_EQ(core.apply(ClaimAllocated{c}).status, ApplyResult::Status::Applied);
  }
}

INSTANTIATE_TEST_SUITE_P(AtTheBound, TombstoneBound,
                         ::testing::Values(kMaxClaimTombstones - 1, kMaxClaimTombstones, kMaxClaimTombstones + 1));

// Issue 42's smaller finding: a state.json with NUL bytes appended (a padded or torn file) read
// as whole, since the JSON reader stops at a NUL byte. Every byte after the writer's newline is
// refused now, naming the file, and the state handed in stays as it was.
TEST(StateFileBounds, TrailingBytesAreRefusedNamingTheFile) {
  auto dir = std::filesystem::temp_directory_path() / ("c2c-daemon-trailing-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "state.json").string();
  ASSERT_EQ(save_state(path, two_policies()), "");
  std::string good;
  {
    std::ifstream in(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_EQ(good.back(), '\n');
  const std::string tails[] = {std::string(1, '\0'), std::string(4096, '\0'), std::string("\0garbage", 8), "\n",
                               " \n", "\n\n"};
  for (const auto& tail : tails) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << good << tail;
    DurableState untouched = two_policies();
    untouched.log_seq = 99;
    const DurableState before = untouched;
    FieldError err;
    EXPECT_FALSE(load_state(path, &untouched, &err)) << "accepted " << tail.size() << " trailing bytes";
    EXPECT_NE(err.field.find(path), std::string::npos) << err.field;
    EXPECT_EQ(untouched, before) << "a refused file changed the state";
  }
  // A NUL byte inside the document is refused the same way.
  std::string inner = good;
  inner[inner.size() / 2] = '\0';
  std::ofstream(path, std::ios::binary | std::ios::trunc) << inner;
  DurableState back;
  FieldError err;
  EXPECT_FALSE(load_state(path, &back, &err));
  EXPECT_NE(err.message.find("NUL byte at offset"), std::string::npos) << err.message;
  std::filesystem::remove_all(dir);
}

TEST(TombstoneBoundFile, OneMoreThanTheBoundInAFileIsRefusedNamingTheField) {
  DurableState s;
  for (size_t i = 0; i < kMaxClaimTombstones; ++i) s.claim_tombstones.push_back(ClaimTombstone{uid(i), 1});
  DurableState back;
  FieldError err;
  ASSERT_TRUE(decode_state(encode_state(s), &back, &err)) << "exactly the bound: " << err.field << ": " << err.message;
  EXPECT_EQ(back.claim_tombstones.size(), kMaxClaimTombstones);
  s.claim_tombstones.push_back(ClaimTombstone{uid(kMaxClaimTombstones), 1});
  EXPECT_FALSE(decode_state(encode_state(s), &back, &err));
  EXPECT_EQ(err.field, "state.claimTombstones");
  EXPECT_EQ(back.claim_tombstones.size(), kMaxClaimTombstones) << "a refused file changed the state";
}

}  // namespace
}  // namespace c2c::daemon
