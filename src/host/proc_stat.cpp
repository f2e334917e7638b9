#include "host/proc_stat.hpp"

#include <charconv>
#include <limits>

namespace c2c::host {

std::optional<uint64_t> parse_u64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

namespace {

// Returns the n-th (0-based) space-separated token of `rest`.
std::string_view token(std::string_view rest, size_t n) {
  size_t i = 0;
  size_t idx = 0;
  while (i < rest.size()) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    size_t j = i;
    while (j < rest.size() && rest[j] != ' ' && rest[j] != '\n') ++j;
    if (j == i) break;
    if (idx == n) return rest.substr(i, j - i);
    ++idx;
    i = j;
  }
  return {};
}

}  // namespace

std::optional<StatFields> parse_stat(std::string_view line, ParseError* err) {
  StatFields f;
  const size_t open = line.find(" (");
  if (open == std::string_view::npos) {
    set_error(err, "stat.comm", "no ' (' after the pid");
    return std::nullopt;
  }
  const auto pid = parse_u64(line.substr(0, open));
  if (!pid || *pid == 0 || *pid > std::numeric_limits<uint32_t>::max()) {
    set_error(err, "stat.pid", "not a positive 32-bit integer: '" + std::string(line.substr(0, open)) + "'");
    return std::nullopt;
  }
  const size_t close = line.rfind(')');
  if (close == std::string_view::npos || close < open + 2) {
    set_error(err, "stat.comm", "no closing ')'");
    return std::nullopt;
  }
  f.pid = static_cast<uint32_t>(*pid);
  f.comm = std::string(line.substr(open + 2, close - open - 2));
  // No length check: for workqueue workers /proc shows "kworker/0:1-events", longer than
  // TASK_COMM_LEN - 1.
  const std::string_view rest = line.substr(close + 1);
  // Field k (1-based, k >= 3) is token k-3 of what follows the last ')'.
  const std::string_view state = token(rest, 0);
  if (state.size() != 1) {
    set_error(err, "stat.state", "expected one character, got '" + std::string(state) + "'");
    return std::nullopt;
  }
  f.state = state[0];
  const auto ppid = parse_u64(token(rest, 1));
  if (!ppid || *ppid > std::numeric_limits<uint32_t>::max()) {
    set_error(err, "stat.ppid", "not a 32-bit integer: '" + std::string(token(rest, 1)) + "'");
    return std::nullopt;
  }
  f.ppid = static_cast<uint32_t>(*ppid);
  const std::string_view start = token(rest, 22 - 3);
  const auto start_ticks = parse_u64(start);
  if (!start_ticks) {
    set_error(err, "stat.starttime",
              start.empty() ? "missing (fewer than 22 fields)" : "not an integer: '" + std::string(start) + "'");
    return std::nullopt;
  }
  f.start_ticks = *start_ticks;
  return f;
}

}  // namespace c2c::host
