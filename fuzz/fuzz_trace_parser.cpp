// fuzz_trace_parser: bytes -> c2c::codec::parse_trace (+ replay when it parses). Malformed input
// must give a ParseError naming a line inside the input, never a crash or a stray exception; a
// trace that parses must replay without crashing, and each of its events must read back the
// same after encoding (the codec is what `claim2core report` writes regressions with).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>

#include "fuzz/harness_support.hpp"
#include "codec/trace_codec.hpp"
#include "trace/replay.hpp"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_trace_parser: %s\n", what.c_str());
  c2c::fuzz::die();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;  // replay cost grows with the trace; small traces find the same bugs
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  std::istringstream in(text);
  std::variant<std::vector<c2c::codec::TraceEvent>, c2c::codec::ParseError> parsed;
  try {
    parsed = c2c::codec::parse_trace(in);
  } catch (const std::exception& e) {
    fail(std::string("parse_trace threw instead of returning a ParseError: ") + e.what());
  }
  if (const auto* err = std::get_if<c2c::codec::ParseError>(&parsed)) {
    if (err->line == 0 || err->line > lines)
      fail("ParseError names line " + std::to_string(err->line) + " of a " + std::to_string(lines) + "-line input");
    if (err->message.empty()) fail("ParseError without a message at line " + std::to_string(err->line));
    return 0;
  }
  const auto& events = std::get<std::vector<c2c::codec::TraceEvent>>(parsed);
  for (const auto& te : events) {
    try {
      const nlohmann::json once = c2c::codec::encode_event(te.event);
      const nlohmann::json twice = c2c::codec::encode_event(c2c::codec::decode_event(once));
      if (once != twice)
        fail("line " + std::to_string(te.line) + ": encode/decode round trip differs: " + once.dump() + " vs " +
             twice.dump());
    } catch (const std::exception& e) {
      fail("line " + std::to_string(te.line) + ": a parsed event does not decode after encoding: " + e.what());
    }
  }
  try {
    const auto outcome = c2c::trace::replay(events);
    // The renderers run on whatever state the trace produced (the CLI prints both).
    (void)c2c::trace::to_json(outcome).dump();
    (void)c2c::trace::to_table(outcome);
  } catch (const std::exception& e) {
    fail(std::string("replay of a parsed trace threw: ") + e.what());
  }
  return 0;
}
