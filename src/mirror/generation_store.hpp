// Durable node policy generation (INV-4: strictly monotonic, across restarts too).
//
// File format, one line: "c2c-generation v1 <decimal> <fnv1a64 hex of the text before it>\n".
// Written as temp file + fsync + rename + fsync of the directory, so a crash leaves either the
// old or the new file, never a torn one. A missing file is generation 0 (first start on this
// node); anything else that does not parse, or whose checksum is wrong, is an error, never a
// silent 0 (which would let generations go back).
//
// Write-ahead lease: fsync on every generation would cost a disk flush per event. Instead the
// store persists a ceiling C ahead of use ("generations up to C may be in use") and hands out
// generations up to C without touching the disk; only the first generation above C persists a
// new ceiling (g + lease - 1). After a crash, a new process starts strictly above the persisted
// ceiling, so it can never reuse or undercut a generation an earlier process wrote to the map.
// Price: one fsync per `lease` generations, and a gap of up to `lease` in the sequence after a
// restart (generations only need to grow, not to be dense).
//
// Bound (INV-4, spec/state-machine.md "Bounds"): no generation beyond 2^53 is loaded (refused,
// naming the file), stored, covered or handed out, and a ceiling stops at 2^53: a restart ignores
// entries beyond the bound, so a generation past it would later step back.
#pragma once

#include <cstdint>
#include <string>

#include "mirror/result.hpp"

namespace c2c::mirror {

// The stored value; 0 if the file does not exist; an error if it is unreadable or corrupt.
Result<uint64_t> load_generation(const std::string& path);

// Persists `value` durably. Refuses a value below the stored one (INV-4) and refuses to
// overwrite a corrupt file. Storing the same value again succeeds. Returns "" or the error.
std::string store_generation(const std::string& path, uint64_t value);

class GenerationLease {
 public:
  static Result<GenerationLease> open(const std::string& path, uint64_t lease = 1024);

  // Everything <= floor() may have been used by an earlier process: this one uses only more.
  uint64_t floor() const { return floor_; }
  // The largest generation handed out or covered by this process (floor() before any).
  uint64_t current() const { return high_; }
  // The ceiling on disk.
  uint64_t durable() const { return durable_; }
  uint64_t syncs() const { return syncs_; }

  // A fresh generation, greater than every earlier one of this or any earlier process.
  Result<uint64_t> next();
  // Makes a generation chosen elsewhere (the core's) safe to write: refuses g <= floor(),
  // persists a new ceiling first if g is above the durable one. Returns "" or the error.
  std::string cover(uint64_t g);
  // Keeps the durable ceiling at least `margin` above g (the generation in use): when it is not,
  // persists a new one, g + max(margin, lease - 1), without handing anything out. For a caller
  // that must not meet the disk write inside a request (the daemon extends the lease at the end
  // of a turn, so a command batch finds the headroom that spares it the undo copy). "" or the
  // error (the ceiling then stays as it was).
  std::string keep_ahead(uint64_t g, uint64_t margin);

 private:
  // "" when g is above the floor; else why it may not be used (INV-4).
  std::string refuse_at_floor(uint64_t g) const;
  // Persists the ceiling g + step (saturated) and takes it as the durable one; "" or the error.
  std::string store_ceiling(uint64_t g, uint64_t step);

  std::string path_;
  uint64_t lease_ = 1;
  uint64_t floor_ = 0, high_ = 0, durable_ = 0, syncs_ = 0;
};

}  // namespace c2c::mirror
