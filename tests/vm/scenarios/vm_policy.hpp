// Writes policy entries through the mirror library (src/mirror: PinnedMaps, Applier), the same
// path as the daemon: the guest's pins are created by `c2c-mirror-tool open` before the scheduler
// loads and reuses them. Values are built from the ABI header so that the scenarios control every
// field (start_ticks of a task that is gone, a lease of a given length).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
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
  uint8_t extra_flags = 0;                // ORed into the flags (boost inheritance: C2C_F_WAKEE_*)
};

// Parses "lc|comm|throughput|background|normal"; throws std::invalid_argument naming the field.
uint8_t parse_class(const std::string& name);

// Builds the value for task (tgid, tid) with the given start_ticks.
c2c_policy_value make_value(const PolicySpec& spec, pid_t tgid, uint64_t start_ticks);

class PolicyMap {
 public:
  // Re-opens (never creates) the pinned map set under pin_root; throws std::runtime_error.
  explicit PolicyMap(const std::string& pin_root = C2C_PIN_ROOT);
  ~PolicyMap();
  PolicyMap(const PolicyMap&) = delete;
  PolicyMap& operator=(const PolicyMap&) = delete;
  // One-op plans through Applier::apply; a failed op throws std::runtime_error naming it.
  void put(uint32_t tid, const c2c_policy_value& v);
  void del(uint32_t tid);  // absent is fine
  // Puts a policy for a live task, reading its start_ticks from /proc.
  void put_task(pid_t tgid, pid_t tid, const PolicySpec& spec);
  // How many entries the map holds now, whoever wrote them (the kernel's key walk).
  size_t entries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace c2c::vm
