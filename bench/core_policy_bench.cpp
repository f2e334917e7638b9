// Goal 2: one policy change that touches 100k tasks, applied in <= 50 ms (issue #2 item 7).
//
// Node policy: 100k host tasks matched by ^EngineCore(_DP[0-9]+)?$ (half by their own comm, half
// through their thread-group leader); each iteration upserts a new generation with a different
// executionTime, so every entry is rewritten. DRA policy: 100k tasks in 8 pods matched by a
// catch-all task role; each iteration flips that role's execution class. One apply() per iteration.
#include <benchmark/benchmark.h>

#include <string>

#include "core_world.hpp"

namespace c2c::bench {
namespace {

template <class Fn>
void time_one_apply(benchmark::State& state, World& w, Fn next_event) {
  size_t touched = 0;
  for (auto _ : state) {
    const Event e = next_event();
    const double t0 = thread_cpu_seconds();
    ApplyResult r = w.core.apply(e);
    const double t1 = thread_cpu_seconds();
    state.SetIterationTime(t1 - t0);
    if (r.status != ApplyResult::Status::Applied) {
      state.SkipWithError(("policy change not applied: " + r.field + " " + r.message).c_str());
      return;
    }
    touched = r.changed_tids.size();
    if (touched != w.live_tasks()) {
      state.SkipWithError(("policy change touched " + std::to_string(touched) + " entries, expected " +
                           std::to_string(w.live_tasks())).c_str());
      return;
    }
  }
  state.counters["live_tasks"] = static_cast<double>(w.live_tasks());
  state.counters["entries_touched"] = static_cast<double>(touched);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * static_cast<int64_t>(touched)));
}

void BM_CoreNodePolicyChange(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  World& w = cached_world({.tasks = n, .population = Population::AllNodeMatched, .dra_policy = false});
  time_one_apply(state, w, [&w] {
    NodeSchedulingPolicy p = w.node_policy;
    p.generation = 0;  // "the next generation"
    p.execution_time = w.node_policy.execution_time == 200'000 ? 300'000 : 200'000;
    w.node_policy = p;
    return Event{NodePolicyUpsert{p}};
  });
}

void BM_CoreDraPolicyChange(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  World& w = cached_world({.tasks = n, .population = Population::AllDraMatched, .node_policy = false});
  time_one_apply(state, w, [&w] {
    DraExecutionPolicy p = w.dra_policy;
    p.generation = 0;
    TaskRole& worker = p.task_roles.back();
    worker.exec_class = worker.exec_class == ExecClass::Throughput ? ExecClass::Background : ExecClass::Throughput;
    w.dra_policy = p;
    return Event{DraPolicyUpsert{p}};
  });
}

BENCHMARK(BM_CoreNodePolicyChange)->Arg(100'000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CoreDraPolicyChange)->Arg(100'000)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace c2c::bench
