// The trace format (spec/trace-format.md): JSON Lines, one versioned event per line.
#pragma once

#include <nlohmann/json.hpp>

#include <istream>
#include <string>
#include <variant>
#include <vector>

#include "core/events.hpp"

namespace c2c::codec {

inline constexpr int kTraceVersion = 1;

struct ParseError {
  size_t line = 0;     // 1-based
  std::string field;   // e.g. "claim.devices[0].cpus"
  std::string message;
  std::string to_string() const;
};

struct TraceEvent {
  size_t line = 0;
  Event event;
};

// Decodes one event object (already parsed JSON). Throws DecodeError naming the field.
Event decode_event(const nlohmann::json& j);
nlohmann::json encode_event(const Event& e);

// Decodes one line; returns the event or the error (with `line` set).
std::variant<Event, ParseError> parse_line(const std::string& text, size_t line);
// Decodes a whole trace; stops at the first error, so nothing is applied half-way.
std::variant<std::vector<TraceEvent>, ParseError> parse_trace(std::istream& in);

nlohmann::json encode_value(const RuntimeValue& v);
RuntimeValue decode_value(const class Reader& r);
std::vector<std::string> flag_names(uint8_t flags);

}  // namespace c2c::codec
