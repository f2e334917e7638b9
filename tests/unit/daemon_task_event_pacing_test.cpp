// When the loop reads the task-event ring buffer (src/daemon/loop/task_event_pacing.hpp): at the
// kernel's wake-up, or on its own clock in a storm, and back.
#include <gtest/gtest.h>

#include "daemon/loop/task_event_pacing.hpp"

namespace {

using c2c::daemon::TaskEventPacing;
using Mode = TaskEventPacing::Mode;
constexpr uint64_t kMs = 1'000'000;

TEST(TaskEventPacing, LoneRecordsAreReadAtTheirWakeUp) {
  TaskEventPacing p(kMs);
  // Records 5 ms apart: each read at its wake-up, after the loop slept ~5 ms; no clock.
  for (uint64_t t = 10 * kMs; t < 100 * kMs; t += 5 * kMs) {
    EXPECT_EQ(p.read(t, 1, 5 * kMs - 20'000), Mode::Wake);
    EXPECT_FALSE(p.deadline().has_value());
  }
  // Reads that found nothing (a timer turn) never start a storm, however short the waits.
  for (uint64_t t = 200 * kMs; t < 200 * kMs + 10; ++t) EXPECT_EQ(p.read(t, 0, 0), Mode::Wake);
  EXPECT_EQ(p.storms(), 0u);
}

TEST(TaskEventPacing, AShortLivedThreadIsReadAtOnce) {
  // A new thread: its fork record after a 2 ms sleep, its name's after a 20 us one, its exit's
  // 100 us later; the next thread 2 ms on. Every read at its wake-up (daemon-scale's new-thread
  // samples: with three reads a storm, the next sample's fork waited for a poll, p99 1.1 ms).
  TaskEventPacing p(kMs);
  for (uint64_t t = 10 * kMs; t < 60 * kMs; t += 2 * kMs) {
    EXPECT_EQ(p.read(t, 1, 2 * kMs - 120'000), Mode::Wake);
    EXPECT_EQ(p.read(t + 20'000, 1, 15'000), Mode::Wake);
    EXPECT_EQ(p.read(t + 120'000, 1, 90'000), Mode::Wake);
    EXPECT_FALSE(p.deadline().has_value());
  }
  EXPECT_EQ(p.storms(), 0u);
}

TEST(TaskEventPacing, EightReadsWithRecordsEachAfterAShortWaitStartAStormPolledOnTheClock) {
  TaskEventPacing p(kMs);
  EXPECT_EQ(p.read(10 * kMs, 2, 50 * kMs), Mode::Wake);
  for (int i = 1; i < 7; ++i) EXPECT_EQ(p.read(10 * kMs + i * 10'000, 1, 5'000), Mode::Wake);
  // The eighth after a wait of more than the interval: the streak starts over.
  EXPECT_EQ(p.read(12 * kMs, 1, kMs + 1), Mode::Wake);
  for (int i = 1; i < 7; ++i) EXPECT_EQ(p.read(12 * kMs + i * 10'000, 1, kMs / 2), Mode::Wake);
  // A loop busy with each record for longer than the interval (no wait at all) is in a storm
  // however far apart its reads start.
  EXPECT_EQ(p.read(15 * kMs, 1, 0), Mode::Poll);
  EXPECT_EQ(p.storms(), 1u);
  EXPECT_EQ(p.deadline(), 16 * kMs);
  // Each poll that finds records keeps the storm and sets the next poll an interval later.
  EXPECT_EQ(p.read(16 * kMs, 40, kMs), Mode::Poll);
  EXPECT_EQ(p.deadline(), 17 * kMs);
  EXPECT_EQ(p.read(17 * kMs, 1, kMs), Mode::Poll);
  EXPECT_EQ(p.deadline(), 18 * kMs);
  EXPECT_EQ(p.storms(), 1u);
}

// Drives p into a storm at now_ns (kStormReads reads without a wait, the last one at now_ns).
void storm(TaskEventPacing& p, uint64_t now_ns) {
  for (unsigned i = 1; i < TaskEventPacing::kStormReads; ++i) ASSERT_EQ(p.read(now_ns - 10 + i, 1, 0), Mode::Wake);
  ASSERT_EQ(p.read(now_ns, 1, 0), Mode::Poll);
}

TEST(TaskEventPacing, AnEmptyPollEndsTheStormWithOneSettleReadAnIntervalLater) {
  TaskEventPacing p(kMs);
  storm(p, 10 * kMs);
  EXPECT_EQ(p.read(12 * kMs, 0, kMs), Mode::Wake);
  // A record written with wake-ups off after the caller's last read would wake nobody: read
  // once more, an interval later.
  EXPECT_EQ(p.deadline(), 13 * kMs);
  EXPECT_EQ(p.read(13 * kMs, 0, kMs), Mode::Wake);
  EXPECT_FALSE(p.deadline().has_value());
  // The storm's reads do not count towards the next one: it takes kStormReads in a row again.
  storm(p, 20 * kMs);
  EXPECT_EQ(p.storms(), 2u);
}

TEST(TaskEventPacing, IntervalZeroNeverPollsAndEndsAStormAtItsNextRead) {
  TaskEventPacing off(0);
  for (uint64_t t = 1; t < 100; ++t) EXPECT_EQ(off.read(t, 3, 0), Mode::Wake);
  EXPECT_FALSE(off.deadline().has_value());

  TaskEventPacing p(kMs);
  storm(p, 10 * kMs);
  p.set_interval(0);  // SIGHUP
  EXPECT_EQ(p.read(11 * kMs, 5, kMs), Mode::Wake);
  EXPECT_FALSE(p.deadline().has_value());
}

}  // namespace
