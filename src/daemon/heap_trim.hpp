// When the daemon hands freed heap back to the kernel (malloc_trim). glibc keeps what a mass exit
// freed (100k tasks: tens of MB) as free heap for later use, so the RSS stays at its peak although
// the core has released the memory. Once at least `min_exits` tasks left and no task has left for
// `quiet_ns` (the burst is over), the engine trims once: a trim walks the heap, so not per exit,
// and not during a burst. The engine arms its timer for deadline(). Pure: the clock is a parameter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace c2c::daemon {

class HeapTrim {
 public:
  explicit HeapTrim(size_t min_exits = 1024, uint64_t quiet_ns = 200'000'000ull)
      : min_exits_(min_exits), quiet_ns_(quiet_ns) {}
  void exited(uint64_t now_ns) {
    ++exits_;
    last_exit_ns_ = now_ns;
  }
  // When a trim becomes due if no further task leaves; nullopt while too few have left.
  std::optional<uint64_t> deadline() const {
    if (exits_ < min_exits_) return std::nullopt;
    return last_exit_ns_ + quiet_ns_;
  }
  // Whether to trim now; a true answer counts as the trim (the caller trims).
  bool due(uint64_t now_ns) {
    auto d = deadline();
    if (!d || now_ns < *d) return false;
    exits_ = 0;
    return true;
  }

 private:
  size_t min_exits_;
  uint64_t quiet_ns_;
  size_t exits_ = 0;
  uint64_t last_exit_ns_ = 0;
};

}  // namespace c2c::daemon
