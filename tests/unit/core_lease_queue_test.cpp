// LeaseQueue, the core's lease index (lazy removal over two heaps): random grants and drops
// against the std::set the B-tree it replaced behaved as, including leases dropped and granted
// again at the same renewal time, the compactions, and the memory given back when all are gone.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/lease_queue.hpp"

namespace c2c {
namespace {

using Lease = LeaseQueue::Lease;

void expect_same(const LeaseQueue& q, const std::set<Lease>& want, Nanos now) {
  ASSERT_EQ(q.size(), want.size());
  EXPECT_EQ(q.empty(), want.empty());
  if (want.empty()) EXPECT_FALSE(q.earliest());
  else EXPECT_EQ(q.earliest(), want.begin()->first);
  std::vector<Lease> due(want.begin(), want.upper_bound({now, UINT32_MAX}));
  EXPECT_EQ(q.due(now), due);
  // A bounded walk gives the same leases' prefix, whatever the bound.
  for (size_t limit : {size_t{0}, size_t{1}, size_t{3}, due.size(), due.size() + 1}) {
    std::vector<Lease> first(due.begin(), due.begin() + static_cast<ptrdiff_t>(std::min(limit, due.size())));
    EXPECT_EQ(q.first_due(now, limit), first) << "limit " << limit;
  }
}

TEST(LeaseQueue, RandomGrantsAndDropsAgreeWithStdSet) {
  std::mt19937 rng(11);
  for (Nanos times : {1u, 4u, 1000u}) {  // few renewal times: the same lease dropped and granted again
    LeaseQueue q;
    std::set<Lease> want;
    for (int i = 0; i < 30000; ++i) {
      const Lease l{1 + rng() % times, 1 + static_cast<uint32_t>(rng() % 500)};
      if (want.count(l)) {
        q.erase(l);
        want.erase(l);
      } else if (rng() % 4 != 0) {
        q.insert(l, 1);
        want.insert(l);
      }
      if (i % 499 == 0) expect_same(q, want, 1 + rng() % times);
    }
    expect_same(q, want, times / 2);
    for (const Lease& l : std::set<Lease>(want)) q.erase(l);
    EXPECT_TRUE(q.empty());
    EXPECT_FALSE(q.earliest());
    EXPECT_TRUE(q.due(times).empty());
  }
}

TEST(LeaseQueue, StaysWithinTwiceTheLiveLeases) {
  LeaseQueue q;
  // Drops that never reach the front (all in the middle of the order) are compacted away.
  q.insert({1, 1}, 1);
  for (uint32_t round = 0; round < 10000; ++round) {
    q.insert({5, 2 + round % 7}, 1);
    q.erase({5, 2 + round % 7});
  }
  EXPECT_EQ(q.size(), 1u);
  EXPECT_LE(q.footprint(), 2 * q.size() + 2 * 65);
  EXPECT_EQ(q.earliest(), Nanos{1});
  q.erase({1, 1});
  EXPECT_FALSE(q.earliest());
  EXPECT_EQ(q.footprint(), 0u);
}

// run_out_candidates(now) holds every lease with renew_at + half-life <= now (its boost has run
// out), for the shortest half-life granted since the last clear, and nothing past now.
TEST(LeaseQueue, RunOutCandidatesCoverEveryRunOutLease) {
  LeaseQueue q;
  EXPECT_TRUE(q.run_out_candidates(1'000).empty());
  q.insert({100, 1}, 50);   // runs out at 150
  q.insert({120, 2}, 500);  // runs out at 620
  q.insert({400, 3}, 50);   // runs out at 450
  EXPECT_TRUE(q.run_out_candidates(149).empty());
  EXPECT_EQ(q.run_out_candidates(150), (std::vector<Lease>{{100, 1}}));
  // 2 has not run out at 450, but a candidate may be more than run out: the caller reads boost_until.
  EXPECT_EQ(q.run_out_candidates(450), (std::vector<Lease>{{100, 1}, {120, 2}, {400, 3}}));
  q.erase({100, 1});
  EXPECT_EQ(q.run_out_candidates(450), (std::vector<Lease>{{120, 2}, {400, 3}}));
  q.erase({120, 2});
  q.erase({400, 3});
  q.insert({100, 4}, 500);  // the queue emptied: the old shortest half-life is forgotten
  EXPECT_TRUE(q.run_out_candidates(599).empty());
  EXPECT_EQ(q.run_out_candidates(600), (std::vector<Lease>{{100, 4}}));
}

}  // namespace
}  // namespace c2c
