// The activity of a set of threads over one window (issue 46 item 4): how each ran and who woke
// whom. Plain data, no Linux: the host fills it (src/host/wakeup_edges.hpp, from BPF; or a trace),
// the core proposes roles from it (core/role_proposals.hpp).
#pragma once

#include <cstdint>
#include <vector>

namespace c2c {

// One thread's counts over the window (or cumulative, before activity_window takes differences).
struct ThreadActivity {
  uint32_t tid = 0;
  uint32_t tgid = 0;
  uint64_t run_ns = 0;       // on-CPU time
  uint64_t runs = 0;         // times switched in
  uint64_t wakeups = 0;      // times woken, by anyone (an interrupt too)
  uint64_t wakes_given = 0;  // watched threads it woke from process context
  bool operator==(const ThreadActivity&) const = default;
};

// `waker` woke `wakee` `count` times (both watched threads, global tids).
struct WakeEdge {
  uint32_t waker = 0;
  uint32_t wakee = 0;
  uint64_t count = 0;
  bool operator==(const WakeEdge&) const = default;
};

struct ActivityWindow {
  uint64_t window_ns = 0;  // the window's length
  std::vector<ThreadActivity> threads;  // sorted by tid, one per tid
  std::vector<WakeEdge> edges;          // sorted by (waker, wakee), one per pair, count > 0
  bool operator==(const ActivityWindow&) const = default;
};

// The window between two cumulative readings `window_ns` apart: per thread and edge, after -
// before. A thread whose counts went back or whose tgid changed is another thread on a reused tid:
// it counts from 0 (its `after` as is). Threads and edges with nothing in the window are left
// out; the result is sorted.
ActivityWindow activity_window(const std::vector<ThreadActivity>& before, const std::vector<WakeEdge>& before_edges,
                               const std::vector<ThreadActivity>& after, const std::vector<WakeEdge>& after_edges,
                               uint64_t window_ns);

}  // namespace c2c
