// The state log (spec/daemon.md, "The write path"): records round-trip; a torn last append is
// dropped, a damaged record with records after it refuses the start naming the offset; the
// change codec round-trips every kind of change and replaying a record twice changes nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core_fixture.hpp"
#include "daemon/durable/durable_state.hpp"
#include "daemon/durable/state_log.hpp"

namespace c2c::daemon {
namespace {

std::string two_records() { return frame_record("first") + frame_record("second record"); }

TEST(DaemonStateLog, CompleteRecordsComeBackInOrder) {
  auto s = scan_log(two_records());
  EXPECT_TRUE(s.error.empty());
  EXPECT_TRUE(s.dropped.empty());
  EXPECT_EQ(s.records, (std::vector<std::string>{"first", "second record"}));
  EXPECT_EQ(s.valid_bytes, two_records().size());
  EXPECT_TRUE(scan_log("").records.empty());
}

TEST(DaemonStateLog, ATornLastAppendIsDropped) {
  const std::string all = two_records();
  const size_t second = frame_record("first").size();
  // Every cut inside the second record (header or payload), and a zero-filled extension.
  for (size_t cut = second + 1; cut < all.size(); ++cut) {
    auto s = scan_log(all.substr(0, cut));
    EXPECT_TRUE(s.error.empty()) << cut;
    EXPECT_EQ(s.records, std::vector<std::string>{"first"}) << cut;
    EXPECT_EQ(s.valid_bytes, second) << cut;
    EXPECT_NE(s.dropped.find("offset " + std::to_string(second)), std::string::npos) << s.dropped;
  }
  auto flipped = all;
  flipped.back() ^= 1;  // the last record's payload damaged in place: still the last append
  EXPECT_TRUE(scan_log(flipped).error.empty());
  EXPECT_EQ(scan_log(flipped).records.size(), 1u);
  auto zeros = frame_record("first") + std::string(4096, '\0');
  EXPECT_TRUE(scan_log(zeros).error.empty());
  EXPECT_EQ(scan_log(zeros).records.size(), 1u);
}

TEST(DaemonStateLog, ADamagedRecordWithRecordsAfterItIsAnErrorNamingTheOffset) {
  auto bytes = two_records() + frame_record("third");
  const size_t second = frame_record("first").size();
  bytes[second + 9] ^= 0x40;  // inside the second payload
  auto s = scan_log(bytes);
  EXPECT_NE(s.error.find("offset " + std::to_string(second)), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("checksum"), std::string::npos) << s.error;
  // On disk: open() refuses and names the file.
  auto dir = std::filesystem::temp_directory_path() / ("c2c-log-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "state.log").string();
  std::ofstream(path, std::ios::binary) << bytes;
  LogScan scan;
  std::string err;
  EXPECT_EQ(StateLog::open(path, &scan, &err), nullptr);
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("offset " + std::to_string(second)), std::string::npos) << err;
  std::filesystem::remove_all(dir);
}

TEST(DaemonStateLog, AppendsSurviveReopeningAndATornTailIsCutOff) {
  auto dir = std::filesystem::temp_directory_path() / ("c2c-log2-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "state.log").string();
  {
    LogScan scan;
    std::string err;
    auto log = StateLog::open(path, &scan, &err);
    ASSERT_TRUE(log) << err;
    EXPECT_EQ(log->append("a"), "");
    EXPECT_EQ(log->append("bb"), "");
  }
  { std::ofstream(path, std::ios::binary | std::ios::app) << frame_record("torn").substr(0, 6); }
  LogScan scan;
  std::string err;
  auto log = StateLog::open(path, &scan, &err);
  ASSERT_TRUE(log) << err;
  EXPECT_EQ(scan.records, (std::vector<std::string>{"a", "bb"}));
  EXPECT_FALSE(scan.dropped.empty());
  EXPECT_EQ(log->append("ccc"), "");  // lands right after "bb", not after the torn bytes
  log.reset();
  log = StateLog::open(path, &scan, &err);
  ASSERT_TRUE(log) << err;
  EXPECT_EQ(scan.records, (std::vector<std::string>{"a", "bb", "ccc"}));
  EXPECT_TRUE(scan.dropped.empty());
  EXPECT_EQ(log->reset(), "");
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  std::filesystem::remove_all(dir);
}

// Engine::reserve_batch: the blocks for the next records are allocated ahead (the file's size
// and its records unchanged), in chunks, so that most batches make no system call for it.
TEST(DaemonStateLog, AReservationAllocatesBlocksAheadWithoutChangingTheRecords) {
  auto dir = std::filesystem::temp_directory_path() / ("c2c-log3-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "state.log").string();
  auto blocks = [&] {
    struct stat st {};
    ::stat(path.c_str(), &st);
    return static_cast<uint64_t>(st.st_blocks) * 512;
  };
  LogScan scan;
  std::string err;
  auto log = StateLog::open(path, &scan, &err);
  ASSERT_TRUE(log) << err;
  ASSERT_EQ(log->append("a"), "");
  const uint64_t before = blocks();
  const std::string why = log->reserve(64 * 1024);
  if (why.find("Operation not supported") != std::string::npos) GTEST_SKIP() << why;  // the batch copies there
  ASSERT_EQ(why, "");
  EXPECT_GE(blocks(), before + 64 * 1024) << "the reservation allocated nothing";
  EXPECT_EQ(std::filesystem::file_size(path), frame_record("a").size()) << "the reservation changed the size";
  EXPECT_EQ(log->append("bb"), "");
  EXPECT_EQ(log->reserve(1024), "");  // within the chunk taken ahead
  log.reset();
  log = StateLog::open(path, &scan, &err);
  ASSERT_TRUE(log) << err;
  EXPECT_EQ(scan.records, (std::vector<std::string>{"a", "bb"}));
  EXPECT_TRUE(scan.dropped.empty()) << scan.dropped;
  EXPECT_EQ(log->reset(), "");
  EXPECT_LT(blocks(), 64u * 1024) << "a reset keeps the reservation's blocks";
  std::filesystem::remove_all(dir);
}

TEST(DaemonStateChanges, EveryChangeRoundTripsAndReplayingTwiceChangesNothing) {
  using namespace c2c::testing;
  Intent in;
  in.kind = PolicyKind::Node;
  in.policy = "vllm-enginecore";
  in.generation = 1;
  in.state = IntentState::Applied;
  std::vector<StateChange> changes{PutPolicy{engine_policy(1)},
                                   PutPolicy{decode_policy(2)},
                                   AckPreview{PolicyKind::Dra, "llm-decode", 2},
                                   PutIntent{in},
                                   PutClaim{gpu_claim(1)},
                                   PutPod{decode_pod()},
                                   DeleteClaim{"claim-old", 4},
                                   DeletePod{"pod-old"},
                                   DeletePolicy{PolicyKind::Node, "vllm-enginecore", 1}};
  const std::string text = encode_changes(7, changes);
  uint64_t seq = 0;
  std::vector<StateChange> back;
  FieldError err;
  ASSERT_TRUE(decode_changes(text, &seq, &back, &err)) << err.field << ": " << err.message;
  EXPECT_EQ(seq, 7u);
  EXPECT_EQ(encode_changes(7, back), text);
  DurableState once, twice;
  for (const auto& c : back) apply_change(once, c);
  for (int i = 0; i < 2; ++i)
    for (const auto& c : back) apply_change(twice, c);
  EXPECT_EQ(encode_state(once), encode_state(twice));
  EXPECT_EQ(once.policies.size(), 1u);            // the DRA policy; the node one was deleted
  EXPECT_EQ(once.policy_tombstones.size(), 1u);
  EXPECT_EQ(once.claims.size(), 1u);
  EXPECT_EQ(once.preview_acks.size(), 1u);
  EXPECT_TRUE(once.intents.empty());              // deleting a policy drops its intent
  EXPECT_FALSE(decode_changes(R"({"seq":1,"changes":[{"nope":{}}]})", &seq, &back, &err));
  EXPECT_NE(err.field.find("nope"), std::string::npos) << err.field;
}

}  // namespace
}  // namespace c2c::daemon
