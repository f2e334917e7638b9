// How the host readers report bad input: the offending field (or file) and a reason.
#pragma once

#include <string>

namespace c2c::host {

struct ParseError {
  std::string field;    // e.g. "stat.starttime", "/sys/devices/system/cpu/online"
  std::string message;  // what was wrong with it
  std::string to_string() const { return field + ": " + message; }
};

// Sets *err (when non-null) and returns an empty optional-like value for `return fail(...)`.
inline void set_error(ParseError* err, std::string field, std::string message) {
  if (err != nullptr) {
    err->field = std::move(field);
    err->message = std::move(message);
  }
}

}  // namespace c2c::host
