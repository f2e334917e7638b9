// Entities of the claim-to-task state machine (spec/state-machine.md, "Entities").
// Plain values: no I/O, no clocks, no Linux or Kubernetes types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/controller.hpp"
#include "core/role_proposals.hpp"
#include "core/cpuset.hpp"
#include "core/label_selector.hpp"

namespace c2c {

using Nanos = uint64_t;  // CLOCK_BOOTTIME nanoseconds; time is always an input to the core

// A task's identity: the global TID plus its start time in clock ticks (/proc stat field 22).
struct TaskKey {
  uint32_t tid = 0;
  uint64_t start = 0;
  bool operator==(const TaskKey&) const = default;
  auto operator<=>(const TaskKey&) const = default;
};

// One device of a claim's status.allocation.devices.results, enriched with inventory topology.
struct AllocatedDevice {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  std::string share_id;          // empty when the device is not shared
  std::vector<int> numa_nodes;   // from slice attributes (may be empty)
  std::string pcie_root;         // resource.kubernetes.io/pcieRoot
  std::string pci_bus_id;        // resource.kubernetes.io/pciBusID
  std::optional<CpuSet> cpus;    // CPUs a CPU driver allocated with this device
  bool operator==(const AllocatedDevice&) const = default;
};

// A ResourceClaim with status.allocation, as the node sees it.
struct Claim {
  std::string uid;
  int64_t generation = 0;
  std::string node;                     // the node the allocation is for
  std::vector<AllocatedDevice> devices;
  std::vector<std::string> reserved_for;  // pod UIDs from status.reservedFor
  bool operator==(const Claim&) const = default;
};

struct Pod {
  std::string uid;
  std::string namespace_;
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> claims;  // pod claim name (spec.resourceClaims[].name) -> claim UID
  std::string cgroup;                         // pod-level cgroup path
  std::optional<CpuSet> cpuset;               // effective cpuset envelope of the pod cgroup
  // Roles from the pod's annotation claim2core.io/task-roles (issue #14): role name -> RE2 on the
  // thread's comm. A thread of the pod that registered no role takes the first role (by name)
  // whose pattern matches its comm, so unmodified containers can be served.
  std::map<std::string, std::string> task_roles;
  bool operator==(const Pod&) const = default;
};

struct Task {
  TaskKey key;
  uint32_t tgid = 0;
  std::string comm;                 // /proc/<tgid>/task/<tid>/comm
  std::string cgroup;               // the task's cgroup path
  // The observer's id of that cgroup (the kernel's cgroup id), 0 when unknown. Not part of the
  // task's identity or of any decision: a known id lets the core find the interned path without
  // hashing it into and comparing it with the pool's copy (a cache miss or two per task event at
  // 100k tasks, issue #13); the path still decides (spec/state-machine.md, "Cgroup ids").
  uint64_t cgroup_id = 0;
  std::string role;                 // registered role hint (TaskRoleSet), empty when none
  std::optional<CpuSet> cpuset;     // effective cpuset of the task's cgroup
  // The process title: argv[0] of /proc/<tgid>/cmdline, which setproctitle() rewrites (stock vLLM:
  // "VLLM::EngineCore_DP0" while every thread's comm reads "VLLM::EngineCor"). Empty: unknown.
  std::string title;
  bool operator==(const Task&) const = default;
};

// Node identity and topology: inputs, so that the core stays free of sysfs.
struct NodeInfo {
  std::string name;
  std::map<std::string, std::string> labels;
  CpuSet cpus;                              // online CPUs
  std::map<int, CpuSet> numa_cpus;          // NUMA node -> CPUs
  std::map<std::string, CpuSet> pcie_root_cpus;  // PCIe root -> local CPUs
  Nanos default_max_boost = 30'000'000'000ull;   // bound for node policies (INV-8)
  bool operator==(const NodeInfo&) const = default;
};

enum class ExecClass : uint8_t {
  Unmatched = 0,
  LatencyCritical = 1,
  CommunicationProgress = 2,
  Throughput = 3,
  Background = 4,
  Normal = 5,
};
const char* to_string(ExecClass c);
std::optional<ExecClass> exec_class_from_string(const std::string& s);
bool class_boosts(ExecClass c);
// Class defaults (spec/state-machine.md, "Execution classes"): short slices where latency matters,
// long ones where throughput does; normal tasks get the scheduler's default for unmatched ones.
// bpf/claim2core_abi.hpp checks them against the scheduler's (bpf/claim2core_abi.h).
constexpr Nanos class_default_slice(ExecClass c) {
  switch (c) {
    case ExecClass::LatencyCritical: return 2'000'000;
    case ExecClass::CommunicationProgress: return 1'000'000;
    case ExecClass::Throughput: return 20'000'000;
    case ExecClass::Background: return 10'000'000;
    case ExecClass::Normal: return 3'000'000;
    case ExecClass::Unmatched: return 0;
  }
  return 0;
}

// Slice bounds for every policy (negative or absurd slices are refused).
inline constexpr Nanos kMinSliceNs = 10'000;         // 10 us
inline constexpr Nanos kMaxSliceNs = 100'000'000;    // 100 ms
inline constexpr Nanos kMinBoostNs = 1'000'000;      // 1 ms
inline constexpr Nanos kMaxBoostNs = 3'600'000'000'000ull;  // 1 h
// Largest claim, policy and node generation (2^53: exact in every JSON reader). Inputs above it are
// refused, so that "the next generation" can never wrap (INV-4) and every generation survives a
// round trip through JSON.
inline constexpr int64_t kMaxGeneration = int64_t{1} << 53;
// A process title longer than this is cut by the host plane (setproctitle titles are short).
inline constexpr size_t kMaxTitleBytes = 256;
// Boost inheritance (issue 43 item 3, spec.boost.inherit.depth): a wakee of a boosted thread gets a
// bounded boost for its next run; the depth is 1 (the boosted thread's wakees) or 2 (their wakees
// too), never more (the scheduler's C2C_INHERIT_MAX_DEPTH); 0: off, the default.
inline constexpr uint32_t kMaxBoostInheritDepth = 2;
// A registered role (TaskRoleSet, Task.role, a pod's task-roles annotation): a short name, no
// whitespace, so that the role line protocol (spec/daemon.md) needs no quoting.
inline constexpr size_t kMaxRoleBytes = 63;

struct TaskRole {
  TaskRole() = default;
  // The process-title pattern comes last and is optional, so roles written before it existed read
  // the same.
  TaskRole(std::string name_, std::string registered, std::string comm, ExecClass cls, std::string process = {})
      : name(std::move(name_)), registered_role(std::move(registered)), comm_regex(std::move(comm)), exec_class(cls),
        process_regex(std::move(process)) {}
  std::string name;
  std::string registered_role;  // selector.registeredRole
  std::string comm_regex;       // selector.commandRegex (RE2), optional
  ExecClass exec_class = ExecClass::Normal;
  std::string process_regex;    // selector.processRegex (RE2) on the process title, optional
  uint32_t boost_inherit_depth = 0;  // boost.inherit.depth: 0 off, 1 or 2 (a boosting class only)
  bool operator==(const TaskRole&) const = default;
};

struct DraExecutionPolicy {
  std::string name;
  int64_t generation = 0;  // metadata.generation; must increase on every change
  std::map<std::string, std::string> match_labels;
  std::vector<std::string> resource_claims;  // pod claim names
  bool respect_allocated_cpuset = true;
  bool prefer_same_numa = false;
  bool prefer_same_pcie_root = false;
  std::vector<TaskRole> task_roles;
  bool require_preview = false;
  Nanos max_boost = 30'000'000'000ull;
  bool fail_closed_on_stale_claim = true;
  std::string fallback = "default-scheduler";
  // spec.controller (issue 46): off when absent. Acts on the threads of its role (controller.hpp).
  std::optional<ControllerSpec> controller;
  // spec.classify (issue 46 item 4): roles proposed from activity are shown (propose, the
  // default), also acted on within the controller (apply), or not made (off). role_proposals.hpp.
  ClassifyMode classify = ClassifyMode::Propose;
  bool operator==(const DraExecutionPolicy&) const = default;
};

struct DraSelector {
  std::string driver;
  std::string pool;    // empty: any
  std::string device;  // empty: any
  bool operator==(const DraSelector&) const = default;
};

struct NodeSchedulingPolicy {
  std::string name;
  int64_t generation = 0;
  std::vector<std::string> node_names;
  std::map<std::string, std::string> node_selectors;
  std::vector<DraSelector> dra_selectors;
  std::string command_regex;  // on the thread's comm (RE2); may be empty when process_regex is set
  int32_t priority = 0;
  Nanos execution_time = 0;  // custom slice in ns; 0 = class default
  std::string process_regex;  // on the process title (RE2); ANDed with command_regex when both are set
  uint32_t boost_inherit_depth = 0;  // spec.boost.inherit.depth: 0 off, 1 or 2 (priority > 0 only)
  // nodeSelectors.matchExpressions (Kubernetes label-selector semantics), ANDed with the
  // node_selectors map (the simple form or nodeSelectors.matchLabels).
  std::vector<LabelRequirement> node_selector_expressions;
  // spec.controller (issue 46): off when absent. Acts on the threads the policy matches.
  std::optional<ControllerSpec> controller;
  // spec.classify (issue 46 item 4), as for DRA policies.
  ClassifyMode classify = ClassifyMode::Propose;
  bool operator==(const NodeSchedulingPolicy&) const = default;
};

// Either kind of policy, where code handles both alike (codecs, the node API, durable state).
using AnyPolicy = std::variant<DraExecutionPolicy, NodeSchedulingPolicy>;

enum class PolicyKind : uint8_t { Dra = 0, Node = 1 };
const char* to_string(PolicyKind k);  // "DRAExecutionPolicy" | "NodeSchedulingPolicy": the one spelling

// A policy's identity, whichever its kind (the one definition every layer uses).
PolicyKind kind_of(const AnyPolicy& p);
const std::string& name_of(const AnyPolicy& p);
int64_t generation_of(const AnyPolicy& p);

}  // namespace c2c
