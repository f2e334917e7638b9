// Pure helpers over the scheduler's statistics (struct c2c_stats, bpf/claim2core_abi.h):
// summing the per-CPU copies, latency percentiles from the log2 histogram, JSON rendering.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <linux/types.h>

#include "claim2core_abi.h"

namespace c2c::sched {

// The scalar counters of struct c2c_stats, named after their ABI fields: the one list that summing,
// the JSON rendering and the daemon's metrics go through (a new counter is added here only).
struct StatCounter {
  const char* name;
  __u64 c2c_stats::*field;
};
inline constexpr std::array<StatCounter, 12> kStatCounters{{
    {"identity_mismatches", &c2c_stats::identity_mismatches},
    {"migrations", &c2c_stats::migrations},
    {"boost_expired", &c2c_stats::boost_expired},
    {"starvation_rescues", &c2c_stats::starvation_rescues},
    {"cpumask_rejections", &c2c_stats::cpumask_rejections},
    {"boost_budget_exhausted", &c2c_stats::boost_budget_exhausted},
    {"oracle_cpu_outside", &c2c_stats::oracle_cpu_outside},
    {"oracle_stale_identity", &c2c_stats::oracle_stale_identity},
    {"oracle_past_lease", &c2c_stats::oracle_past_lease},
    {"preferred_spills", &c2c_stats::preferred_spills},
    {"boost_inherited", &c2c_stats::boost_inherited},
    {"inherit_budget_refused", &c2c_stats::inherit_budget_refused},
}};
static_assert(sizeof(c2c_stats) == (C2C_NR_CLASSES + kStatCounters.size() + C2C_LAT_BUCKETS) * sizeof(__u64),
              "every scalar counter of c2c_stats must be in kStatCounters");

// Sums per-CPU copies of the stats (a PERCPU_ARRAY lookup returns one per possible CPU).
c2c_stats sum_stats(std::span<const c2c_stats> per_cpu);

// Upper bound, in microseconds, of the histogram bucket holding quantile q (0 < q <= 1) of the
// runnable->running latencies; 0 when the histogram is empty. Bucket i is [2^i, 2^(i+1)) us.
uint64_t latency_quantile_us(const c2c_stats& s, double q);

// Total latency samples in the histogram.
uint64_t latency_samples(const c2c_stats& s);

// The latency histogram as Prometheus histogram buckets (claim2core_scheduler_latency_seconds):
// bucket i's upper bound is 2^(i+1) us in seconds, the last (the BPF side's catch-all) is +Inf;
// counts are cumulative. The BPF side keeps counts only, so the sum is the sum of each sample's
// bucket lower bound (0 for bucket 0, 2^i us otherwise): a lower bound of the true sum.
struct LatencyBuckets {
  std::vector<double> upper_bounds_s;
  std::vector<uint64_t> cumulative;
  uint64_t count = 0;
  double sum_lower_bound_s = 0;
};
LatencyBuckets latency_buckets(const c2c_stats& s);

// One-line JSON object with every counter, named after the ABI fields, plus p50/p99 bounds.
std::string stats_json(const c2c_stats& s);

// Name of an execution class (enum c2c_exec_class) as the policy language spells it (core/model.hpp
// ExecClass names), "class<N>" for unknown values.
std::string class_name(uint32_t cls);

}  // namespace c2c::sched
