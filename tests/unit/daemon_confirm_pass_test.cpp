// The daemon's read-back and memory pieces (pure): the short read-back compares only the keys
// written since the last one (src/daemon/reconciler/confirm_pass.hpp), and the heap is given back once after a
// mass exit, when the exits have stopped for the quiet time, never for a few exits, never in the
// middle of a burst (src/daemon/loop/heap_trim.hpp); the drop counter is read at most every 10 ms
// (src/daemon/loop/throttle.hpp); the periodic full passes are paced (src/daemon/reconciler/full_pass_pacing.hpp).
// Built into daemon_intents_tests, so
// tests/mutants/mutate.py mirror seeds bugs in them.
#include <gtest/gtest.h>

#include "daemon/reconciler/confirm_pass.hpp"
#include "daemon/reconciler/full_pass_pacing.hpp"
#include "daemon/loop/heap_trim.hpp"
#include "daemon/reconciler/sliced_read_back.hpp"
#include "daemon/loop/throttle.hpp"

namespace c2c::daemon {
namespace {

// The short read-back compares only the keys written since the last read-back: every kind of
// difference among them counts once (a value changed, an entry the core does not know, an entry
// written and gone), keys nobody wrote are not looked at.
TEST(ConfirmPass, DriftAmongTheWrittenKeysOnly) {
  RuntimeValue a, b;
  a.slice_ns = 1'000'000;
  b.slice_ns = 2'000'000;
  const Core::ActualTable known{{1, a}, {2, a}, {3, a}, {4, a}};
  EXPECT_EQ(drift_among({1, 2}, {{1, a}, {2, a}}, known), 0u);
  EXPECT_EQ(drift_among({}, {}, known), 0u) << "nothing written: nothing to compare";
  EXPECT_EQ(drift_among({1, 2}, {{1, a}, {2, b}}, known), 1u) << "2 holds another value";
  EXPECT_EQ(drift_among({1, 9}, {{1, a}, {9, a}}, known), 1u) << "9 is in the map, not in the core";
  EXPECT_EQ(drift_among({1, 2, 2}, {{1, a}}, known), 1u) << "2 was written and is gone (counted once)";
  EXPECT_EQ(drift_among({7}, {}, known), 0u) << "7 deleted, and absent on both sides";
}

// The whole-map read-back: the map is compared with everything the core believes it holds;
// present is not equal (a key with another value is drift), and keys gone count.
TEST(ConfirmPass, WholeMapDriftIsZeroExactlyWhenTheMapIsAsBelieved) {
  RuntimeValue a, b;
  a.slice_ns = 1'000'000;
  b.slice_ns = 2'000'000;
  const Core::ActualTable known{{1, a}, {2, a}, {3, a}};
  EXPECT_EQ(whole_map_drift({{1, a}, {2, a}, {3, a}}, known), 0u);
  EXPECT_EQ(whole_map_drift({}, {}), 0u);
  EXPECT_EQ(whole_map_drift({{1, a}, {2, b}, {3, a}}, known), 1u) << "2 holds another (older) value";
  EXPECT_EQ(whole_map_drift({{1, a}, {2, a}}, known), 1u) << "3 is gone from the map";
  EXPECT_EQ(whole_map_drift({}, known), 3u) << "the map was emptied";
  EXPECT_EQ(whole_map_drift({{1, a}, {2, a}, {3, a}, {9, a}}, known), 1u) << "9 is in the map, not in the core";
  EXPECT_EQ(whole_map_drift({{1, a}}, {}), 1u) << "the core believes the map empty";
}

TEST(ConfirmPass, WrittenKeysGiveUpBeyondTheirLimit) {
  WrittenKeys w(3);
  EXPECT_TRUE(w.empty());
  for (uint32_t t = 1; t <= 3; ++t) w.add(t);
  EXPECT_FALSE(w.too_many());
  EXPECT_EQ(w.tids(), (std::vector<uint32_t>{1, 2, 3}));
  w.add(4);
  EXPECT_TRUE(w.too_many()) << "a batched read of the whole map is cheaper now";
  w.add(5);
  EXPECT_EQ(w.tids().size(), 4u) << "nothing kept beyond the limit";
  w.clear();
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(w.too_many());
  // A read-back in slices that failed or found drift: which keys were written is not known.
  w.add(1);
  w.forget();
  EXPECT_TRUE(w.too_many()) << "the next read-back reads the whole map";
  EXPECT_FALSE(w.empty()) << "nothing may be confirmed as read back";
  w.clear();
  EXPECT_FALSE(w.too_many());
  EXPECT_TRUE(w.empty());
}

TEST(SlicedReadBack, TidBitsHoldWhatWasSetOnly) {
  TidBits b;
  EXPECT_FALSE(b.test(0));
  EXPECT_FALSE(b.test(4'194'303)) << "beyond what was ever set";
  b.set(63);
  b.set(64);
  b.set(4'194'303);
  EXPECT_TRUE(b.test(63));
  EXPECT_TRUE(b.test(64));
  EXPECT_TRUE(b.test(4'194'303));
  EXPECT_FALSE(b.test(62));
  EXPECT_FALSE(b.test(65));
}

// The map equal to the core's belief, read in chunks with the keys gone through in slices: no
// drift, done once every key was handed out, each key once.
TEST(SlicedReadBack, AMapAsBelievedIsCleanAndEveryKeyIsHandedOutOnce) {
  RuntimeValue a;
  a.slice_ns = 1'000'000;
  const Core::ActualTable known{{1, a}, {2, a}, {3, a}, {4, a}, {5, a}};
  SlicedReadBack p(true, 100);
  EXPECT_TRUE(p.walking());
  p.walked({{3, a}, {1, a}}, known, false);
  p.walked({{5, a}, {2, a}, {4, a}}, known, true);
  EXPECT_FALSE(p.walking());
  EXPECT_FALSE(p.done()) << "the keys are still to go through";
  p.take_keys({5, 4, 3, 2, 1, 7});  // 7: desired, not in the map
  std::vector<uint32_t> handed;
  for (int slices = 0; !p.done() && slices < 10; ++slices) {
    auto s = p.next_slice(5, known);  // 5, then the last key alone
    EXPECT_LE(s.size(), 5u);
    handed.insert(handed.end(), s.begin(), s.end());
  }
  EXPECT_EQ(handed, (std::vector<uint32_t>{5, 4, 3, 2, 1, 7}));
  EXPECT_EQ(p.drift(), 0u);
  EXPECT_EQ(p.units, 11u);
}

// Every kind of drift the whole-map read found, found in slices: a value changed under the
// daemon, an entry the core does not know, an entry the core has in the map that is gone.
TEST(SlicedReadBack, FindsEachKindOfDrift) {
  RuntimeValue a, b;
  a.slice_ns = 1'000'000;
  b.slice_ns = 2'000'000;
  const Core::ActualTable known{{1, a}, {2, a}, {3, a}};
  {
    SlicedReadBack p(false, 0);
    p.walked({{1, a}, {2, b}, {3, a}}, known, true);
    EXPECT_EQ(p.drift(), 1u) << "2 holds another value";
  }
  {
    SlicedReadBack p(false, 0);
    p.walked({{1, a}, {2, a}, {3, a}, {9, a}}, known, true);
    EXPECT_EQ(p.drift(), 1u) << "9 is in the map, not in the core";
  }
  {
    SlicedReadBack p(false, 0);
    p.walked({{1, a}, {3, a}}, known, true);
    p.take_keys({1, 2, 3});
    for (int slices = 0; !p.done() && slices < 10; ++slices) p.next_slice(2, known);
    EXPECT_EQ(p.drift(), 1u) << "2 is gone from the map";
  }
}

// What the daemon did between slices is not drift: a key it wrote after the walk had passed its
// part of the map, a key it deleted; after a re-observation the missing-key test is off.
TEST(SlicedReadBack, TheDaemonsOwnChangesBetweenSlicesAreNotDrift) {
  RuntimeValue a;
  a.slice_ns = 1'000'000;
  Core::ActualTable known{{1, a}, {2, a}};
  SlicedReadBack p(true, 0);
  p.walked({{1, a}, {2, a}}, known, true);
  known.emplace(8, a);  // written after the walk read its bucket
  p.wrote(8);
  known.erase(2);       // deleted meanwhile
  p.wrote(2);
  p.take_keys({1, 2, 8});
  for (int slices = 0; !p.done() && slices < 10; ++slices) p.next_slice(1, known);
  EXPECT_EQ(p.drift(), 0u);

  SlicedReadBack q(true, 0);
  q.walked({{1, a}}, known, true);
  q.observed();  // 8 came back through BpfObserved: it was in the map then
  q.take_keys({1, 8});
  for (int slices = 0; !q.done() && slices < 10; ++slices) q.next_slice(8, known);
  EXPECT_EQ(q.drift(), 0u);
}

TEST(HeapTrim, OnceAfterAMassExitHasGoneQuiet) {
  HeapTrim t(3, 100);
  t.changed(1000);
  t.changed(1010);
  EXPECT_FALSE(t.deadline()) << "too few exits for a trim";
  EXPECT_FALSE(t.due(5000));
  t.changed(1020);
  ASSERT_TRUE(t.deadline());
  EXPECT_EQ(*t.deadline(), 1120u);
  EXPECT_FALSE(t.due(1119)) << "not before the exits went quiet";
  t.changed(1100);  // the burst goes on: the deadline moves
  EXPECT_EQ(*t.deadline(), 1200u);
  EXPECT_FALSE(t.due(1150));
  EXPECT_TRUE(t.due(1200));
  EXPECT_FALSE(t.due(1300)) << "one trim per burst";
  EXPECT_FALSE(t.deadline());
  t.changed(2000);
  EXPECT_FALSE(t.due(9000)) << "one exit after the trim is not another burst";
}

TEST(HeapTrim, OnceAfterALargeWriteHasGoneQuiet) {
  HeapTrim t(1024, 100);
  t.changed(1000, 0);
  t.changed(1000, 1000);
  EXPECT_FALSE(t.deadline()) << "a write of 1000 entries is not large";
  t.changed(1050, 99'999);  // a policy matching 100k threads: one batch
  ASSERT_TRUE(t.deadline());
  EXPECT_EQ(*t.deadline(), 1150u);
  t.changed(1100, 0);  // an empty write does not move it
  EXPECT_EQ(*t.deadline(), 1150u);
  EXPECT_TRUE(t.due(1150));
  EXPECT_FALSE(t.due(1300)) << "one trim per burst";
}

// The drop counter's look (HostFeed::lost_events): at most once per interval, and a refused look
// is owed, so the loop's timer still wakes for it when no other turn comes.
TEST(Throttle, AtMostOncePerIntervalAndARefusedLookIsOwed) {
  Throttle t(10);
  EXPECT_FALSE(t.deadline());
  EXPECT_TRUE(t.due(100)) << "the first look";
  EXPECT_FALSE(t.deadline()) << "nothing refused yet";
  EXPECT_FALSE(t.due(105));
  ASSERT_TRUE(t.deadline());
  EXPECT_EQ(*t.deadline(), 110u);
  EXPECT_FALSE(t.due(109));
  EXPECT_TRUE(t.due(110));
  EXPECT_FALSE(t.deadline()) << "paid";
  EXPECT_TRUE(t.due(500));
}

}  // namespace
}  // namespace c2c::daemon

// The periodic full passes (issue #13): the configured interval while they are cheap, at most 1 %
// of the loop's time once a pass costs more than interval / 99 (the whole map at 100k entries),
// and a pass due over a table that grew since the last is expected to cost in proportion.
TEST(FullPassPacing, TheIntervalWhileCheapAtMostOnePercentOnceCostly) {
  using c2c::daemon::FullPassCost;
  using c2c::daemon::next_full_pass_ns;
  const uint64_t ms = 1'000'000, interval = 5'000 * ms, ended = 1'000'000 * ms;
  EXPECT_EQ(next_full_pass_ns(FullPassCost{ended, 2 * ms, 1000}, 1000, interval), ended + interval)
      << "1k entries: the interval stands";
  EXPECT_EQ(next_full_pass_ns(FullPassCost{ended, 0, 0}, 0, interval), ended + interval);
  const uint64_t costly = 220 * ms;  // the full read-back at 100k entries on this machine
  const FullPassCost big{ended, costly, 100'000};
  const uint64_t next = next_full_pass_ns(big, 100'000, interval);
  EXPECT_EQ(next, ended + 99 * costly);
  EXPECT_LE(static_cast<double>(costly) / static_cast<double>(next - ended + costly), 0.01) << "at most 1 % busy";
  EXPECT_GE(next, ended + interval) << "never sooner than the configured interval";
  // The last pass ran over 2k entries in 2 ms; the table has 100k now: expected 100 ms.
  const FullPassCost small{ended, 2 * ms, 2000};
  EXPECT_EQ(next_full_pass_ns(small, 100'000, interval), ended + 99 * 100 * ms) << "scaled to the table now";
  // Near-empty passes count as 1024 entries: 1 ms over 10 entries does not predict 10 s at 100k.
  const uint64_t from_tiny = next_full_pass_ns(FullPassCost{ended, 1 * ms, 10}, 100'000, interval);
  EXPECT_LT(from_tiny, ended + 99 * 100 * ms);
  EXPECT_GT(from_tiny, ended + interval);
  // The table shrank: back to the interval.
  EXPECT_EQ(next_full_pass_ns(big, 500, interval), ended + interval);
}

// A periodic pass's schedule: due at its time unless the table grew so much since the last pass
// that pacing moves it on; once run, the next is paced by what it cost.
TEST(FullPassPacing, AScheduleRunsWhenDueAndMovesOnWhenTheTableGrew) {
  using c2c::daemon::FullPassSchedule;
  const uint64_t ms = 1'000'000, interval = 5'000 * ms;
  FullPassSchedule s;
  s.next_ns = 10'000 * ms;
  EXPECT_FALSE(s.due(9'999 * ms, 10, interval)) << "not yet";
  EXPECT_TRUE(s.due(10'000 * ms, 10, interval)) << "no pass ran yet: nothing to pace by";
  s.ran(10'000 * ms, 10'002 * ms, 2000, interval);  // 2 ms over 2k entries
  EXPECT_EQ(s.next_ns, 15'002 * ms) << "cheap: the interval";
  // 100k entries by then: expected 100 ms, so not before 99 x 100 ms after the last pass ended.
  EXPECT_FALSE(s.due(15'002 * ms, 100'000, interval));
  EXPECT_EQ(s.next_ns, 10'002 * ms + 9'900 * ms) << "moved on";
  EXPECT_TRUE(s.due(s.next_ns, 100'000, interval));
}
