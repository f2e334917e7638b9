// c2c-property-replay FILE: runs a trace (spec/trace-format.md) through the core and the naive
// reference model side by side and prints the first step where they disagree (exit 1), or
// "agree" (exit 0). Used to investigate findings/ and shrunk RapidCheck failures.
#include <cstdlib>
#include <fstream>
#include <string>
#include <iostream>
#include <variant>

#include "differential.hpp"
#include "codec/trace_codec.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: c2c-property-replay TRACE.jsonl\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "cannot open " << argv[1] << "\n";
    return 2;
  }
  auto parsed = c2c::codec::parse_trace(in);
  if (auto* err = std::get_if<c2c::codec::ParseError>(&parsed)) {
    std::cerr << err->to_string() << "\n";
    return 2;
  }
  const char* strict = std::getenv("C2C_PROPERTY_OPEN_FINDINGS");
  c2c::property::Differential run(c2c::naive::Options{strict != nullptr && std::string(strict) == "1"});
  for (const auto& te : std::get<std::vector<c2c::codec::TraceEvent>>(parsed)) {
    if (auto failure = run.step(te.event)) {
      std::cout << "line " << te.line << ": " << *failure;
      return 1;
    }
  }
  std::cout << "agree (" << run.steps() << " steps)\n";
  return 0;
}
