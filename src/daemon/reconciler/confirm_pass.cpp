#include "daemon/reconciler/confirm_pass.hpp"

#include <unordered_set>

namespace c2c::daemon {

size_t drift_among(const std::vector<uint32_t>& keys, const std::vector<ActualEntry>& read,
                   const Core::ActualTable& known) {
  std::unordered_set<uint32_t> seen;
  size_t drift = 0;
  for (const auto& e : read) {
    seen.insert(e.tid);
    auto it = known.find(e.tid);
    if (it == known.end() || !(it->second == e.value)) ++drift;
  }
  std::unordered_set<uint32_t> counted;
  for (uint32_t tid : keys)
    if (!seen.count(tid) && known.count(tid) && counted.insert(tid).second) ++drift;  // written, then gone
  return drift;
}

size_t whole_map_drift(const std::vector<ActualEntry>& read, const Core::ActualTable& known) {
  size_t drift = 0;
  for (const auto& e : read) {
    const auto held = known.find(e.tid);
    const bool as_believed = held != known.end() && held->second == e.value;
    if (!as_believed) ++drift;
  }
  if (read.size() < known.size()) drift += known.size() - read.size();  // at least this many gone
  return drift;
}

}  // namespace c2c::daemon
