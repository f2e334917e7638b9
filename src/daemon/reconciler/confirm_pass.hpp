// The short read-back after a write (spec/daemon.md, "Incremental reconcile"): a turn that writes
// leaves intents SENT and a read-back about 100 ms later confirms them (APPLIED). That pass reads
// back only the keys written since the last read-back, one lookup each: a batched read of the
// whole map costs O(map) (30-60 ms at 100k entries on this host), and under steady thread churn it
// ran every 100 ms, most of the daemon's CPU and the loop's longest stall. The full read-back
// (readback_interval) still reads everything, so drift on keys nobody wrote is found there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/core.hpp"

namespace c2c::daemon {

class WrittenKeys {
 public:
  // Beyond `limit` keys one batched read of the whole map is cheaper than a lookup per key.
  explicit WrittenKeys(size_t limit = 4096) : limit_(limit) {}
  void add(uint32_t tid) {
    if (keys_.size() <= limit_) keys_.push_back(tid);  // duplicates are cheap; read_keys folds them
  }
  void clear() {
    keys_.clear();
    unknown_ = false;
  }
  // Which keys were written is no longer known (a read-back in slices that failed after it began,
  // or one that found drift elsewhere): the next read-back reads the whole map.
  void forget() { unknown_ = true; }
  bool too_many() const { return unknown_ || keys_.size() > limit_; }
  bool empty() const { return keys_.empty() && !unknown_; }
  const std::vector<uint32_t>& tids() const { return keys_; }

 private:
  size_t limit_;
  std::vector<uint32_t> keys_;
  bool unknown_ = false;
};

// How many of `keys` differ between what the map holds (`read`: the entries among them; a key
// not in it is absent from the map) and `known` (what the core believes it holds): present on one
// side only, or with different values.
size_t drift_among(const std::vector<uint32_t>& keys, const std::vector<ActualEntry>& read,
                   const Core::ActualTable& known);

// The whole-map read-back's comparison: the map's entries (`read`: every key it holds) that the
// core does not believe it holds, or holds with another value (present is not equal), plus the
// keys missing from the map when it holds fewer than the core believes. Zero exactly when the
// map is the core's actual table.
size_t whole_map_drift(const std::vector<ActualEntry>& read, const Core::ActualTable& known);

}  // namespace c2c::daemon
