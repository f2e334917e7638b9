// A desired-vs-actual diff for the mirror's own tools, tests and benchmark.
//
// The daemon's plans come from c2c::Core::plan(), which knows lineages, claims and restart
// epochs. This is the same shape of computation on bare tables (tid -> value), used where no
// core state exists: c2c-mirror-tool, the crash test and bench/mirror_reconcile.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/runtime_entry.hpp"

namespace c2c::mirror {

using DesiredTable = std::unordered_map<uint32_t, RuntimeValue>;

// Add for a desired tid missing from the map, Update for a differing value, Delete (expected
// value = what the map holds) for an entry no desired entry explains (INV-5). While `loading`
// (the desired table is not complete yet after a restart), unexplained entries go to
// deferred_deletes instead. Ops are sorted by tid.
Plan diff_plan(const DesiredTable& desired, const std::vector<ActualEntry>& actual, bool loading);

}  // namespace c2c::mirror
