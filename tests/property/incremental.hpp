// The oracle of the incremental reconcile (spec/state-machine.md, "Reconcile"): after every step
// of a trace, take_plan_delta() must hold exactly what the full plan() holds for the tids it
// names, must name every tid whose op changed, and a map that only ever receives the deltas must
// end where the full plan would take it. The engine's loop (delta, write, bpf_synced) runs on a
// second core fed the same events.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/core.hpp"

namespace c2c::property {

class IncrementalOracle {
 public:
  // Call after `core` applied `e` (the trace's own core: its delta is taken here).
  std::optional<std::string> step(Core& core, const Event& e);
  // Incremental check_step() must report every violation the full check() newly reports.
  std::optional<std::string> check_step_complete(const std::vector<Violation>& full,
                                                 const std::vector<Violation>& step);
  // The daemon's full pass in slices (Core::entry_keys, plan_of, check_keys, check_named): over a
  // partition of the keys into slices of `slice` tids, the slices' plans, concatenated, are plan()
  // and their checks with check_named() report what check() reports.
  static std::optional<std::string> sliced(const Core& core, const std::vector<Violation>& full, size_t slice);

 private:
  struct Slot {
    bool deferred = false;
    PlanOp::Kind kind = PlanOp::Kind::Add;
    RuntimeValue value;
    bool operator==(const Slot& o) const {
      return deferred == o.deferred && (deferred || (kind == o.kind && value == o.value));
    }
  };
  std::map<uint32_t, Slot> last_plan_;                 // the trace core's plan at the previous step
  Core engine_;                                        // the engine's core: synced after every step
  std::map<uint32_t, RuntimeValue> map_;               // what the engine's map holds
  std::set<std::pair<std::string, uint32_t>> last_full_;  // full check() violations at the previous step
};

}  // namespace c2c::property
