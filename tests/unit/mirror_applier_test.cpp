// The applier on an in-memory map: batches, fallbacks, retries, compare-before-delete,
// deferred deletes and the fail-closed full map.
#include <map>
#include <gtest/gtest.h>

#include <chrono>

#include "mirror/applier.hpp"
#include "mirror/policy_value.hpp"
#include "mirror_fake_map.hpp"

namespace c2c::mirror {
namespace {

using testing::FakePolicyMap;
using std::chrono::microseconds;
using std::chrono::nanoseconds;

RuntimeValue val(uint64_t start, uint64_t gen, ExecClass c = ExecClass::Throughput) {
  RuntimeValue v;
  v.start = start;
  v.generation = gen;
  v.tgid = 1;
  v.exec_class = c;
  v.flags = kFlagAllowedCpus;
  v.allowed = CpuSet::range(0, 3);
  return v;
}

PlanOp add(uint32_t tid, RuntimeValue v) { return {PlanOp::Kind::Add, tid, v, "test"}; }
PlanOp upd(uint32_t tid, RuntimeValue v) { return {PlanOp::Kind::Update, tid, v, "test"}; }
PlanOp del(uint32_t tid, RuntimeValue v) { return {PlanOp::Kind::Delete, tid, v, "test"}; }

RuntimeValue in_map(const FakePolicyMap& m, uint32_t tid) { return from_abi(m.entries.at(tid)); }

struct Fixture : ::testing::Test {
  FakePolicyMap map{16};
  std::vector<nanoseconds> sleeps;
  ApplyOptions opts;
  Applier make() {
    return Applier(map, opts, [this](nanoseconds d) { sleeps.push_back(d); });
  }
};

TEST(MirrorBackoff, DoublesFromMinAndIsCapped) {
  RetryPolicy p;
  p.min_backoff = microseconds(100);
  p.max_backoff = microseconds(1000);
  EXPECT_EQ(backoff_delay(p, 0), microseconds(100));
  EXPECT_EQ(backoff_delay(p, 1), microseconds(200));
  EXPECT_EQ(backoff_delay(p, 3), microseconds(800));
  EXPECT_EQ(backoff_delay(p, 4), microseconds(1000));
  EXPECT_EQ(backoff_delay(p, 1000), microseconds(1000)) << "no overflow for huge attempts";
}

using MirrorApply = Fixture;

TEST_F(MirrorApply, AddUpdateDeleteLandWithBatches) {
  map.entries[1] = to_abi(val(10, 1));
  map.entries[2] = to_abi(val(20, 1));
  Plan plan{{upd(1, val(10, 2)), del(2, val(20, 1)), add(3, val(30, 2))}, {}};
  ApplyReport rep = make().apply(plan);
  EXPECT_TRUE(rep.ok()) << rep.error;
  EXPECT_TRUE(rep.batched);
  EXPECT_EQ(rep.applied, 3u);
  ASSERT_EQ(map.entries.size(), 2u);
  EXPECT_EQ(in_map(map, 1), val(10, 2));
  EXPECT_EQ(in_map(map, 3), val(30, 2));
  for (const auto& s : rep.ops) EXPECT_EQ(s.state, OpState::Applied) << describe(s);
  EXPECT_EQ(map.entries.at(3).abi_version, C2C_ABI_VERSION);
}

TEST_F(MirrorApply, DeleteOfAbsentEntryIsSuccess) {
  ApplyReport rep = make().apply(Plan{{del(9, val(90, 1))}, {}});
  EXPECT_TRUE(rep.ok());
  ASSERT_EQ(rep.ops.size(), 1u);
  EXPECT_EQ(rep.ops[0].state, OpState::Absent);
  EXPECT_TRUE(rep.ops[0].success());
}

TEST_F(MirrorApply, ReapplyingAPlanIsIdempotent) {
  map.entries[2] = to_abi(val(20, 1));
  Plan plan{{add(1, val(10, 2)), del(2, val(20, 1)), add(4, val(40, 2))}, {}};
  ASSERT_TRUE(make().apply(plan).ok());
  auto after_first = map.entries;
  ApplyReport again = make().apply(plan);
  EXPECT_TRUE(again.ok()) << again.error;
  EXPECT_EQ(again.absent, 1u);
  EXPECT_EQ(again.applied, 2u);
  ASSERT_EQ(map.entries.size(), after_first.size());
  for (const auto& [tid, v] : after_first) EXPECT_EQ(from_abi(map.entries.at(tid)), from_abi(v));
}

TEST_F(MirrorApply, DeleteKeepsAnEntryOfAnotherTask) {
  map.entries[5] = to_abi(val(500, 1));  // the tid was reused: start differs from the op's
  ApplyReport rep = make().apply(Plan{{del(5, val(499, 1))}, {}});
  ASSERT_EQ(rep.ops.size(), 1u);
  EXPECT_EQ(rep.ops[0].state, OpState::Skipped);
  EXPECT_NE(rep.ops[0].reason.find("INV-2"), std::string::npos) << rep.ops[0].reason;
  EXPECT_EQ(map.entries.count(5), 1u);
}

TEST_F(MirrorApply, DeleteKeepsANewerWrite) {
  map.entries[5] = to_abi(val(500, 8));  // written at generation 8 after the plan saw 7
  ApplyReport rep = make().apply(Plan{{del(5, val(500, 7))}, {}});
  EXPECT_EQ(rep.ops[0].state, OpState::Skipped);
  EXPECT_NE(rep.ops[0].reason.find("INV-3"), std::string::npos) << rep.ops[0].reason;
  EXPECT_EQ(map.entries.count(5), 1u);
}

TEST_F(MirrorApply, DeferredDeletesAreNeverExecuted) {
  map.entries[7] = to_abi(val(70, 1));
  map.entries[8] = to_abi(val(80, 1));
  Plan plan{{add(1, val(10, 2))}, {7, 8}};
  ApplyReport rep = make().apply(plan);
  EXPECT_TRUE(rep.ok());
  EXPECT_EQ(rep.deferred, (std::vector<uint32_t>{7, 8}));
  EXPECT_EQ(map.entries.count(7), 1u);
  EXPECT_EQ(map.entries.count(8), 1u);
  EXPECT_EQ(map.entries.count(1), 1u);
}

TEST_F(MirrorApply, InvalidPlanChangesNothing) {
  map.entries[2] = to_abi(val(20, 1));
  auto before = map.entries;
  struct Case {
    Plan plan;
    std::string field;
  } cases[] = {
      {Plan{{add(1, val(10, 1)), upd(1, val(11, 1))}, {}}, "plan.ops[1].tid"},
      {Plan{{del(2, val(20, 1)), add(0, val(1, 1))}, {}}, "plan.ops[1].tid"},
      {Plan{{add(1, val(10, 1, static_cast<ExecClass>(7)))}, {}}, "plan.ops[0].value.exec_class"},
      {Plan{{del(2, val(20, 1))}, {3, 2}}, "plan.deferred_deletes[1]"},
  };
  for (const auto& c : cases) {
    ApplyReport rep = make().apply(c.plan);
    EXPECT_FALSE(rep.ok());
    EXPECT_NE(rep.error.find(c.field), std::string::npos) << rep.error;
    EXPECT_TRUE(rep.ops.empty());
    ASSERT_EQ(map.entries.size(), before.size());
    EXPECT_EQ(from_abi(map.entries.at(2)), from_abi(before.at(2)));
  }
}

TEST_F(MirrorApply, TransientErrorIsRetriedWithBackoff) {
  opts.retry.min_backoff = microseconds(100);
  opts.retry.max_backoff = microseconds(1000);
  int failures = 2;
  map.fault = [&](char op, uint32_t tid) { return (op == 'u' && tid == 4 && failures-- > 0) ? EAGAIN : 0; };
  Plan plan{{add(3, val(30, 1)), add(4, val(40, 1)), add(5, val(50, 1))}, {}};
  ApplyReport rep = make().apply(plan);
  EXPECT_TRUE(rep.ok()) << rep.error;
  EXPECT_EQ(map.entries.size(), 3u);
  // The batch stops at tid 4 (first EAGAIN); alone it fails once more, then lands.
  EXPECT_EQ(rep.ops[1].attempts, 2u);
  EXPECT_EQ(sleeps, (std::vector<nanoseconds>{microseconds(100)}));
  EXPECT_TRUE(rep.batched) << "tid 5 resumes in a batch";
}

TEST_F(MirrorApply, PersistentTransientErrorFailsThatKeyOnly) {
  opts.retry.max_attempts = 5;
  opts.retry.min_backoff = microseconds(100);
  opts.retry.max_backoff = microseconds(500);
  map.fault = [&](char op, uint32_t tid) { return (op == 'u' && tid == 4) ? EBUSY : 0; };
  ApplyReport rep = make().apply(Plan{{add(3, val(30, 1)), add(4, val(40, 1)), add(5, val(50, 1))}, {}});
  EXPECT_FALSE(rep.ok());
  EXPECT_EQ(rep.failed, 1u);
  EXPECT_EQ(rep.ops[1].state, OpState::Failed);
  EXPECT_EQ(rep.ops[1].err, EBUSY);
  EXPECT_EQ(rep.ops[1].attempts, 5u);
  EXPECT_EQ(sleeps, (std::vector<nanoseconds>{microseconds(100), microseconds(200), microseconds(400),
                                              microseconds(500)}));
  EXPECT_EQ(map.entries.count(3) + map.entries.count(5), 2u);
  EXPECT_NE(describe(rep.ops[1]).find("failed"), std::string::npos);
}

TEST_F(MirrorApply, PermanentErrorIsNotRetried) {
  map.fault = [&](char op, uint32_t tid) { return (op == 'u' && tid == 4) ? EPERM : 0; };
  ApplyReport rep = make().apply(Plan{{add(4, val(40, 1))}, {}});
  EXPECT_EQ(rep.ops[0].state, OpState::Failed);
  EXPECT_EQ(rep.ops[0].attempts, 1u);
  EXPECT_TRUE(sleeps.empty());
}

TEST_F(MirrorApply, FallsBackToSingleKeysWithoutBatchSupport) {
  map.batch_supported = false;
  map.entries[2] = to_abi(val(20, 1));
  map.entries[6] = to_abi(val(60, 1));
  Plan plan{{del(2, val(20, 1)), add(3, val(30, 1)), upd(6, val(60, 2))}, {}};
  Applier a = make();
  ApplyReport rep = a.apply(plan);
  EXPECT_TRUE(rep.ok()) << rep.error;
  EXPECT_FALSE(rep.batched);
  EXPECT_EQ(rep.applied, 3u);
  EXPECT_EQ(map.entries.size(), 2u);
  EXPECT_EQ(in_map(map, 6), val(60, 2));
  auto read = a.read_actual();
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_FALSE(read->batched);
  ASSERT_EQ(read->entries.size(), 2u);
  EXPECT_EQ(read->entries[0].tid, 3u);
}

TEST_F(MirrorApply, EntryVanishingBeforeBatchDeleteIsSuccess) {
  for (uint32_t t = 1; t <= 4; ++t) map.entries[t] = to_abi(val(t * 10, 1));
  // tid 2 disappears between the compare and the delete (e.g. the scheduler's exit path).
  map.fault = [&](char op, uint32_t tid) {
    if (op == 'd' && tid == 2) map.entries.erase(2);
    return 0;
  };
  Plan plan{{del(1, val(10, 1)), del(2, val(20, 1)), del(3, val(30, 1)), del(4, val(40, 1))}, {}};
  ApplyReport rep = make().apply(plan);
  EXPECT_TRUE(rep.ok()) << rep.error;
  EXPECT_EQ(rep.ops[1].state, OpState::Absent);
  EXPECT_EQ(rep.applied, 3u);
  EXPECT_TRUE(map.entries.empty());
}

TEST_F(MirrorApply, FullMapFailsClosed) {
  FakePolicyMap small(4);
  small.entries[1] = to_abi(val(10, 1));
  small.entries[2] = to_abi(val(20, 1));
  Applier a(small, opts, [](nanoseconds) {});
  Plan plan{{upd(1, val(10, 2)), add(3, val(30, 2)), add(4, val(40, 2)), add(5, val(50, 2)), add(6, val(60, 2))}, {}};
  ApplyReport rep = a.apply(plan);
  EXPECT_FALSE(rep.ok());
  EXPECT_TRUE(rep.map_full);
  EXPECT_NE(rep.error.find("map full (4/4)"), std::string::npos) << rep.error;
  // No new entry of the plan is visible; the update of an existing entry stays.
  EXPECT_EQ(small.entries.size(), 2u);
  EXPECT_EQ(from_abi(small.entries.at(1)), val(10, 2));
  EXPECT_EQ(rep.ops[0].state, OpState::Applied);
  EXPECT_EQ(rep.ops[1].state, OpState::RolledBack);
  EXPECT_EQ(rep.ops[2].state, OpState::RolledBack);
  EXPECT_EQ(rep.ops[3].state, OpState::Failed);
  EXPECT_EQ(rep.ops[4].state, OpState::Failed);
  for (size_t i = 1; i < rep.ops.size(); ++i)
    EXPECT_NE(rep.ops[i].reason.find("map full (4/4)"), std::string::npos) << describe(rep.ops[i]);
  EXPECT_EQ(rep.rolled_back, 2u);
}

TEST_F(MirrorApply, FullMapRollbackSparesANewerWrite) {
  FakePolicyMap small(3);
  small.entries[1] = to_abi(val(10, 1));
  const c2c_policy_value newer = to_abi(val(33, 9));
  small.fault = [&](char op, uint32_t tid) {
    if (op == 'u' && tid == 5) small.entries[3] = newer;  // someone rewrites tid 3 meanwhile
    return 0;
  };
  Applier a(small, opts, [](nanoseconds) {});
  ApplyReport rep = a.apply(Plan{{add(3, val(30, 2)), add(4, val(40, 2)), add(5, val(50, 2))}, {}});
  EXPECT_TRUE(rep.map_full);
  EXPECT_EQ(small.entries.count(4), 0u) << "our add is rolled back";
  ASSERT_EQ(small.entries.count(3), 1u) << "a newer write is not ours to undo";
  EXPECT_EQ(from_abi(small.entries.at(3)), from_abi(newer));
}

TEST_F(MirrorApply, ReadsEverythingAcrossBatchesAndFlagsForeignEntries) {
  opts.read_chunk = 3;
  for (uint32_t t = 10; t > 0; --t) map.entries[t] = to_abi(val(t, 1));
  c2c_policy_value injected{};
  injected.start_ticks = 99;
  map.entries[11] = injected;  // abi_version 0: not written by the mirror
  auto read = make().read_actual();
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_TRUE(read->batched);
  ASSERT_EQ(read->entries.size(), 11u);
  EXPECT_GE(map.batch_calls, 4u) << "read in steps of 3";
  for (uint32_t i = 0; i < 11; ++i) EXPECT_EQ(read->entries[i].tid, i + 1);
  ASSERT_EQ(read->warnings.size(), 1u);
  EXPECT_NE(read->warnings[0].find("tid 11"), std::string::npos);
}

// A whole-map read holds one chunk in its buffers, whatever the map's size: a map of thousands
// of entries is read whole, and afterwards the buffers hold no more than a chunk (issue #13: the
// daemon held ~116 B per entry the map ever held). Reads after the map shrank or grew see it as
// it is.
TEST_F(MirrorApply, ReadBuffersHoldOneChunkWhateverTheMapsSize) {
  opts.read_chunk = 64;
  FakePolicyMap large(100'000);  // a map that could hold far more than it does
  for (uint32_t t = 1; t <= 3000; ++t) large.entries[t] = to_abi(val(t, 1));
  Applier a(large, opts, [](nanoseconds) {});
  auto read = a.read_actual();
  ASSERT_TRUE(read.ok()) << read.error();
  ASSERT_EQ(read->entries.size(), 3000u);
  EXPECT_EQ(read->entries.front().tid, 1u);
  EXPECT_EQ(read->entries.back().tid, 3000u);
  EXPECT_EQ(a.read_buffer_entries(), 64u);
  for (uint32_t t = 1; t <= 2990; ++t) large.entries.erase(t);
  read = a.read_actual();
  ASSERT_TRUE(read.ok()) << read.error();
  ASSERT_EQ(read->entries.size(), 10u);
  EXPECT_EQ(read->entries[0].tid, 2991u);
  for (uint32_t t = 5000; t < 5020; ++t) large.entries[t] = to_abi(val(t, 1));
  EXPECT_EQ(a.read_actual()->entries.size(), 30u);
  EXPECT_EQ(a.read_buffer_entries(), 64u);
}

// The walk the daemon's read-back spreads over turns: a chunk per call, every entry left alone
// read exactly once, changes between chunks seen where the walk has not been yet.
TEST_F(MirrorApply, WalkReadsTheMapAChunkPerCallAcrossChanges) {
  opts.read_chunk = 4;
  for (uint32_t t = 1; t <= 10; ++t) map.entries[t] = to_abi(val(t, 1));
  Applier a = make();
  MapWalk walk;
  std::map<uint32_t, int> seen;
  auto next = [&] {
    auto r = a.read_next(walk);
    EXPECT_TRUE(r.ok()) << r.error();
    EXPECT_LE(r->entries.size(), 4u);
    for (const auto& e : r->entries) ++seen[e.tid];
    return r->entries.size();
  };
  EXPECT_EQ(next(), 4u);
  EXPECT_FALSE(walk.done);
  map.entries.erase(2);                       // behind the walk: read before its change
  map.entries.erase(7);                       // ahead: never read
  map.entries[20] = to_abi(val(20, 1));       // ahead: read
  for (int calls = 0; !walk.done && calls < 10; ++calls) next();  // bounded: a walk that never ends fails
  ASSERT_TRUE(walk.done);
  EXPECT_EQ(seen, (std::map<uint32_t, int>{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {8, 1}, {9, 1}, {10, 1}, {20, 1}}));
  const size_t calls = map.batch_calls;
  EXPECT_EQ(a.read_next(walk)->entries.size(), 0u) << "a finished walk reads nothing";
  EXPECT_EQ(map.batch_calls, calls);
}

TEST_F(MirrorApply, WalkWithoutBatchCallsReadsTheWholeMapAtOnce) {
  map.batch_supported = false;
  for (uint32_t t = 1; t <= 10; ++t) map.entries[t] = to_abi(val(t, 1));
  Applier a = make();
  MapWalk walk;
  auto r = a.read_next(walk);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->entries.size(), 10u);
  EXPECT_TRUE(walk.done);
}

TEST_F(MirrorApply, ReadGrowsItsBufferOnEnospc) {
  opts.read_chunk = 1;
  map.min_read_chunk = 4;
  for (uint32_t t = 1; t <= 9; ++t) map.entries[t] = to_abi(val(t, 1));
  Applier a = make();
  auto read = a.read_actual();
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(read->entries.size(), 9u);
  EXPECT_EQ(a.read_buffer_entries(), 1u) << "back to one chunk once the large bucket was read";
}

}  // namespace
}  // namespace c2c::mirror

