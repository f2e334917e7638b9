// `claim2core replay` with the invariants checked after every step (issue #13: 100k events in
// <= 10 s, linear in the trace's length). The trace is the event benchmark's node: setup, half the
// events bring tasks to life, the other half are the task-event stream, with a time advance every
// 100 events and a bpf_synced every 50 (so leases renew and the kernel side moves too).
#include <benchmark/benchmark.h>

#include "core_world.hpp"
#include "trace/replay.hpp"

namespace c2c::bench {
namespace {

std::vector<codec::TraceEvent> make_trace(size_t n_events) {
  WorldOptions o{.tasks = n_events / 2, .population = Population::Mixed, .build_core = false};
  World w(o);
  std::vector<Event> events = World::node_events(o);
  for (Event& e : w.task_events()) events.push_back(std::move(e));
  std::vector<Event> stream;
  w.next_events(n_events > events.size() ? n_events - events.size() : 0, stream);
  std::vector<codec::TraceEvent> out;
  out.reserve(n_events + n_events / 25);
  Nanos now = 0;
  auto push = [&](Event e) { out.push_back({out.size() + 1, std::move(e)}); };
  for (size_t i = 0; i < events.size() + stream.size(); ++i) {
    push(i < events.size() ? events[i] : stream[i - events.size()]);
    if (i % 100 == 99) push(TimeAdvance{now += 100'000'000});
    if (i % 50 == 49) push(BpfSynced{});
  }
  return out;
}

void BM_ReplayCheckedEveryStep(benchmark::State& state) {
  const auto trace = make_trace(static_cast<size_t>(state.range(0)));
  size_t violations = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    trace::ReplayOutcome r = trace::replay(trace, /*check_every_step=*/true);
    state.SetIterationTime(thread_cpu_seconds() - t0);
    violations = r.violations.size();
    if (r.invalid) {
      state.SkipWithError("the trace has an invalid event");
      return;
    }
  }
  if (violations != 0) {
    state.SkipWithError("the replay reports violations: the trace or the core is wrong");
    return;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * trace.size()));
  state.counters["events"] = static_cast<double>(trace.size());
  state.counters["seconds_per_replay"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate |
                                                                   benchmark::Counter::kInvert);
}

BENCHMARK(BM_ReplayCheckedEveryStep)->Arg(10'000)->Arg(100'000)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace c2c::bench
