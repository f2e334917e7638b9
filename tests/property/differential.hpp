// Drives the core and the reference model side by side, one event at a time, and checks after
// every step everything issue #2 item 5 asks for (status, desired table with lineage, plan,
// check(), check_step(), digest unchanged on Ignored/Invalid, determinism of a copied core), and
// issue #13's incremental contract (IncrementalOracle).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "boundary_hits.hpp"
#include "core/core.hpp"
#include "incremental.hpp"
#include "naive_model.hpp"

namespace c2c::property {

// How often the generated traces reach the situations the seeded bugs of tests/mutants break
// (printed at the end of the run, so that a weakened generator shows).
struct Coverage {
  size_t applied = 0, ignored = 0, invalid = 0;
  size_t dra_entries = 0, node_entries = 0, tgid_entries = 0, narrowed_preferred = 0;
  size_t boosted_entries = 0, lease_renewals = 0, generation_bumps = 0;
  size_t ops_add = 0, ops_update = 0, ops_tid_reuse = 0, ops_delete = 0, deletes_inv1 = 0;
  size_t deferred_deletes = 0, restarts = 0, stale_task_events = 0, old_generation_inputs = 0;
  // The boundaries the generator aims at (issue 45, boundary_hits.hpp), counted from the core.
  testing::BoundaryHits boundaries;
  std::string to_string() const;
};
Coverage& coverage();

class Differential {
 public:
  explicit Differential(naive::Options o = {});
  // nullopt when the core and the model agree after the event and no invariant is violated;
  // else what went wrong (the caller adds the trace).
  std::optional<std::string> step(const Event& e);
  const naive::NaiveModel& model() const { return model_; }
  const Core& core() const { return core_; }
  // The events so far, as a trace in spec/trace-format.md (JSON Lines), replayable with
  // `claim2core replay FILE --format table`.
  std::string trace_jsonl() const;
  size_t steps() const { return trace_.size(); }

 private:
  Core core_;
  Core copy_;  // re-copied from core_ now and then; must stay identical (determinism)
  naive::NaiveModel model_;
  IncrementalOracle incremental_;  // take_plan_delta() and check_step() against plan() and check()
  std::vector<Event> trace_;
};

}  // namespace c2c::property
