// A fake /proc for the host tests: the stat line of one task, as the kernel writes it.
#pragma once

#include <cstdint>
#include <string>

namespace c2c::host::testing {

// /proc/<tgid>/task/<tid>/stat with the comm in parentheses and the start time in field 22.
inline std::string stat_line(uint32_t pid, const std::string& comm, uint64_t start) {
  return std::to_string(pid) + " (" + comm + ") S 1 1 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + std::to_string(start) +
         " 0 0\n";
}

}  // namespace c2c::host::testing
