#include "mirror/synthetic.hpp"

namespace c2c::mirror {

namespace {
uint64_t mix(uint64_t x) {  // splitmix64 finaliser: cheap, well spread, deterministic
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

DesiredTable synthetic_table(uint64_t seed, uint32_t n, uint64_t generation) {
  DesiredTable t;
  t.reserve(n);
  const uint32_t base = 1000 + static_cast<uint32_t>(seed % 4) * (n / 2);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t tid = base + i;
    // Even tids keep their task across seeds; odd ones get a new task (TID reuse, INV-2).
    const uint64_t h = mix((tid % 2 == 0 ? 0 : seed) * 0x100000001ull + tid);
    RuntimeValue v;
    v.start = 1 + h % 1'000'000'000ull;
    v.generation = generation;
    v.tgid = tid - (tid % 8);
    v.exec_class = static_cast<ExecClass>(1 + (h >> 32) % 5);
    v.flags = kFlagAllowedCpus;
    const unsigned first = static_cast<unsigned>((h >> 40) % 8) * 4;
    v.allowed = CpuSet::range(first, first + 3);
    if (class_boosts(v.exec_class)) {
      v.flags = static_cast<uint8_t>(v.flags | kFlagBoost);
      v.max_boost = 5'000'000'000ull;
      v.boost_until = 1'000'000'000ull + (h >> 20) % 1'000'000'000ull;
    }
    if ((h >> 48) % 3 == 0) {
      v.flags = static_cast<uint8_t>(v.flags | kFlagCustomSlice);
      v.slice_ns = 100'000 + (h >> 50) % 1'000'000;
    }
    t.emplace(tid, v);
  }
  return t;
}

}  // namespace c2c::mirror
