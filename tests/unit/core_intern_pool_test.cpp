// The intern pool behind the compact task record (src/core/intern_pool.hpp, issue #13 item 2):
// equal values share one id, a value lives while some task holds it, and once nothing holds any
// value the pool's arrays are given back (memory is returned when tasks leave).
#include <gtest/gtest.h>

#include <string>

#include "core/intern_pool.hpp"

namespace c2c::testing {
namespace {

TEST(CoreInternPool, EqualValuesShareOneIdWhileHeld) {
  InternPool<std::string> pool;
  const uint32_t a = pool.acquire("/kubepods/pod-a/cri-containerd-1.scope");
  const uint32_t b = pool.acquire("/kubepods/pod-a/cri-containerd-1.scope");
  const uint32_t c = pool.acquire("worker");
  EXPECT_NE(a, 0u);  // 0 is "none"
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(pool[a], "/kubepods/pod-a/cri-containerd-1.scope");
  EXPECT_EQ(pool[c], "worker");
  EXPECT_EQ(pool.size(), 2u);
  pool.release(a);  // one holder left
  EXPECT_EQ(pool[b], "/kubepods/pod-a/cri-containerd-1.scope");
  EXPECT_EQ(pool.size(), 2u);
  pool.release(b);  // none: the value goes, its id is free for the next one
  EXPECT_EQ(pool.size(), 1u);
  const uint32_t d = pool.acquire("decode");
  EXPECT_EQ(d, a);
  EXPECT_EQ(pool[d], "decode");
  EXPECT_EQ(pool[c], "worker");
}

TEST(CoreInternPool, RetainAddsAHolderAndNoneIsNeverCounted) {
  InternPool<std::string> pool;
  const uint32_t a = pool.acquire("python3");
  pool.retain(a);
  pool.release(a);
  EXPECT_EQ(pool[a], "python3");  // still held by the retain
  pool.retain(0);
  pool.release(0);  // "none" is neither counted nor released
  EXPECT_EQ(pool[0], "");
  pool.release(a);
  EXPECT_EQ(pool.size(), 0u);
}

TEST(CoreInternPool, ReleasingTheLastValueStartsAfresh) {
  InternPool<std::string> pool;
  for (int i = 0; i < 1000; ++i) pool.acquire("cgroup-" + std::to_string(i));
  EXPECT_EQ(pool.size(), 1000u);
  for (uint32_t id = 1; id <= 1000; ++id) pool.release(id);
  EXPECT_EQ(pool.size(), 0u);
  // The arrays were given back: ids start again at 1, not after the 1,000 freed ones.
  EXPECT_EQ(pool.acquire("again"), 1u);
}

}  // namespace
}  // namespace c2c::testing
