// Runs events through c2c::Core and checks after every step everything the fuzz harness asserts:
// check() and check_step() (INV-1..INV-8), "an Ignored/Invalid event leaves digest() unchanged"
// (INV-3), determinism (a copy fed the same events has the same digest), the trace codec round
// trip of every applied event, and, when the property suite's naive reference model is built
// (C2C_FUZZ_HAVE_NAIVE), agreement with it. Shared by the harness and `claim2core report`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"

namespace c2c::fuzz {

struct Failure {
  size_t step = 0;           // 1-based index of the event after which the check failed
  std::string event_kind;    // trace-format name of that event
  std::string invariant;     // "INV-1".."INV-8", or "determinism", "codec", "naive-model"
  std::string message;
  std::optional<Lineage> lineage;
  uint32_t tid = 0;
};

struct CheckOptions {
  bool naive_model = true;   // ignored when the model is not built in
  bool codec_round_trip = true;
  // Report an event the core refuses as a failure "invalid-input" (`claim2core replay` stops at
  // such an event, so a regression trace must not contain one).
  bool reject_invalid = false;
};

// The first failure, or nullopt when every check holds after every step.
std::optional<Failure> run_checked(const std::vector<Event>& events, const CheckOptions& options = {});

// Whether this build compares against the naive reference model.
bool have_naive_model();

}  // namespace c2c::fuzz
