// The durable node policy generation and its write-ahead lease (INV-4).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/fnv.hpp"
#include "mirror/generation_store.hpp"

namespace c2c::mirror {
namespace {

namespace fs = std::filesystem;

struct MirrorGeneration : ::testing::Test {
  fs::path dir;
  std::string file;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("c2c-mirror-gen-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    file = (dir / "generation").string();
  }
  void TearDown() override { fs::remove_all(dir); }
  void write_raw(const std::string& text) { std::ofstream(file, std::ios::binary) << text; }
  std::string read_raw() {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(MirrorGeneration, MissingFileIsZero) {
  auto g = load_generation(file);
  ASSERT_TRUE(g.ok()) << g.error();
  EXPECT_EQ(g.value(), 0u);
}

TEST_F(MirrorGeneration, StoreThenLoadReturnsTheValue) {
  ASSERT_EQ(store_generation(file, 41), "");
  EXPECT_EQ(load_generation(file).value(), 41u);
  ASSERT_EQ(store_generation(file, 41), "") << "storing the same value again is fine";
  ASSERT_EQ(store_generation(file, 1ull << 40), "");
  EXPECT_EQ(load_generation(file).value(), 1ull << 40);
  EXPECT_FALSE(fs::exists(file + ".tmp")) << "the temp file is renamed away";
}

TEST_F(MirrorGeneration, StoringALowerValueIsRefused) {
  ASSERT_EQ(store_generation(file, 100), "");
  const std::string before = read_raw();
  std::string e = store_generation(file, 99);
  EXPECT_NE(e.find("INV-4"), std::string::npos) << e;
  EXPECT_NE(e.find("below the stored 100"), std::string::npos) << e;
  EXPECT_EQ(read_raw(), before);
  EXPECT_EQ(load_generation(file).value(), 100u);
}

TEST_F(MirrorGeneration, CorruptFilesAreErrorsNotZero) {
  ASSERT_EQ(store_generation(file, 7), "");
  const std::string good = read_raw();
  std::string flipped = good;
  flipped[good.find('7')] = '8';  // value changed, checksum not
  const std::string cases[] = {"", "garbage\n", good.substr(0, good.size() - 3), flipped,
                               "c2c-generation v1 -5 0000000000000000\n", std::string(4096, 'x')};
  for (const auto& text : cases) {
    write_raw(text);
    auto g = load_generation(file);
    ASSERT_FALSE(g.ok()) << "accepted: '" << text << "'";
    EXPECT_NE(g.error().find("corrupt"), std::string::npos) << g.error();
    std::string e = store_generation(file, 1000);
    EXPECT_NE(e.find("not overwritten"), std::string::npos) << e;
    EXPECT_EQ(read_raw(), text) << "a corrupt file is left for a person to look at";
    EXPECT_FALSE(GenerationLease::open(file).ok());
  }
}

TEST_F(MirrorGeneration, LeaseSyncsOncePerLease) {
  auto lease = GenerationLease::open(file, 10);
  ASSERT_TRUE(lease.ok()) << lease.error();
  EXPECT_EQ(lease->floor(), 0u);
  for (uint64_t want = 1; want <= 10; ++want) EXPECT_EQ(lease->next().value(), want);
  EXPECT_EQ(lease->syncs(), 1u);
  EXPECT_EQ(lease->durable(), 10u);
  EXPECT_EQ(load_generation(file).value(), 10u) << "persisted before generation 1 was handed out";
  EXPECT_EQ(lease->next().value(), 11u);
  EXPECT_EQ(lease->syncs(), 2u);
  EXPECT_EQ(load_generation(file).value(), 20u);
}

// keep_ahead extends the ceiling only when less than `margin` is left above the generation in
// use, hands nothing out, and refuses what cover refuses.
TEST_F(MirrorGeneration, KeepAheadExtendsOnlyWhenTheHeadroomIsShort) {
  auto lease = GenerationLease::open(file, 10);
  ASSERT_TRUE(lease.ok()) << lease.error();
  ASSERT_EQ(lease->cover(1), "");
  EXPECT_EQ(lease->durable(), 10u);
  EXPECT_EQ(lease->keep_ahead(5, 4), "") << "10 >= 5 + 4: enough left";
  EXPECT_EQ(lease->syncs(), 1u);
  EXPECT_EQ(lease->keep_ahead(7, 4), "");  // 10 < 7 + 4: a new ceiling, 7 + 9
  EXPECT_EQ(lease->syncs(), 2u);
  EXPECT_EQ(lease->durable(), 16u);
  EXPECT_EQ(load_generation(file).value(), 16u) << "persisted";
  EXPECT_EQ(lease->current(), 1u) << "nothing handed out";
  EXPECT_EQ(lease->keep_ahead(8, 30), "");  // a margin past the lease: the ceiling moves by the margin
  EXPECT_EQ(lease->durable(), 38u);
  EXPECT_EQ(lease->next().value(), 2u) << "next() continues from what was handed out";
  auto again = GenerationLease::open(file, 10);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_NE(again->keep_ahead(again->floor(), 4), "") << "at the floor: an earlier process may have used it";
}

TEST_F(MirrorGeneration, RestartNeverGoesBack) {
  uint64_t last = 0;
  for (int incarnation = 0; incarnation < 5; ++incarnation) {
    auto lease = GenerationLease::open(file, 8);
    ASSERT_TRUE(lease.ok()) << lease.error();
    // This process "crashes" after a few generations without any shutdown step.
    for (int i = 0; i < 3 + incarnation * 4; ++i) {
      uint64_t g = lease->next().value();
      EXPECT_GT(g, last) << "incarnation " << incarnation;
      EXPECT_LE(g, load_generation(file).value()) << "every used generation is covered on disk";
      last = g;
    }
  }
}

TEST_F(MirrorGeneration, CoverRefusesWhatAnEarlierProcessMayHaveUsed) {
  ASSERT_EQ(store_generation(file, 50), "");
  auto lease = GenerationLease::open(file, 4);
  ASSERT_TRUE(lease.ok());
  std::string e = lease->cover(50);
  EXPECT_NE(e.find("INV-4"), std::string::npos) << e;
  EXPECT_EQ(lease->cover(60), "");
  EXPECT_EQ(load_generation(file).value(), 63u);
  EXPECT_EQ(lease->cover(55), "") << "below the high mark of this process but above the floor";
  EXPECT_EQ(lease->current(), 60u);
  EXPECT_EQ(lease->next().value(), 61u);
}

// Inside the write-ahead lease: when the next ceiling cannot be stored (here its temp file
// cannot be created: a directory sits on the name, which stops root too), nothing above the
// stored ceiling is handed out, covered or counted, and a restart would start above all of it.
TEST_F(MirrorGeneration, AFailedCeilingStoreHandsOutNothingAboveTheDurableCeiling) {
  auto lease = GenerationLease::open(file, 4);
  ASSERT_TRUE(lease.ok()) << lease.error();
  ASSERT_EQ(lease->next().value(), 1u);
  ASSERT_EQ(lease->durable(), 4u);
  fs::create_directory(file + ".tmp");
  for (uint64_t want = 2; want <= 4; ++want) EXPECT_EQ(lease->next().value(), want) << "inside the stored ceiling";
  auto g = lease->next();
  ASSERT_FALSE(g.ok()) << "generation " << g.value() << " handed out above the durable ceiling 4";
  EXPECT_NE(g.error().find("open " + file + ".tmp"), std::string::npos) << g.error();
  std::string e = lease->cover(9);
  EXPECT_NE(e.find("open " + file + ".tmp"), std::string::npos) << e;
  EXPECT_EQ(lease->current(), 4u) << "a generation that is not durable was counted as used";
  EXPECT_EQ(lease->durable(), 4u);
  EXPECT_EQ(lease->syncs(), 1u);
  EXPECT_EQ(load_generation(file).value(), 4u);
  auto restarted = GenerationLease::open(file, 4);
  ASSERT_TRUE(restarted.ok());
  EXPECT_GE(restarted->floor(), lease->current()) << "a restart could reuse a generation";
  // The disk recovers: the sequence goes on where it stopped.
  fs::remove(file + ".tmp");
  EXPECT_EQ(lease->next().value(), 5u);
  EXPECT_EQ(lease->durable(), 8u);
  EXPECT_EQ(load_generation(file).value(), 8u);
}

TEST_F(MirrorGeneration, UnreadablePathIsAnErrorNotZero) {
  // Only a missing file means "first start"; any other failure to read must not become 0.
  auto g = load_generation("/dev/null/generation");  // ENOTDIR
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().find("cannot open"), std::string::npos) << g.error();
}

// Issue 45: the bound (2^53) holds for every generation the file holds or the lease covers: a
// ceiling stops at it, nothing beyond it is stored, covered or read as a floor, and each refusal
// names INV-4.
TEST_F(MirrorGeneration, NothingBeyondTheBoundIsStoredCoveredOrLoaded) {
  constexpr uint64_t kBound = 1ull << 53;
  std::string e = store_generation(file, kBound + 1);
  EXPECT_NE(e.find("INV-4"), std::string::npos) << e;
  EXPECT_NE(e.find("2^53"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(file)) << "nothing stored";
  ASSERT_EQ(store_generation(file, kBound - 10), "");
  auto lease = GenerationLease::open(file, 1024);
  ASSERT_TRUE(lease.ok()) << lease.error();
  ASSERT_EQ(lease->cover(kBound - 5), "");
  EXPECT_EQ(lease->durable(), kBound) << "the ceiling stops at the bound (was " << kBound - 5 + 1023 << ")";
  EXPECT_EQ(load_generation(file).value(), kBound);
  EXPECT_EQ(lease->keep_ahead(kBound - 4, 256), "") << "the bound is as far ahead as a ceiling goes";
  EXPECT_EQ(lease->durable(), kBound);
  EXPECT_EQ(lease->cover(kBound), "") << "the last generation is usable";
  e = lease->cover(kBound + 1);
  EXPECT_NE(e.find("INV-4"), std::string::npos) << e;
  auto g = lease->next();
  ASSERT_FALSE(g.ok()) << "handed out " << g.value() << " beyond the bound";
  EXPECT_NE(g.error().find("2^53"), std::string::npos) << g.error();
  EXPECT_EQ(load_generation(file).value(), kBound) << "the refusals stored nothing";
  // A file beyond the bound (written by hand, or by an older build) is refused when read.
  fs::remove(file);
  const std::string body = "c2c-generation v1 " + std::to_string(kBound + 5);
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(fnv1a64(body)));
  write_raw(body + " " + sum + "\n");
  auto loaded = load_generation(file);
  ASSERT_FALSE(loaded.ok()) << "read " << loaded.value();
  EXPECT_NE(loaded.error().find("INV-4"), std::string::npos) << loaded.error();
  EXPECT_FALSE(GenerationLease::open(file).ok());
}

TEST_F(MirrorGeneration, ZeroLeaseIsRefused) { EXPECT_FALSE(GenerationLease::open(file, 0).ok()); }

}  // namespace
}  // namespace c2c::mirror
