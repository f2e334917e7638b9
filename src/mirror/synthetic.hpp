// Deterministic policy tables generated from a seed, for c2c-mirror-tool, tests and benchmarks
// (the same seed gives the same table in every process, so a killed run can be re-checked).
#pragma once

#include <cstdint>

#include "mirror/diff.hpp"

namespace c2c::mirror {

// `n` entries on tids [base, base + n) with base = 1000 + (seed % 4) * (n / 2): consecutive seeds
// overlap by half, so a new seed both updates, adds and leaves entries to prune. Every value is
// writable (check_writable) and carries `generation`.
DesiredTable synthetic_table(uint64_t seed, uint32_t n, uint64_t generation);

}  // namespace c2c::mirror
