// FNV-1a, 64 bits: the one checksum of the project's text formats (the core's digest; the daemon's
// state file and the mirror's generation file use the same function).
#pragma once

#include <cstdint>
#include <string_view>

namespace c2c {

constexpr uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace c2c
