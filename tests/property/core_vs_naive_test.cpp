// property.core_vs_naive: 10,000 generated traces (by default) through the core and the naive
// reference model, compared after every step. See README.md for reproducing a failure.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <iostream>

#include "differential.hpp"
#include "trace_gen.hpp"

namespace c2c::property {
namespace {

size_t g_traces = 0;
size_t g_events = 0;

RC_GTEST_PROP(CoreVsNaive, EveryStepAgrees, ()) {
  const std::vector<Step> steps = *gen_trace();
  ++g_traces;
  Differential run(naive::Options{explore_open_findings()});
  auto failure = run.step(initial_node_event(*rc::gen::inRange<uint8_t>(0, 5)));
  for (size_t i = 0; !failure && i < steps.size(); ++i) failure = run.step(concretize(steps[i], run.model()));
  g_events += run.steps();
  if (failure) RC_FAIL(*failure + "trace (JSON Lines, replay with claim2core replay FILE --format table):\n" + run.trace_jsonl());
}

class CountReporter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::cout << "property.core_vs_naive: ran " << g_traces << " traces (" << g_events
              << " events, including shrinking runs)\n  " << coverage().to_string() << std::endl;
  }
};

}  // namespace
}  // namespace c2c::property

int main(int argc, char** argv) {
  // 10,000 traces of up to 50 events unless the caller says otherwise (e.g. reproduce=...).
  setenv("RC_PARAMS", "max_success=10000 max_size=50", /*overwrite=*/0);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new c2c::property::CountReporter);
  return RUN_ALL_TESTS();
}
