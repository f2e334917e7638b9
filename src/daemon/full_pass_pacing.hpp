// When the next periodic full pass may start (the full read-back: the whole map, the full plan and
// the full check, the oracle of the incremental path; the task rescan). Each costs O(tasks or
// entries) and holds the loop meanwhile: ~0.2 s at 100k entries (issue #13), against ~1 ms at
// 1k. At its configured interval such a pass would take 4 % of the loop at 100k and stall every
// event and RPC behind it every few seconds; paced, it takes at most 1 % (a pass of d starts no
// sooner than 99 d after the last one ended), and small tables keep the configured interval.
// What pacing costs: drift that only a full read-back sees (another writer of the map; the short
// read-back still confirms each write within 100 ms) is found within ~20 s at 100k, not 5 s.
// Pure: clocks are parameters.
#pragma once

#include <algorithm>
#include <cstdint>

namespace c2c::daemon {

inline constexpr uint64_t kFullPassIdleFactor = 99;  // at most 1 % of the loop's time

inline uint64_t next_full_pass_ns(uint64_t ended_ns, uint64_t took_ns, uint64_t interval_ns) {
  return ended_ns + std::max(interval_ns, took_ns * kFullPassIdleFactor);
}

}  // namespace c2c::daemon
