// The boundaries the event generators aim at (issue 45), counted as a run reaches them, so that a
// run that never reached one shows (and fails: property.core_vs_naive, fuzz.corpus.fuzz_core_events).
// Shared by the property generator (tests/property/trace_gen.*) and the fuzz event source
// (fuzz/event_source.*): one list of boundaries, one way to count them, from the core's state.
//
//   generation 2^53-1 / 2^53 / 2^53+1   an event's generation (input, restart, kernel entry) or the
//                                       node's, at the bound or next to it
//   node generation at 2^53             the node's generation reached the bound (every change refused)
//   restart refused at the bound        a restart with an in-bound file had no generation left
//   narrowed CPUs in word 0..3          a desired entry narrowed below the node's CPUs with CPUs in
//                                       that 64-bit word of the mask
//   narrowed CPU 255                    ... holding the mask's last CPU
//   pod rebound with tasks in its old cgroup   a live pod bound again to another cgroup while a
//                                       task lives under the old one
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"

namespace c2c::testing {

class BoundaryHits {
 public:
  // Call with the core as it is before the event, then after it with its result.
  void before(const Event& e, const Core& core);
  void after(const Event& e, const ApplyResult& r, const Core& core);
  // Every boundary with its count (0 included).
  std::map<std::string, size_t> counts() const;
  std::vector<std::string> missed() const;
  std::string to_string() const;

 private:
  std::optional<Pod> old_pod_;
  std::map<std::string, size_t> hits_;
};

}  // namespace c2c::testing
