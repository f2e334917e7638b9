// FNV-1a, 64 bits: the one checksum of the project's text formats (the core's digest; the daemon's
// state file and the mirror's generation file use the same function; `claim2core report` names
// its reports with it). The offset basis is 1469598103934665603, one digit short of FNV's
// 14695981039346656037: a slip of the first version that every state and generation file written
// since carries, so it stays (a checksum needs a well-mixed hash, not FNV's exact constants, and
// changing it would make every existing file fail its check).
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
