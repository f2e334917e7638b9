// Item 4 (for reference, no goal): plan() on a 100k-entry table whose kernel side drifted by 1%,
// and check() (the INV-1..INV-8 checker, which also builds a plan) on the same table.
//
// The drift: after the mirror synced everything (BpfSynced), the observed map loses 1/3 % of its
// entries (plan: Add), has 1/3 % rewritten with another slice (Update), and holds 1/3 % extra
// entries for TIDs with no lineage (Delete).
#include <benchmark/benchmark.h>

#include <string>

#include "core_world.hpp"

namespace c2c::bench {
namespace {

World& drifted_world(size_t n, size_t* expected_ops) {
  static size_t ops = 0;
  World& w = cached_world({.tasks = n, .population = Population::AllNodeMatched, .dra_policy = false});
  if (w.core.actual().empty()) {
    must_apply(w.core, BpfSynced{});
    std::vector<ActualEntry> observed;
    observed.reserve(w.core.actual().size() + n / 300);
    uint32_t extra_tid = 4'000'000;  // above every TID of the world
    ops = 0;
    for (const auto& [tid, v] : w.core.actual()) {
      const uint32_t pick = tid % 300;
      if (pick == 0) {  // missing from the kernel map: plan adds it
        ++ops;
        continue;
      }
      ActualEntry e{tid, v};
      if (pick == 1) {  // rewritten behind the core's back: plan updates it
        e.value.slice_ns += 1000;
        ++ops;
      }
      observed.push_back(e);
      if (pick == 2) {  // an entry nothing explains: plan deletes it (INV-5)
        ActualEntry stray{++extra_tid, v};
        observed.push_back(stray);
        ++ops;
      }
    }
    must_apply(w.core, BpfObserved{std::move(observed)});
  }
  *expected_ops = ops;
  return w;
}

void BM_CorePlanDrift(benchmark::State& state) {
  size_t expected = 0;
  World& w = drifted_world(static_cast<size_t>(state.range(0)), &expected);
  size_t ops = 0;
  for (auto _ : state) {
    Plan p = w.core.plan();
    ops = p.ops.size();
    benchmark::DoNotOptimize(p);
  }
  if (ops != expected) {
    state.SkipWithError(("plan has " + std::to_string(ops) + " ops, the drift made " + std::to_string(expected)).c_str());
    return;
  }
  state.counters["desired_entries"] = static_cast<double>(w.core.desired_size());
  state.counters["plan_ops"] = static_cast<double>(ops);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(w.core.desired_size()));
}

void BM_CoreCheck(benchmark::State& state) {
  size_t expected = 0;
  World& w = drifted_world(static_cast<size_t>(state.range(0)), &expected);
  size_t violations = 0;
  for (auto _ : state) {
    std::vector<Violation> v = w.core.check();
    violations = v.size();
    benchmark::DoNotOptimize(v);
  }
  // A drift the plan repairs is not a violation; a violation here means the bench node is wrong.
  if (violations != 0) {
    state.SkipWithError(("check() found " + std::to_string(violations) + " violations on the bench node").c_str());
    return;
  }
  state.counters["desired_entries"] = static_cast<double>(w.core.desired_size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(w.core.desired_size()));
}

BENCHMARK(BM_CorePlanDrift)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CoreCheck)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace c2c::bench
