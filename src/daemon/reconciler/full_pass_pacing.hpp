// When the next periodic full pass may start (the full read-back: the whole map, the full plan and
// the full check, the oracle of the incremental path; the task rescan). Each costs O(entries or
// tasks) and holds the loop meanwhile: ~0.2 s at 100k entries (issue #13), against ~1 ms at 1k.
// At its configured interval such a pass would take 4 % of the loop at 100k and stall every event
// and RPC behind it every few seconds; paced, it takes at most 1 %: the next pass starts no sooner
// than 99 times its expected duration after the last one ended, and small tables keep the
// configured interval. The expected duration is the last pass's, scaled to the table's size now
// (a pass due at 100k entries after one that ran over 1k is expected to take ~100 times as
// long; either size counts as at least 1024, so a near-empty pass does not predict a huge cost).
// What pacing costs: drift that only a full read-back sees (another writer of the map; the short
// read-back still confirms each write within 100 ms) is found within ~20 s at 100k, not 5 s.
// Pure: clocks are parameters.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace c2c::daemon {

inline constexpr uint64_t kFullPassIdleFactor = 99;  // at most 1 % of the loop's time
inline constexpr size_t kFullPassMinUnits = 1024;

// The last full pass: when it ended, how long it took, over how many entries (or tasks).
struct FullPassCost {
  uint64_t ended_ns = 0, took_ns = 0;
  size_t units = 0;
};

inline uint64_t expected_pass_ns(const FullPassCost& last, size_t units_now) {
  const double scale = static_cast<double>(std::max(units_now, kFullPassMinUnits)) /
                       static_cast<double>(std::max(last.units, kFullPassMinUnits));
  return static_cast<uint64_t>(static_cast<double>(last.took_ns) * scale);
}

inline uint64_t next_full_pass_ns(const FullPassCost& last, size_t units_now, uint64_t interval_ns) {
  return last.ended_ns + std::max(interval_ns, expected_pass_ns(last, units_now) * kFullPassIdleFactor);
}

// One periodic full pass's timing: when it is next due, and what the last one cost.
struct FullPassSchedule {
  uint64_t next_ns = 0;
  FullPassCost last;
  // Whether the pass runs now: due, and still due once paced for the table's size now (a pass
  // that ran over 1k entries says nothing about one over 100k); else its due time moves on.
  bool due(uint64_t now_ns, size_t units_now, uint64_t interval_ns) {
    if (now_ns < next_ns) return false;
    const uint64_t paced = next_full_pass_ns(last, units_now, interval_ns);
    if (paced <= now_ns) return true;
    next_ns = paced;
    return false;
  }
  // The pass ran from started_ns to ended_ns over `units`: the next one is paced by it.
  void ran(uint64_t started_ns, uint64_t ended_ns, size_t units, uint64_t interval_ns) {
    ran_for(ended_ns, ended_ns - started_ns, units, interval_ns);
  }
  // A pass in slices: `took_ns` is the time its slices held the loop, not the turns between them.
  void ran_for(uint64_t ended_ns, uint64_t took_ns, size_t units, uint64_t interval_ns) {
    last = {ended_ns, took_ns, units};
    next_ns = next_full_pass_ns(last, units, interval_ns);
  }
};

}  // namespace c2c::daemon
