#include "core/activity.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace c2c {

ActivityWindow activity_window(const std::vector<ThreadActivity>& before, const std::vector<WakeEdge>& before_edges,
                               const std::vector<ThreadActivity>& after, const std::vector<WakeEdge>& after_edges,
                               uint64_t window_ns) {
  ActivityWindow w;
  w.window_ns = window_ns;
  std::map<uint32_t, const ThreadActivity*> prev;
  for (const auto& t : before) prev[t.tid] = &t;
  std::map<uint32_t, bool> reused;  // tid -> counts restarted (another thread on that tid)
  for (const auto& a : after) {
    ThreadActivity d = a;
    auto it = prev.find(a.tid);
    const bool fresh = it == prev.end() || it->second->tgid != a.tgid || it->second->run_ns > a.run_ns ||
                       it->second->runs > a.runs || it->second->wakeups > a.wakeups ||
                       it->second->wakes_given > a.wakes_given;
    reused[a.tid] = fresh;
    if (!fresh) {
      d.run_ns -= it->second->run_ns;
      d.runs -= it->second->runs;
      d.wakeups -= it->second->wakeups;
      d.wakes_given -= it->second->wakes_given;
    }
    if (d.run_ns || d.runs || d.wakeups || d.wakes_given) w.threads.push_back(d);
  }
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> prev_edges;
  for (const auto& e : before_edges) prev_edges[{e.waker, e.wakee}] = e.count;
  for (const auto& e : after_edges) {
    uint64_t n = e.count;
    auto it = prev_edges.find({e.waker, e.wakee});
    // An edge of a reused tid, or one whose count went back, counts from 0.
    const bool restart = reused[e.waker] || reused[e.wakee] || (it != prev_edges.end() && it->second > n);
    if (it != prev_edges.end() && !restart) n -= it->second;
    if (n > 0) w.edges.push_back({e.waker, e.wakee, n});
  }
  std::sort(w.threads.begin(), w.threads.end(), [](const auto& a, const auto& b) { return a.tid < b.tid; });
  std::sort(w.edges.begin(), w.edges.end(),
            [](const auto& a, const auto& b) { return std::pair(a.waker, a.wakee) < std::pair(b.waker, b.wakee); });
  return w;
}

}  // namespace c2c
