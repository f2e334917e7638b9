// What every experiment workload measures about itself: raw samples and their percentiles, the
// thread's run delay (schedstat), its context switches, and where its CPU time went (CPU changes,
// NUMA-node changes, the device-local share), the topology read from sysfs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace c2c::exp {

uint64_t mono_ns();

// Raw samples by metric name, written as "<metric> v1 v2 ..." lines (one line per 256 values).
class Samples {
 public:
  std::vector<double>& metric(const std::string& name) { return by_name_[name]; }
  void write(const std::string& path) const;

 private:
  std::map<std::string, std::vector<double>> by_name_;
};

// n, mean, p50, p95, p99, p99.9, max (nearest rank); {"n":0} when empty.
nlohmann::json summary(std::vector<double> xs);

// Voluntary + involuntary context switches of the calling thread since construction.
class CtxSwitches {
 public:
  CtxSwitches() : start_(now()) {}
  uint64_t delta() const { return now() - start_; }
  static uint64_t now();

 private:
  uint64_t start_;
};

// NUMA node of every CPU from /sys/devices/system/cpu/cpu<N>/node<M> (all 0 without NUMA).
std::map<int, int> cpu_nodes(const std::string& sysfs = "/sys/devices/system/cpu");

// Per iteration of a workload's loop: the thread's CPU time since the previous step is charged to
// the CPU it is on now. Counts changes of CPU (migrations seen by the thread) and of NUMA node.
class Locality {
 public:
  explicit Locality(const std::string& local_cpus);  // kernel CPU list; empty: no device given
  void begin();
  void step();
  nlohmann::json json() const;

 private:
  std::set<int> local_;
  bool have_local_ = false;
  std::map<int, int> node_of_;
  int cpu_ = -1;
  uint64_t last_cpu_ns_ = 0;
  uint64_t local_ns_ = 0, total_ns_ = 0, migrations_ = 0, numa_migrations_ = 0;
  std::map<int, uint64_t> ns_by_cpu_;
};

std::set<int> parse_cpu_list(const std::string& list);  // throws std::invalid_argument

}  // namespace c2c::exp
