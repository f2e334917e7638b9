// Pure helpers over the scheduler's statistics (struct c2c_stats, bpf/claim2core_abi.h):
// summing the per-CPU copies, latency percentiles from the log2 histogram, JSON rendering.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <linux/types.h>

#include "claim2core_abi.h"

namespace c2c::sched {

// Sums per-CPU copies of the stats (a PERCPU_ARRAY lookup returns one per possible CPU).
c2c_stats sum_stats(std::span<const c2c_stats> per_cpu);

// Upper bound, in microseconds, of the histogram bucket holding quantile q (0 < q <= 1) of the
// runnable->running latencies; 0 when the histogram is empty. Bucket i is [2^i, 2^(i+1)) us.
uint64_t latency_quantile_us(const c2c_stats& s, double q);

// Total latency samples in the histogram.
uint64_t latency_samples(const c2c_stats& s);

// One-line JSON object with every counter, named after the ABI fields, plus p50/p99 bounds.
std::string stats_json(const c2c_stats& s);

// Name of an execution class (enum c2c_exec_class), "class<N>" for unknown values.
std::string class_name(uint32_t cls);

}  // namespace c2c::sched
