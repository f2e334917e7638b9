// The core's task-event path under callgrind: instructions and first-level cache misses per event
// at a given table size, counted (not timed), so two builds compare exactly on a shared machine
// whose timings move by 30 % run to run (scripts/bench-core callgrind runs it). The same synthetic node,
// event mix and turns as BM_CoreTaskEvents (bench/core_world.hpp); only the events and each
// turn's end are instrumented, not the node's construction.
//
// usage: core_event_profile TASKS [EVENTS]   (outside valgrind it just applies them)
#include <valgrind/callgrind.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core_world.hpp"

int main(int argc, char** argv) {
  using namespace c2c;
  using namespace c2c::bench;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TASKS [EVENTS]\n", argv[0]);
    return 2;
  }
  const size_t tasks = std::strtoul(argv[1], nullptr, 10);
  const size_t events = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 8192;
  World w({.tasks = tasks, .population = Population::Mixed});
  std::vector<Event> batch;
  // One round first, so that the measured events meet the steady state (every table at its size).
  w.next_events(4096, batch);
  for (const Event& e : batch) w.core.apply(e);
  w.end_turn();
  size_t not_applied = 0;
  // The cache model runs throughout (the events are built a chunk at a time right before they are
  // applied, as the daemon builds each from its ring-buffer record); only the applies are counted.
  constexpr size_t kChunk = 256;
  CALLGRIND_START_INSTRUMENTATION;
  for (size_t done = 0; done < events; done += kChunk) {
    batch.clear();
    w.next_events(std::min(kChunk, events - done), batch);
    CALLGRIND_TOGGLE_COLLECT;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (i + 2 < batch.size()) w.core.prefetch(batch[i + 2]);
      not_applied += w.core.apply(batch[i]).status != ApplyResult::Status::Applied;
    }
    w.end_turn();  // a chunk is a turn of the daemon's loop (World::end_turn), counted with it
    CALLGRIND_TOGGLE_COLLECT;
  }
  CALLGRIND_STOP_INSTRUMENTATION;
  std::printf("tasks %zu events %zu not_applied %zu\n", w.live_tasks(), events, not_applied);
  return not_applied == 0 ? 0 : 1;
}
