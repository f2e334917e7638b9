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
        q.insert(l);
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
  q.insert({1, 1});
  for (uint32_t round = 0; round < 10000; ++round) {
    q.insert({5, 2 + round % 7});
    q.erase({5, 2 + round % 7});
  }
  EXPECT_EQ(q.size(), 1u);
  EXPECT_LE(q.footprint(), 2 * q.size() + 2 * 65);
  EXPECT_EQ(q.earliest(), Nanos{1});
  q.erase({1, 1});
  EXPECT_FALSE(q.earliest());
  EXPECT_EQ(q.footprint(), 0u);
}

}  // namespace
}  // namespace c2c
