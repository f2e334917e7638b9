// When the daemon hands freed heap back to the kernel (malloc_trim). glibc keeps what a mass exit
// freed (100k tasks: tens of MB) as free heap for later use, and so it does with the transient
// arrays of a large reconcile (a policy matching 100k threads: its ops, the batch buffers, the
// rederived candidates; ~46 MB, 465 B per entry measured with malloc_trim from gdb), so the RSS
// stays at its peak although the memory is free (a whole-map read of 100k entries, likewise:
// ~10 MB of copies). Once at least `min_changes` tasks left or map entries were written or read
// whole, and nothing changed for `quiet_ns` (the burst is over), the engine trims
// once: a trim walks the heap, so not per change, and not during a burst. The engine arms its
// timer for deadline(). Pure: the clock is a parameter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace c2c::daemon {

class HeapTrim {
 public:
  explicit HeapTrim(size_t min_changes = 1024, uint64_t quiet_ns = 200'000'000ull)
      : min_changes_(min_changes), quiet_ns_(quiet_ns) {}
  // n tasks left, or n map entries were written.
  void changed(uint64_t now_ns, size_t n = 1) {
    if (n == 0) return;
    changes_ += n;
    last_change_ns_ = now_ns;
  }
  // When a trim becomes due if nothing else changes; nullopt while too little has.
  std::optional<uint64_t> deadline() const {
    if (changes_ < min_changes_) return std::nullopt;
    return last_change_ns_ + quiet_ns_;
  }
  // Whether to trim now; a true answer counts as the trim (the caller trims).
  bool due(uint64_t now_ns) {
    auto d = deadline();
    if (!d || now_ns < *d) return false;
    changes_ = 0;
    return true;
  }

 private:
  size_t min_changes_;
  uint64_t quiet_ns_;
  size_t changes_ = 0;
  uint64_t last_change_ns_ = 0;
};

}  // namespace c2c::daemon
