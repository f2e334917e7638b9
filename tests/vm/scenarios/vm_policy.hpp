// Writes policy entries into the pinned c2c_policy map, straight from the ABI header. A stand-in
// for the mirror library (src/mirror) until the lead switches the scenarios to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

#include <linux/types.h>

#include "claim2core_abi.h"
#include "core/cpuset.hpp"

namespace c2c::vm {

struct PolicySpec {
  uint8_t exec_class = C2C_CLASS_NORMAL;
  uint64_t slice_ns = 0;                  // 0: class default
  uint64_t boost_ns = 0;                  // 0: no boost; else lease of this length from now
  std::optional<c2c::CpuSet> allowed;
  std::optional<c2c::CpuSet> preferred;
  uint64_t generation = 1;
};

// Parses "lc|comm|throughput|background|normal"; throws std::invalid_argument naming the field.
uint8_t parse_class(const std::string& name);

// Builds the value for task (tgid, tid) with the given start_ticks.
c2c_policy_value make_value(const PolicySpec& spec, pid_t tgid, uint64_t start_ticks);

class PolicyMap {
 public:
  explicit PolicyMap(const std::string& pin = C2C_POLICY_PIN);  // throws std::runtime_error
  ~PolicyMap();
  PolicyMap(const PolicyMap&) = delete;
  PolicyMap& operator=(const PolicyMap&) = delete;
  void put(uint32_t tid, const c2c_policy_value& v);
  void del(uint32_t tid);  // absent is fine
  // Puts a policy for a live task, reading its start_ticks from /proc.
  void put_task(pid_t tgid, pid_t tid, const PolicySpec& spec);

 private:
  int fd_ = -1;
};

}  // namespace c2c::vm
