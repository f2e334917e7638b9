// When the loop reads the task-event ring buffer (src/daemon/task_event_pacing.hpp): at the
// kernel's wake-up, or on its own clock in a storm, and back.
#include <gtest/gtest.h>

#include "daemon/task_event_pacing.hpp"

namespace {

using c2c::daemon::TaskEventPacing;
using Mode = TaskEventPacing::Mode;
constexpr uint64_t kMs = 1'000'000;

TEST(TaskEventPacing, LoneRecordsAreReadAtTheirWakeUp) {
  TaskEventPacing p(kMs);
  // Records 5 ms apart: each read at its wake-up, no clock.
  for (uint64_t t = 10 * kMs; t < 100 * kMs; t += 5 * kMs) {
    EXPECT_EQ(p.read(t, 1), Mode::Wake);
    EXPECT_FALSE(p.deadline().has_value());
  }
  // Reads that found nothing (a timer turn) never start a storm, however close together.
  EXPECT_EQ(p.read(200 * kMs, 0), Mode::Wake);
  EXPECT_EQ(p.read(200 * kMs + 1, 0), Mode::Wake);
  EXPECT_EQ(p.storms(), 0u);
}

TEST(TaskEventPacing, AThreadStartIsReadAtOnce) {
  // A new thread: its fork record, then its name's a few microseconds later; the next thread
  // 2 ms on. Every read at its wake-up.
  TaskEventPacing p(kMs);
  for (uint64_t t = 10 * kMs; t < 60 * kMs; t += 2 * kMs) {
    EXPECT_EQ(p.read(t, 1), Mode::Wake);
    EXPECT_EQ(p.read(t + 20'000, 1), Mode::Wake);
    EXPECT_FALSE(p.deadline().has_value());
  }
  EXPECT_EQ(p.storms(), 0u);
}

TEST(TaskEventPacing, ThreeReadsWithRecordsEachWithinTheIntervalStartAStormPolledOnTheClock) {
  TaskEventPacing p(kMs);
  EXPECT_EQ(p.read(10 * kMs, 2), Mode::Wake);
  EXPECT_EQ(p.read(10 * kMs + kMs / 2, 1), Mode::Wake);
  // Three in a row, but the third more than an interval after the second: the streak starts over.
  EXPECT_EQ(p.read(12 * kMs, 1), Mode::Wake);
  EXPECT_EQ(p.read(12 * kMs + kMs / 2, 1), Mode::Wake);
  EXPECT_EQ(p.read(12 * kMs + kMs / 2 + 10, 1), Mode::Poll);
  EXPECT_EQ(p.storms(), 1u);
  EXPECT_EQ(p.deadline(), 13 * kMs + kMs / 2 + 10);
  // Each poll that finds records keeps the storm and sets the next poll an interval later.
  EXPECT_EQ(p.read(12 * kMs, 40), Mode::Poll);
  EXPECT_EQ(p.deadline(), 13 * kMs);
  EXPECT_EQ(p.read(13 * kMs, 1), Mode::Poll);
  EXPECT_EQ(p.deadline(), 14 * kMs);
  EXPECT_EQ(p.storms(), 1u);
}

TEST(TaskEventPacing, AnEmptyPollEndsTheStormWithOneSettleReadAnIntervalLater) {
  TaskEventPacing p(kMs);
  p.read(10 * kMs, 1);
  p.read(10 * kMs + 1, 1);
  ASSERT_EQ(p.read(10 * kMs + 2, 1), Mode::Poll);
  EXPECT_EQ(p.read(12 * kMs, 0), Mode::Wake);
  // A record written with wake-ups off after the caller's last read would wake nobody: read
  // once more, an interval later.
  EXPECT_EQ(p.deadline(), 13 * kMs);
  EXPECT_EQ(p.read(13 * kMs, 0), Mode::Wake);
  EXPECT_FALSE(p.deadline().has_value());
  // The storm's records do not count towards the next one: records after it are read at their
  // wake-ups until three in a row come close again.
  EXPECT_EQ(p.read(13 * kMs + 10, 1), Mode::Wake);
  EXPECT_EQ(p.read(13 * kMs + 20, 1), Mode::Wake);
  EXPECT_EQ(p.read(20 * kMs, 1), Mode::Wake);
  EXPECT_EQ(p.storms(), 1u);
}

TEST(TaskEventPacing, IntervalZeroNeverPollsAndEndsAStormAtItsNextRead) {
  TaskEventPacing off(0);
  for (uint64_t t = 1; t < 100; ++t) EXPECT_EQ(off.read(t, 3), Mode::Wake);
  EXPECT_FALSE(off.deadline().has_value());

  TaskEventPacing p(kMs);
  p.read(10 * kMs, 1);
  p.read(10 * kMs + 1, 1);
  ASSERT_EQ(p.read(10 * kMs + 2, 1), Mode::Poll);
  p.set_interval(0);  // SIGHUP
  EXPECT_EQ(p.read(11 * kMs, 5), Mode::Wake);
  EXPECT_FALSE(p.deadline().has_value());
}

}  // namespace
