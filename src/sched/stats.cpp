#include "sched/stats.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace c2c::sched {

c2c_stats sum_stats(std::span<const c2c_stats> per_cpu) {
  c2c_stats total{};
  for (const c2c_stats& s : per_cpu) {
    for (unsigned i = 0; i < C2C_NR_CLASSES; ++i) total.dispatched[i] += s.dispatched[i];
    for (const auto& c : kStatCounters) total.*c.field += s.*c.field;
    for (unsigned i = 0; i < C2C_LAT_BUCKETS; ++i) total.latency_hist[i] += s.latency_hist[i];
  }
  return total;
}

uint64_t latency_samples(const c2c_stats& s) {
  uint64_t n = 0;
  for (uint64_t c : s.latency_hist) n += c;
  return n;
}

uint64_t latency_quantile_us(const c2c_stats& s, double q) {
  const uint64_t n = latency_samples(s);
  if (n == 0 || q <= 0.0) return 0;
  // The rank of the quantile sample, 1-based; q = 1 is the maximum.
  auto rank = static_cast<uint64_t>(q * static_cast<double>(n));
  if (static_cast<double>(rank) < q * static_cast<double>(n)) ++rank;
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (unsigned i = 0; i < C2C_LAT_BUCKETS; ++i) {
    seen += s.latency_hist[i];
    if (seen >= rank) return uint64_t{1} << (i + 1);
  }
  return uint64_t{1} << C2C_LAT_BUCKETS;
}

LatencyBuckets latency_buckets(const c2c_stats& s) {
  LatencyBuckets h;
  for (unsigned i = 0; i < C2C_LAT_BUCKETS; ++i) {
    const bool last = i + 1 == C2C_LAT_BUCKETS;
    h.count += s.latency_hist[i];
    h.upper_bounds_s.push_back(last ? std::numeric_limits<double>::infinity() : std::ldexp(1.0, static_cast<int>(i) + 1) * 1e-6);
    h.cumulative.push_back(h.count);
    const double lower_s = i == 0 ? 0.0 : std::ldexp(1.0, static_cast<int>(i)) * 1e-6;
    h.sum_lower_bound_s += static_cast<double>(s.latency_hist[i]) * lower_s;
  }
  return h;
}

std::string class_name(uint32_t cls) {
  switch (cls) {
    case C2C_CLASS_UNMATCHED: return "unmatched";
    case C2C_CLASS_LATENCY_CRITICAL: return "latency-critical";
    case C2C_CLASS_COMM_PROGRESS: return "communication-progress";
    case C2C_CLASS_THROUGHPUT: return "throughput";
    case C2C_CLASS_BACKGROUND: return "background";
    case C2C_CLASS_NORMAL: return "normal";
    default: return "class" + std::to_string(cls);
  }
}

std::string stats_json(const c2c_stats& s) {
  nlohmann::json j;
  nlohmann::json d = nlohmann::json::object();
  for (uint32_t i = 0; i < C2C_NR_CLASSES; ++i) d[class_name(i)] = s.dispatched[i];
  j["dispatched"] = d;
  for (const auto& c : kStatCounters) j[c.name] = s.*c.field;
  j["latency_samples"] = latency_samples(s);
  j["latency_p50_us_le"] = latency_quantile_us(s, 0.5);
  j["latency_p99_us_le"] = latency_quantile_us(s, 0.99);
  j["latency_hist"] = s.latency_hist;
  return j.dump();
}

}  // namespace c2c::sched
