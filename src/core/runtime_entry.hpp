// The desired runtime table's entries, their lineage, actual (kernel-side) entries and plan ops.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cpuset.hpp"
#include "core/model.hpp"

namespace c2c {

// Flags mirror enum c2c_policy_flags of bpf/claim2core_abi.h (checked by static_asserts in src/host).
enum RuntimeFlags : uint8_t {
  kFlagBoost = 1u << 0,
  kFlagCustomSlice = 1u << 1,
  kFlagAllowedCpus = 1u << 2,
  kFlagPreferredCpus = 1u << 3,
  kFlagInherited = 1u << 4,
  // Boost inheritance (issue 43 item 3, spec.boost.inherit.depth): a wakee of this task's boosted
  // run gets a bounded boost (depth 1); with kFlagWakeeDepth2 a wakee of that wakee too (depth 2).
  // Only on a boosting entry (check(): INV-8); kFlagWakeeDepth2 only with kFlagWakeeBoost.
  kFlagWakeeBoost = 1u << 5,
  kFlagWakeeDepth2 = 1u << 6,
};

// The flags of a boost inheritance of depth 0 (off), 1 or 2.
constexpr uint8_t wakee_boost_flags(uint32_t depth) {
  return depth == 0 ? 0 : depth == 1 ? uint8_t{kFlagWakeeBoost} : uint8_t(kFlagWakeeBoost | kFlagWakeeDepth2);
}

// The flags' names in traces (spec/trace-format.md) and in the daemon's API: one table for both.
struct RuntimeFlagName {
  uint8_t bit;
  const char* name;
};
inline constexpr RuntimeFlagName kRuntimeFlagNames[] = {
    {kFlagBoost, "boost"},
    {kFlagCustomSlice, "custom-slice"},
    {kFlagAllowedCpus, "allowed-cpus"},
    {kFlagPreferredCpus, "preferred-cpus"},
    {kFlagInherited, "inherited"},
    {kFlagWakeeBoost, "wakee-boost"},
    {kFlagWakeeDepth2, "wakee-depth-2"},
};

// Exactly what one policy-map value holds (struct c2c_policy_value), in C++ types.
struct RuntimeValue {
  uint64_t start = 0;           // identity (INV-2)
  uint64_t generation = 0;      // node policy generation when this value last changed (INV-4)
  Nanos slice_ns = 0;
  Nanos boost_until = 0;        // boost lease deadline, 0 = not boosted (INV-8)
  Nanos max_boost = 0;
  CpuSet allowed;               // subset of the task's envelope (INV-6)
  CpuSet preferred;             // subset of allowed
  uint32_t tgid = 0;
  ExecClass exec_class = ExecClass::Unmatched;
  uint8_t flags = 0;
  bool operator==(const RuntimeValue&) const = default;
};

struct ClaimRef {
  std::string uid;
  int64_t generation = 0;
  bool operator==(const ClaimRef&) const = default;
};

enum class Strategy : uint8_t { ExactTid = 0, Tgid = 1 };
const char* to_string(Strategy s);

// Where an entry comes from: shared by every task that the same policy derives through the
// same pod and claims (so that a 100k-task table does not hold 100k copies of it).
struct Origin {
  PolicyKind kind = PolicyKind::Node;
  std::string policy;
  int64_t policy_generation = 0;
  std::string pod_uid;            // empty for node-level policies
  std::vector<ClaimRef> claims;   // live claims the entry was derived from (INV-1)
  std::string role;               // task role name (DRA policies)
  // How the task got the role its selector matched: "registered role <r>" (TaskRoleSet), "pod
  // annotation role <r>" (Pod.task_roles), "" when the selector's patterns matched.
  std::string role_source;
  bool operator==(const Origin&) const = default;
};

struct DesiredEntry {
  RuntimeValue value;
  std::shared_ptr<const Origin> origin;
  Strategy strategy = Strategy::ExactTid;
  uint32_t restart_epoch = 0;     // the daemon epoch in which it was derived (INV-7)
};

// The full lineage of one entry, claim to execution class, for people and traces.
struct Lineage {
  std::vector<ClaimRef> claims;
  std::string pod_uid;
  std::string cgroup;
  TaskKey task;
  uint32_t tgid = 0;
  std::string comm;
  std::string title;  // the process title of the task (tid, start); "" when unknown
  PolicyKind policy_kind = PolicyKind::Node;
  std::string policy;
  int64_t policy_generation = 0;
  std::string role;
  std::string role_source;  // Origin::role_source: "registered role decode", ...
  Strategy strategy = Strategy::ExactTid;
  RuntimeValue value;
};

// One entry of the kernel's policy map as last observed or written.
struct ActualEntry {
  uint32_t tid = 0;
  RuntimeValue value;
  bool operator==(const ActualEntry&) const = default;
};

struct PlanOp {
  enum class Kind : uint8_t { Add, Update, Delete };
  Kind kind = Kind::Add;
  uint32_t tid = 0;
  RuntimeValue value;       // the value to write (Add/Update); the value expected (Delete)
  std::string reason;
};
const char* to_string(PlanOp::Kind k);

struct Plan {
  std::vector<PlanOp> ops;
  // Unexplained entries kept because the desired state is still loading after a restart.
  std::vector<uint32_t> deferred_deletes;
};

}  // namespace c2c