namespace c2c::mirror {
namespace {

// The same compare-before-delete through one batched snapshot read (many deletes).
TEST_F(MirrorApply, SnapshotCompareBeforeDeleteKeepsOtherTasksAndNewerWrites) {
  opts.snapshot_compare_min = 1;
  map.entries[5] = to_abi(val(500, 1));   // reused tid
  map.entries[6] = to_abi(val(600, 8));   // newer write
  map.entries[7] = to_abi(val(700, 3));   // ours to delete
  Plan plan{{del(5, val(499, 1)), del(6, val(600, 7)), del(7, val(700, 3)), del(8, val(800, 1))}, {}};
  const size_t single_before = map.single_calls;
  ApplyReport rep = make().apply(plan);
  EXPECT_EQ(rep.ops[0].state, OpState::Skipped);
  EXPECT_EQ(rep.ops[1].state, OpState::Skipped);
  EXPECT_EQ(rep.ops[2].state, OpState::Applied);
  EXPECT_EQ(rep.ops[3].state, OpState::Absent);
  EXPECT_EQ(map.single_calls, single_before) << "no per-key lookups";
  EXPECT_EQ(map.entries.count(5) + map.entries.count(6), 2u);
  EXPECT_EQ(map.entries.count(7), 0u);
}

}  // namespace
}  // namespace c2c::mirror

