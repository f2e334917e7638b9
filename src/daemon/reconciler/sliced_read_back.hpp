// A read-back of the whole map spread over many loop turns (spec/daemon.md, "A full pass in
// slices"; issue #13). At 100k entries the full read-back (the map, the full plan, check()) was
// one loop turn of ~150 ms of CPU, and the read-back that confirms a policy's 100k writes one of
// ~80 ms: past its SCHED_FIFO budget the loop finished them time-shared, and on a busy node a new
// thread's record waited behind them for up to seconds. Here the pass is cut into slices of at
// most ~0.5 ms, and the loop serves task events and commands between them.
//
// Two stages. The walk reads the map a chunk at a time (Applier::read_next) and compares each
// entry read with what the core believes the map holds at that moment: the daemon is the map's
// only writer and writes on the loop, so between slices the core's actual table moves with the
// map, and a difference is drift (a value changed under us, an entry the core does not know).
// Then the keys (the desired and actual tables' tids, taken once when the walk ends) are gone
// through a slice at a time: a key the core has in the map that the walk did not read, and that
// the daemon did not write since the pass began (an entry written into a part of the map the walk
// had passed), is missing: drift too. A full pass also runs plan_of() and check_keys() on each
// slice (the oracle of the incremental path, as the whole plan() and check() were).
//
// Drift ends the pass: the engine reads the whole map at once and re-observes it (BpfObserved), as
// before; that is rare (another writer, a map reloaded by hand). Pure: the engine does the I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/core.hpp"

namespace c2c::daemon {

// A set of tids as bits (tids are below pid_max, at most 2^22): set and test in O(1) with
// 512 KB at worst, freed with the pass.
class TidBits {
 public:
  void set(uint32_t tid);
  bool test(uint32_t tid) const;

 private:
  std::vector<uint64_t> words_;
};

class SlicedReadBack {
 public:
  // `full`: the periodic full read-back (with the plan and check slices); else the read-back
  // that confirms more written keys than one lookup each is worth (WrittenKeys::too_many).
  SlicedReadBack(bool full, uint64_t started_ns) : full_(full), started_ns_(started_ns) {}

  bool full() const { return full_; }
  uint64_t started_ns() const { return started_ns_; }
  bool walking() const { return walking_; }
  bool has_keys() const { return keys_taken_; }
  bool done() const { return !walking_ && keys_taken_ && next_key_ >= keys_.size(); }
  size_t drift() const { return drift_; }

  // The walk's chunk, compared with the core's actual table now; `last`: the walk has ended.
  void walked(const std::vector<ActualEntry>& chunk, const Core::ActualTable& known, bool last);
  // The daemon wrote (or deleted) this key while the pass ran.
  void wrote(uint32_t tid) { written_.set(tid); }
  // The actual table was re-observed from the map meanwhile (BpfObserved): every key it holds
  // was in the map then, so the missing-key test would only find the daemon's own later writes.
  void observed() { observed_ = true; }
  // The keys to go through (Core::entry_keys), once, after the walk.
  void take_keys(std::vector<uint32_t> keys);
  // The next slice of at most `n` keys, each counted as drift when missing from the map.
  std::vector<uint32_t> next_slice(size_t n, const Core::ActualTable& known);

  // Time spent on the pass's slices (not the turns between them): what pacing counts.
  uint64_t work_ns = 0, cpu_ns = 0;
  uint64_t longest_ns = 0;  // the longest turn the pass held the loop (the key snapshot's, at 100k)
  size_t units = 0;  // entries read plus keys gone through
  size_t slices = 0;  // loop turns the pass took
  // A full pass's verdicts so far: the plan's ops the incremental path left out, the violations.
  size_t plan_missed = 0;
  std::vector<Violation> violations;

 private:
  bool full_;
  uint64_t started_ns_;
  bool walking_ = true;
  bool keys_taken_ = false;
  bool observed_ = false;
  size_t drift_ = 0;
  TidBits read_, written_;
  std::vector<uint32_t> keys_;
  size_t next_key_ = 0;
};

}  // namespace c2c::daemon
