// Parsing of /proc/<tgid>/task/<tid>/stat: the fields task identity needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "host/parse_error.hpp"

namespace c2c::host {

struct StatFields {
  uint32_t pid = 0;          // field 1 (the tid for /proc/<tgid>/task/<tid>/stat)
  std::string comm;          // field 2, between the first '(' and the LAST ')'
  char state = '?';          // field 3
  uint32_t ppid = 0;         // field 4
  uint64_t start_ticks = 0;  // field 22: start_boottime in USER_HZ clock ticks
};

// comm may itself contain spaces, '(' and ')' (any byte but NUL), so the fixed fields are taken
// from after the LAST ')'. Errors name the field ("stat.pid", "stat.comm", "stat.starttime"...).
std::optional<StatFields> parse_stat(std::string_view line, ParseError* err = nullptr);

// Parses a decimal unsigned integer that must fill `text` entirely.
std::optional<uint64_t> parse_u64(std::string_view text);

}  // namespace c2c::host
