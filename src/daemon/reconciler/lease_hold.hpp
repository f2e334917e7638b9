// What the engine may write while the generation lease cannot cover the core's generation G (a
// full or read-only state directory; spec/daemon.md, "Fail closed when the lease cannot be
// extended"). Pure, so that its rule is unit-tested and seeded bugs in it are caught
// (tests/unit/daemon_lease_hold_test.cpp, tests/mutants/names.tsv).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/runtime_entry.hpp"

namespace c2c::daemon {

// Keeps in `plan` the ops that may be written now and returns the TIDs of the others, which wait
// for the lease (the retry queue). An add or an update writes an entry stamped with G, which must
// never reach the map above the durable ceiling (INV-4). A delete writes no generation, removing
// an entry never widens anything, and the entry of a task that exited explains nothing (INV-1,
// INV-5): deletes are kept. (Before, every op waited, and the entries of tasks that exited
// stayed in the map while the disk was full.)
inline std::vector<uint32_t> hold_for_lease(Plan& plan) {
  std::vector<uint32_t> held;
  std::erase_if(plan.ops, [&](const PlanOp& op) {
    if (op.kind == PlanOp::Kind::Delete) return false;
    held.push_back(op.tid);
    return true;
  });
  return held;
}

}  // namespace c2c::daemon
