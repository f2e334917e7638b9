// Drives the core and the reference model side by side, one event at a time, and checks after
// every step everything issue #2 item 5 asks for (status, desired table with lineage, plan,
// check(), check_step(), digest unchanged on Ignored/Invalid, determinism of a copied core).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "naive_model.hpp"

namespace c2c::property {

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
  std::vector<Event> trace_;
};

}  // namespace c2c::property
