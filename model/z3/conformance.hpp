// Conformance of the real core to the Z3 model: given a concrete step (pre-state, event,
// post-state) of c2c::Core, project both states onto each key the step can concern, pin every
// field the core exposes, and ask Z3 whether the model's transition T_e allows the step (sat).
// The property and fuzz suites call this on every step of a sample of traces, so that the model
// the invariants are proved on and the code cannot drift apart (model/README.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/core.hpp"

namespace c2c::z3m {

struct ConformanceResult {
  bool ok = true;
  size_t keys_checked = 0;          // keys whose projection was checked against T_e
  size_t keys_skipped = 0;          // keys the model cannot speak about (see `skipped`)
  std::vector<std::string> failures;  // one per key where T_e does not allow the step
  std::vector<std::string> skipped;   // why a key was not checked (outside the model's scope)
};

// `pre` is the core before `e`, `post` after core.apply(e). Keys considered: every TID in the
// desired table, the actual view or the task table of either state. Pure (no I/O); uses a fresh
// Z3 context per call and 256-bit CPU sets.
ConformanceResult check_conformance(const Core& pre, const c2c::Event& e, const Core& post);

}  // namespace c2c::z3m
