// `claim2core report INPUT`: turns a fuzz_core_events input or a failing trace (JSON Lines) into
// what a maintainer needs: the failing step and invariant, the lineage involved, the trace
// minimized by delta debugging, and a ready-to-commit regression file for tests/regressions/.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/events.hpp"
#include "fuzz/checked_run.hpp"

namespace c2c::report {

struct Input {
  std::string kind;  // "trace" or "fuzz_core_events input"
  std::vector<Event> events;
};

// A JSON Lines trace when the first non-blank byte is '{', else fuzzer bytes decoded like
// fuzz_core_events does. A malformed trace gives the parse error (line and field).
std::variant<Input, std::string> load_input(const std::string& bytes);

// Classic ddmin (Zeller): the smallest subsequence, 1-minimal w.r.t. removing any single event,
// that `still_fails` accepts. `runs` counts predicate evaluations.
template <typename Pred>
std::vector<Event> ddmin(std::vector<Event> events, Pred still_fails, size_t& runs);

struct Report {
  std::string input_kind;
  size_t original_events = 0;
  fuzz::Failure original;             // the failure as first reproduced
  fuzz::Failure failure;              // the failure on the minimized trace
  std::vector<Event> minimized;
  size_t runs = 0;                    // predicate evaluations of the minimization
  bool replayable = true;             // false: the trace holds an event the core refuses
  std::string trace_jsonl;            // the minimized trace (spec/trace-format.md)
  std::string name;                   // "<invariant>-<8 hex digits of FNV-1a of the trace>"
  std::optional<Lineage> lineage;     // of the entry the failure is about, when there is one
  nlohmann::json expect;              // the regression's expectation file
};

// nullopt when every check holds after every step (nothing to report).
std::optional<Report> make_report(const Input& input);

std::string render(const Report& r);
// Writes <dir>/<name>.jsonl and <dir>/<name>.expect; returns the trace's path.
std::filesystem::path write_regression(const Report& r, const std::filesystem::path& dir);

std::string short_hash(const std::string& text);

}  // namespace c2c::report

#include "report/ddmin.ipp"
