// Replays a trace through the core, checking every invariant after every step.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "codec/trace_codec.hpp"

namespace c2c::trace {

struct StepViolation {
  size_t step = 0;  // 1-based index into the trace's events
  size_t line = 0;
  std::string event_kind;
  Violation violation;
};

struct StepNote {
  size_t line = 0;
  std::string event_kind;
  std::string message;
};

// A controller decision with the trace line that made it (issue 46).
struct StepDecision {
  size_t line = 0;
  std::string event_kind;
  ControllerDecisionRecord decision;
};

struct ReplayOutcome {
  Core core;
  size_t steps = 0;
  std::vector<StepViolation> violations;   // every violation, in step order
  std::vector<StepNote> ignored;           // inputs the core ignored (stale, duplicate)
  std::vector<StepNote> warnings;
  std::vector<StepDecision> decisions;     // every controller decision, in step order
  std::optional<codec::ParseError> invalid;       // an event the core refused: replay stopped there
};

// Every step gets check_step() (incremental: the keys the event touched, so a replay is linear),
// the final state also the full check(); check_every_step=false only checks the final state.
ReplayOutcome replay(const std::vector<codec::TraceEvent>& events, bool check_every_step = true, bool stop_at_first = false);

nlohmann::json to_json(const ReplayOutcome& r);
std::string to_table(const ReplayOutcome& r);

inline constexpr const char* kInvariantIds[] = {"INV-1", "INV-2", "INV-3", "INV-4",
                                                "INV-5", "INV-6", "INV-7", "INV-8"};

}  // namespace c2c::trace
