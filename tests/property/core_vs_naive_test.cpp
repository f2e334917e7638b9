// property.core_vs_naive: 10,000 generated traces (by default) through the core and the naive
// reference model, compared after every step. See README.md for reproducing a failure.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <string>
#include <iostream>

#include "differential.hpp"
#include "trace_gen.hpp"

namespace c2c::property {
namespace {

size_t g_traces = 0;
size_t g_events = 0;

RC_GTEST_PROP(CoreVsNaive, EveryStepAgrees, ()) {
  std::vector<Step> steps = *gen_trace();
  if (*rc::gen::inRange<uint8_t>(0, 4) == 0) {  // a quarter of the traces start in a DRA world
    auto world = dra_world_steps();
    steps.insert(steps.begin(), world.begin(), world.end());
  }
  ++g_traces;
  Differential run(naive::Options{explore_open_findings()});
  auto failure = run.step(initial_node_event(*rc::gen::inRange<uint8_t>(0, 8)));
  for (size_t i = 0; !failure && i < steps.size(); ++i) failure = run.step(concretize(steps[i], run.model()));
  g_events += run.steps();
  if (failure) RC_FAIL(*failure + "trace (JSON Lines, replay with claim2core replay FILE --format table):\n" + run.trace_jsonl());
}

// Issue 45: a seeded bug at a boundary (the last word of a CPU mask, a pod rebound to another
// cgroup, a generation at 2^53) used to be found in one run and missed in the next. The generator
// draws each boundary on purpose; a run that never reached one fails here, naming it. (Runs after
// the property, in the same process; a reproduce= run replays one trace and is not judged.)
TEST(CoreVsNaive, EveryBoundaryWasHit) {
  const char* params = std::getenv("RC_PARAMS");
  if (params != nullptr && std::string(params).find("reproduce") != std::string::npos)
    GTEST_SKIP() << "a reproduce= run replays one trace";
  if (g_traces < 1000) GTEST_SKIP() << "only " << g_traces << " traces ran (judged from 1,000 on)";
  const auto missed = coverage().boundaries.missed();
  std::string names;
  for (const auto& m : missed) names += "\n  " + m;
  EXPECT_TRUE(missed.empty()) << "boundaries never hit in " << g_traces << " traces:" << names;
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