#include "mirror/report_json.hpp"

namespace c2c::mirror {
namespace {

// The map's own compare-and-delete (the kernel program, PolicyCompareDelete) decides with the
// same rule and the same report as the compare here, without reading the map.
TEST_F(MirrorApply, KernelCompareDeleteKeepsOtherTasksAndNewerWritesWithoutAReadOfTheMap) {
  map.compares_and_deletes = true;
  map.entries[1] = to_abi(val(10, 1));
  map.entries[2] = to_abi(val(20, 1));
  map.entries[3] = to_abi(val(30, 5));
  Plan plan{{del(1, val(10, 1)), del(2, val(21, 1)), del(3, val(30, 4)), del(4, val(40, 1))}, {}};
  ApplyReport rep = make().apply(plan);
  EXPECT_EQ(rep.compared_in_kernel, 4u);
  EXPECT_EQ(map.single_calls, 0u) << "no lookup per key";
  EXPECT_EQ(map.batch_calls, 0u) << "no read of the map, no delete batch";
  EXPECT_EQ(map.compare_delete_calls, 1u);
  ASSERT_EQ(rep.ops.size(), 4u);
  EXPECT_EQ(rep.ops[0].state, OpState::Applied);
  EXPECT_EQ(rep.ops[1].state, OpState::Skipped);
  EXPECT_NE(rep.ops[1].reason.find("start_ticks 20, expected 21"), std::string::npos) << rep.ops[1].reason;
  EXPECT_NE(rep.ops[1].reason.find("INV-2"), std::string::npos) << rep.ops[1].reason;
  EXPECT_EQ(rep.ops[2].state, OpState::Skipped);
  EXPECT_NE(rep.ops[2].reason.find("generation 5 > expected 4"), std::string::npos) << rep.ops[2].reason;
  EXPECT_EQ(rep.ops[3].state, OpState::Absent);
  EXPECT_EQ(map.entries.count(1), 0u);
  EXPECT_EQ(in_map(map, 2), val(20, 1));
  EXPECT_EQ(in_map(map, 3), val(30, 5));
}

// A run that fails leaves its keys and the later ones to the compare here: every op still ends
// in the state its entry calls for.
TEST_F(MirrorApply, KeysAfterAFailedCompareDeleteRunAreComparedHere) {
  map.compares_and_deletes = true;
  map.compare_delete_run = 2;
  for (uint32_t t = 1; t <= 5; ++t) map.entries[t] = to_abi(val(t * 10, 1));
  map.fault = [](char op, uint32_t tid) { return op == 'c' && tid == 3 ? EFAULT : 0; };
  Plan plan{{del(1, val(10, 1)), del(2, val(20, 1)), del(3, val(30, 1)), del(4, val(41, 1)), del(5, val(50, 1))}, {}};
  ApplyReport rep = make().apply(plan);
  EXPECT_EQ(rep.compared_in_kernel, 2u) << "the first run of two keys";
  for (size_t i : {0u, 1u, 2u, 4u}) EXPECT_EQ(rep.ops[i].state, OpState::Applied) << describe(rep.ops[i]);
  EXPECT_EQ(rep.ops[3].state, OpState::Skipped) << describe(rep.ops[3]);
  ASSERT_EQ(map.entries.size(), 1u);
  EXPECT_EQ(in_map(map, 4), val(40, 1));
}

// A delete the kernel refused (not "not found") is compared and deleted again on its own.
TEST_F(MirrorApply, ADeleteTheKernelRefusedIsTriedAgainHere) {
  map.compares_and_deletes = true;
  map.entries[1] = to_abi(val(10, 1));
  map.entries[2] = to_abi(val(20, 1));
  int refusals = 0;
  map.fault = [&](char op, uint32_t tid) { return op == 'd' && tid == 2 && refusals++ == 0 ? EBUSY : 0; };
  ApplyReport rep = make().apply(Plan{{del(1, val(10, 1)), del(2, val(20, 1))}, {}});
  EXPECT_TRUE(rep.ok()) << rep.error;
  EXPECT_EQ(rep.compared_in_kernel, 1u);
  EXPECT_EQ(rep.ops[0].state, OpState::Applied);
  EXPECT_EQ(rep.ops[1].state, OpState::Applied) << describe(rep.ops[1]);
  EXPECT_TRUE(map.entries.empty());
}

// A map that cannot (EOPNOTSUPP) is asked once; the compare then happens here every time.
TEST_F(MirrorApply, AMapWithoutCompareDeleteIsAskedOnce) {
  map.entries[1] = to_abi(val(10, 1));
  map.entries[2] = to_abi(val(20, 1));
  Applier a = make();
  ApplyReport first = a.apply(Plan{{del(1, val(10, 1))}, {}});
  ApplyReport second = a.apply(Plan{{del(2, val(21, 1))}, {}});
  EXPECT_EQ(map.compare_delete_calls, 1u);
  EXPECT_EQ(first.compared_in_kernel + second.compared_in_kernel, 0u);
  EXPECT_EQ(first.ops[0].state, OpState::Applied);
  EXPECT_EQ(second.ops[0].state, OpState::Skipped);
}

TEST_F(MirrorApply, ReportAsJsonListsProblemsForTheDaemon) {
  map.entries[5] = to_abi(val(500, 1));
  map.fault = [&](char op, uint32_t tid) { return (op == 'u' && tid == 4) ? EPERM : 0; };
  ApplyReport rep = make().apply(Plan{{add(3, val(30, 1)), add(4, val(40, 1)), del(5, val(499, 1))}, {9}});
  nlohmann::json j = to_json(rep);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["counts"]["applied"], 1);
  EXPECT_EQ(j["counts"]["failed"], 1);
  EXPECT_EQ(j["counts"]["skipped"], 1);
  EXPECT_EQ(j["deferredDeletes"], nlohmann::json::array({9}));
  ASSERT_EQ(j["entries"].size(), 2u) << j.dump();
  EXPECT_EQ(j["entries"][0]["tid"], 4);
  EXPECT_EQ(j["entries"][0]["state"], "failed");
  EXPECT_EQ(j["entries"][0]["errno"], EPERM);
  EXPECT_EQ(j["entries"][1]["state"], "skipped");
  EXPECT_EQ(to_json(rep, false)["entries"].size(), 3u);
}

// The short read-back's read (daemon/reconciler/confirm_pass.hpp): only the keys asked for, one lookup each,
// never a pass over the whole map; absent keys left out; a failed lookup fails the read.
TEST_F(MirrorApply, ReadKeysLooksUpOnlyTheGivenKeys) {
  for (uint32_t t = 1; t <= 1000; ++t) map.entries[t] = to_abi(val(t * 10, 1));
  Applier a = make();
  map.batch_calls = map.single_calls = 0;
  auto read = a.read_keys({700, 5, 5, 2000});
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(map.batch_calls, 0u);
  EXPECT_EQ(map.single_calls, 3u) << "one lookup per distinct key";
  ASSERT_EQ(read->entries.size(), 2u) << "2000 is not in the map";
  EXPECT_EQ(read->entries[0].tid, 5u);
  EXPECT_EQ(read->entries[0].value, val(50, 1));
  EXPECT_EQ(read->entries[1].tid, 700u);
  map.fault = [](char op, uint32_t tid) { return op == 'l' && tid == 700 ? EPERM : 0; };
  auto failed = a.read_keys({5, 700});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().find("tid 700"), std::string::npos) << failed.error();
}

}  // namespace
}  // namespace c2c::mirror
