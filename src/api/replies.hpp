// The node API's replies as a client sees them (issue 44 item 3): plain C++ mirrors of the wire
// messages of spec/claim2core.proto, so no front end (CLI, REST, k8s feed) names a protobuf type.
// Field names are the proto's; a policy is the core's model (AnyPolicy). Each reply also carries
// `json`, the wire message as JSON (api/proto_json.hpp: lowerCamelCase, every field, names as
// text), which `-o json`/`-o yaml` and the REST bodies print: made once, in
// src/api/replies_proto.cpp, where the message is converted.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/node_api.hpp"
#include "core/core.hpp"

namespace c2c::reply {


// "DRAExecutionPolicy", "NodeSchedulingPolicy"; "Unknown" for an unspecified kind (nullopt).
std::string kind_name(const std::optional<PolicyKind>& k);
// Pending, Sent, Applied, Failed; Unknown for an unspecified state.
const char* state_name(node::IntentState s);

struct Intent {
  std::optional<PolicyKind> kind;  // nullopt: unspecified on the wire
  std::string policy;
  int64_t policy_generation = 0;
  std::string node;
  node::IntentState state = node::IntentState{0};  // 0: unspecified
  std::string reason;
  uint32_t matched_tasks = 0;
  uint32_t applied_entries = 0;
  std::vector<std::string> warnings;
  int64_t updated_unix_ms = 0;
  nlohmann::json json;
};

struct RuntimeEntry {
  uint32_t tid = 0;
  uint64_t start = 0;
  uint32_t tgid = 0;
  uint64_t generation = 0;
  std::string execution_class;
  uint64_t slice_ns = 0, boost_until_ns = 0, max_boost_ns = 0;
  std::string allowed_cpus, preferred_cpus;
  std::vector<std::string> flags;
};

struct Upsert {
  int64_t policy_generation = 0;
  uint64_t node_generation = 0;
  std::vector<std::string> warnings;
  bool ignored = false;
  std::string message;
  std::optional<Intent> intent;
  std::string node;
  bool node_selected = false;
  std::string node_not_selected;
  nlohmann::json json;
};

struct Delete {
  uint64_t node_generation = 0;
  bool ignored = false;
  std::string message;
  nlohmann::json json;
};

struct MatchedTask {
  uint32_t tid = 0;
  uint64_t start = 0;
  uint32_t tgid = 0;
  std::string comm, strategy, title, role, role_source;  // comm, title: bytes from the host
  std::optional<RuntimeEntry> intended;  // nullopt: the policy loses a conflict for this task
  std::optional<RuntimeEntry> actual;    // nullopt: nothing in the kernel map
};

struct Conflict {
  uint32_t tid = 0;
  uint64_t start = 0;
  std::string winner;
  std::vector<std::string> losers;
  std::string rule;
};

// A role proposed from activity (RoleProposal).
struct Proposal {
  uint32_t tid = 0;
  std::string role, execution_class;
  uint32_t confidence_permille = 0;
  uint32_t counterpart = 0;
  std::string reason, outcome;
  std::optional<PolicyKind> policy_kind;
  std::string policy, classify, text;
  uint64_t window_ns = 0;
};

struct Preview {
  int64_t policy_generation = 0;
  uint64_t node_generation = 0;
  std::vector<MatchedTask> matched;
  std::vector<Conflict> conflicts;
  std::vector<std::string> warnings;
  bool acknowledged = false;
  std::string policy;  // "<kind>/<name>"
  std::string node;
  std::vector<Proposal> proposals;  // the roles proposed for its threads (issue 46 item 4)
  nlohmann::json json;
};

struct Task {
  uint32_t tid = 0;
  uint64_t start = 0;
  uint32_t tgid = 0;
  std::string comm, cgroup, pod_uid, title;  // comm, cgroup, title: bytes from the host
  std::string policy, role, strategy, execution_class;
  std::vector<std::string> outranked;
  bool applied = false;
  nlohmann::json json;
};

struct Binding {  // ClaimDeviceBinding
  std::string claim_uid;
  int64_t claim_generation = 0;
  std::string pod_uid, node_name, driver, pool, device, share_id;
  std::vector<int32_t> numa_nodes;
  std::string pcie_root, pci_bus_id, cpus, request, claim_namespace, claim_name, pod_name;
  nlohmann::json json;
};

struct PodInfo {
  std::string uid, namespace_, name;
  std::map<std::string, std::string> labels, claims;
  std::string cgroup, cpus;
  std::map<std::string, std::string> task_roles;
  nlohmann::json json;
};

struct Bindings {
  std::vector<Binding> bindings;
  std::vector<PodInfo> pods;
  nlohmann::json json;
};

struct Policies {
  std::vector<AnyPolicy> policies;
  std::map<std::string, std::string> node_not_selected;  // node policy name -> the first unmet selector
  nlohmann::json json;
};

struct ClaimRef {
  std::string uid;
  int64_t generation = 0;
};

struct Lineage {
  std::vector<ClaimRef> claims;
  std::string pod_uid, cgroup;  // cgroup: bytes
  uint32_t tid = 0;
  uint64_t start = 0;
  uint32_t tgid = 0;
  std::string comm;  // bytes
  std::optional<PolicyKind> policy_kind;
  std::string policy;
  int64_t policy_generation = 0;
  std::string role, strategy;
  std::optional<RuntimeEntry> entry;
  std::string title, role_source;  // title: bytes
};

// One decision of a policy's controller (ControllerDecision, issue 46): a window's, with what the
// daemon measured, or a level change a tick forced.
struct Decision {
  int64_t time_unix_ms = 0;
  uint64_t core_time_ns = 0;
  std::optional<PolicyKind> policy_kind;
  std::string policy;
  uint32_t from_level = 0, to_level = 0;
  bool has_signal = false;
  uint64_t run_delay_p99_ns = 0;  // when has_signal
  double cpu_share_mean = 0, cpu_share_max = 0;
  uint32_t threads_ran = 0;
  std::vector<uint32_t> tids;
  std::string rule, reason, no_signal;
  std::optional<double> cpu_pressure_pct;  // the cgroups' cpu.pressure `some` over the window, percent
  std::string pressure_cgroup;
  nlohmann::json json;
};

struct ControllerLevel {
  std::optional<PolicyKind> policy_kind;
  std::string policy;
  uint32_t level = 0, max_level = 0;
  nlohmann::json json;
};

struct Decisions {  // ListDecisionsResponse
  std::vector<Decision> decisions;  // oldest first
  std::vector<ControllerLevel> controllers;
  nlohmann::json json;
};

// Boost inheritance as the scheduler counted it for one thread (issue 43 item 3).
struct BoostInheritance {
  uint64_t runs = 0;
  uint32_t from_tid = 0;
  uint32_t depth = 0;
};

struct Explain {
  std::optional<BoostInheritance> inherited;  // runs boosted as a boosted thread's wakee, if any
  std::optional<Lineage> lineage;
  bool found = false;
  nlohmann::json json;
  // The controller acting on the thread, when its policy has one, and its last decisions about
  // the thread, newest last (issue 46).
  std::optional<ControllerLevel> controller;
  std::vector<Decision> decisions;
  std::vector<Proposal> proposals;  // the role proposed for it from activity (issue 46 item 4)
};

struct Status : node::NodeStatus {
  nlohmann::json json;
};

struct Change {  // ChangeEvent
  uint64_t node_generation = 0;
  std::string event_kind;
  std::vector<uint32_t> changed_tids;
  std::vector<Intent> intents;
  nlohmann::json json;
};

struct Role {  // RegisterTaskRoleResponse
  uint32_t tid = 0;
  uint64_t start = 0;
  uint32_t tgid = 0;
  std::string role;
  bool changed = false;
  uint64_t node_generation = 0;
  nlohmann::json json;
};

}  // namespace c2c::reply
