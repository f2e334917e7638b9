// Delta debugging (ddmin, Zeller & Hildebrandt 2002) over event sequences; included by report.hpp.
#pragma once

#include <algorithm>

namespace c2c::report {

template <typename Pred>
std::vector<Event> ddmin(std::vector<Event> events, Pred still_fails, size_t& runs) {
  size_t n = 2;
  while (events.size() >= 2) {
    const size_t chunk = (events.size() + n - 1) / n;
    bool reduced = false;
    // Try each complement (drop one chunk); a smaller failing sequence restarts at coarser grain.
    for (size_t start = 0; start < events.size(); start += chunk) {
      std::vector<Event> rest;
      rest.reserve(events.size());
      for (size_t i = 0; i < events.size(); ++i)
        if (i < start || i >= start + chunk) rest.push_back(events[i]);
      ++runs;
      if (!rest.empty() && still_fails(rest)) {
        events = std::move(rest);
        n = std::max<size_t>(n - 1, 2);
        reduced = true;
        break;
      }
    }
    if (reduced) continue;
    if (n >= events.size()) break;  // single events: 1-minimal
    n = std::min(events.size(), n * 2);
  }
  return events;
}

}  // namespace c2c::report
