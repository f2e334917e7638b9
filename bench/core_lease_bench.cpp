// For reference (no goal in issue #2): the boost-lease renewal wave and a preview, both on the
// 100k-task node of the node-policy change (every task boosted by a priority-1 node policy).
//
// Leases granted together renew together: every entry of a policy upsert gets boost_until =
// now + maxBoost and is renewed at half-life (INV-8), so one TimeAdvance renews all 100k entries
// in a single apply(). Each iteration advances time by half a lease, which renews every entry.
#include <benchmark/benchmark.h>

#include <string>

#include "core_world.hpp"

namespace c2c::bench {
namespace {

World& boosted_world(size_t n) {
  return cached_world({.tasks = n, .population = Population::AllNodeMatched, .dra_policy = false});
}

void BM_CoreLeaseRenewalWave(benchmark::State& state) {
  World& w = boosted_world(static_cast<size_t>(state.range(0)));
  const Nanos half = w.core.node().default_max_boost / 2;
  size_t renewed = 0;
  for (auto _ : state) {
    // The next renewal deadline: half a lease after the last grant or renewal.
    const Event e = TimeAdvance{w.core.now() + half};
    const double t0 = thread_cpu_seconds();
    ApplyResult r = w.core.apply(e);
    const double t1 = thread_cpu_seconds();
    state.SetIterationTime(t1 - t0);
    renewed = r.changed_tids.size();
    if (r.status != ApplyResult::Status::Applied || renewed != w.live_tasks()) {
      state.SkipWithError(("time advance renewed " + std::to_string(renewed) + " leases, expected " +
                           std::to_string(w.live_tasks())).c_str());
      return;
    }
  }
  state.counters["leases_renewed"] = static_cast<double>(renewed);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(renewed));
}

// The daemon's renewal wave in batches (spec/daemon.md, "Lease renewals in batches"): each step
// renews at most 512 of the due leases, the earliest first. A step must cost its batch, not the
// whole wave (the lease index walks only the leases it renews), so the per-lease figure here is
// to be read beside the unbounded wave's.
void BM_CoreLeaseRenewalBatch(benchmark::State& state) {
  World& w = boosted_world(static_cast<size_t>(state.range(0)));
  constexpr uint32_t kBatch = 512;  // the daemon's kRenewalsPerTurn
  size_t renewed = 0, steps = 0;
  for (auto _ : state) {
    // 1 ns on while a wave is under way (leases left due), else to the next renewal deadline:
    // a new wave (the world's leases were all granted together).
    const auto next = w.core.next_deadline();
    const Nanos at = next && *next > w.core.now() ? *next : w.core.now() + 1;
    const Event e = TimeAdvance{at, kBatch};
    const double t0 = thread_cpu_seconds();
    ApplyResult r = w.core.apply(e);
    const double t1 = thread_cpu_seconds();
    state.SetIterationTime(t1 - t0);
    if (r.status != ApplyResult::Status::Applied || r.changed_tids.empty() || r.changed_tids.size() > kBatch) {
      state.SkipWithError(("a bounded step renewed " + std::to_string(r.changed_tids.size()) + " leases").c_str());
      return;
    }
    renewed += r.changed_tids.size();
    ++steps;
  }
  state.counters["leases_per_step"] = static_cast<double>(renewed) / static_cast<double>(steps);
  state.SetItemsProcessed(static_cast<int64_t>(renewed));
}

// What the operator sees before a change goes live: preview() of the next generation of the node
// policy (a different executionTime), which evaluates every live task.
void BM_CorePreviewNodePolicy(benchmark::State& state) {
  World& w = boosted_world(static_cast<size_t>(state.range(0)));
  NodeSchedulingPolicy next = w.node_policy;
  next.generation = 0;
  next.execution_time = 500'000;
  size_t matched = 0;
  for (auto _ : state) {
    PreviewResult p = w.core.preview(next);
    matched = p.matched.size();
    benchmark::DoNotOptimize(p);
  }
  if (matched != w.live_tasks()) {
    state.SkipWithError(("preview matched " + std::to_string(matched) + " tasks, expected " +
                         std::to_string(w.live_tasks())).c_str());
    return;
  }
  state.counters["matched"] = static_cast<double>(matched);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(matched));
}

BENCHMARK(BM_CoreLeaseRenewalWave)->Arg(100'000)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CoreLeaseRenewalBatch)->Arg(100'000)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CorePreviewNodePolicy)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace c2c::bench
