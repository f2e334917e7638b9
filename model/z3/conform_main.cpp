// c2c-z3-conform: replays traces (spec/trace-format.md) through the real core and checks every
// step against the Z3 model's transition relation (conformance.hpp).
//
//   c2c-z3-conform TRACE.jsonl...
//
// Exit status 0 when every checked step conforms; 1 on a non-conforming step; 2 on bad input.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "conformance.hpp"
#include "codec/trace_codec.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: c2c-z3-conform TRACE.jsonl...\n";
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    if (!in) {
      std::cerr << "c2c-z3-conform: " << argv[i] << ": cannot open\n";
      return 2;
    }
    auto parsed = c2c::codec::parse_trace(in);
    if (auto* err = std::get_if<c2c::codec::ParseError>(&parsed)) {
      std::cerr << "c2c-z3-conform: " << argv[i] << ": " << err->to_string() << "\n";
      return 2;
    }
    const auto& events = std::get<std::vector<c2c::codec::TraceEvent>>(parsed);
    c2c::Core core;
    size_t checked = 0, skipped = 0, failures = 0, refused = 0;
    for (const auto& te : events) {
      c2c::Core pre = core;
      const auto applied = core.apply(te.event);
      // An event the core refuses (e.g. a restart that would pass the generation bound 2^53,
      // INV-4, which the model does not bound) is a step of its own: it must change nothing.
      if (!applied.ok()) {
        ++refused;
        if (core.digest() != pre.digest()) {
          ++failures;
          std::printf("%s:%zu: refused (%s: %s) but the state changed\n", argv[i], te.line, applied.field.c_str(),
                      applied.message.c_str());
        }
        continue;
      }
      auto r = c2c::z3m::check_conformance(pre, te.event, core);
      checked += r.keys_checked;
      skipped += r.keys_skipped;
      for (const auto& f : r.failures) {
        ++failures;
        std::printf("%s:%zu: %s\n", argv[i], te.line, f.c_str());
      }
    }
    std::printf("c2c-z3-conform: %s: %zu events (%zu refused by the core, state unchanged), %zu key-steps conform, "
                "%zu skipped (outside the model), %zu fail\n",
                argv[i], events.size(), refused, checked - failures, skipped, failures);
    if (failures) status = 1;
  }
  return status;
}
