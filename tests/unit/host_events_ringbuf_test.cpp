// The task-event ring buffer's size: derived from pid_max (room for two records per possible
// task: a burst of starts, each a fork and a rename), a power of two within [1 MiB, 64 MiB];
// configured sizes outside the kernel's rules are refused with the reason.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/events_ringbuf.hpp"

using namespace c2c::host;
namespace fs = std::filesystem;

namespace {

TEST(HostEventsRingbuf, DerivedFromPidMaxWithRoomForABurstOfEveryTask) {
  EXPECT_EQ(events_ringbuf_bytes_for(32768), 4u << 20);  // 2 * 32768 * 56 = 3.5 MiB -> 4 MiB
  EXPECT_GE(events_ringbuf_bytes_for(32768) / kEventRecordBytes, 2u * 32768);
  EXPECT_EQ(events_ringbuf_bytes_for(131072), 16u << 20);
  EXPECT_GE(events_ringbuf_bytes_for(131072) / kEventRecordBytes, 2u * 131072);
  EXPECT_EQ(events_ringbuf_bytes_for(4194304), 64u << 20);  // PID_MAX_LIMIT: capped
  EXPECT_EQ(events_ringbuf_bytes_for(0), 1u << 20);         // the compiled-in floor
  EXPECT_EQ(events_ringbuf_bytes_for(301), 1u << 20);
  EXPECT_EQ(events_ringbuf_bytes_for(~0ull), 64u << 20);
  for (uint64_t p : {0ull, 301ull, 32768ull, 99999ull, 4194304ull})
    EXPECT_FALSE(events_ringbuf_bytes_problem(events_ringbuf_bytes_for(p))) << p;
}

TEST(HostEventsRingbuf, DefaultReadsPidMaxAndFallsBackToTheFloor) {
  const fs::path f = fs::temp_directory_path() / ("c2c-pid-max-" + std::to_string(::getpid()));
  std::ofstream(f) << "131072\n";
  EXPECT_EQ(default_events_ringbuf_bytes(f), 16u << 20);
  std::ofstream(f) << "not a number\n";
  EXPECT_EQ(default_events_ringbuf_bytes(f), 1u << 20);
  fs::remove(f);
  EXPECT_EQ(default_events_ringbuf_bytes(f), 1u << 20);
  EXPECT_FALSE(events_ringbuf_bytes_problem(default_events_ringbuf_bytes()));  // this host's
}

TEST(HostEventsRingbuf, ConfiguredSizesFollowTheKernelsRules) {
  EXPECT_FALSE(events_ringbuf_bytes_problem(1u << 20));
  EXPECT_FALSE(events_ringbuf_bytes_problem(1u << 30));
  const auto odd = events_ringbuf_bytes_problem(3u << 20);
  ASSERT_TRUE(odd);
  EXPECT_NE(odd->find("not a power of two"), std::string::npos) << *odd;
  const auto small = events_ringbuf_bytes_problem(4096);
  ASSERT_TRUE(small);
  EXPECT_NE(small->find("outside"), std::string::npos) << *small;
  EXPECT_TRUE(events_ringbuf_bytes_problem(2ull << 30));
}

}  // namespace
