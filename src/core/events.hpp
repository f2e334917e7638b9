// Every input of the state machine is one of these events (spec/trace-format.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/model.hpp"
#include "core/runtime_entry.hpp"

namespace c2c {

struct NodeInfoEvent { NodeInfo node; };
struct ClaimAllocated { Claim claim; };
struct ClaimUpdated { Claim claim; };
struct ClaimDeallocated { std::string uid; int64_t generation = 0; };
struct PodBound { Pod pod; };
struct PodRemoved { std::string uid; };
struct TaskSeen { Task task; };
struct TaskRenamed { TaskKey key; std::string comm; };
struct TaskExited { TaskKey key; };
struct DraPolicyUpsert { DraExecutionPolicy policy; };
struct NodePolicyUpsert { NodeSchedulingPolicy policy; };
struct PolicyDelete { PolicyKind kind = PolicyKind::Node; std::string name; int64_t generation = 0; };
// A preview acknowledged by the operator: a requirePreview policy goes live only after a preview
// at its current generation.
struct PreviewAck { PolicyKind kind = PolicyKind::Dra; std::string name; int64_t generation = 0; };
// max_renewals bounds the leases one step renews (the earliest due first, in (renew_at, tid)
// order); due leases past it wait for a later step, except those that have run out, which are
// always renewed (INV-8). Unset: every due lease (spec/state-machine.md, "Boost leases").
struct TimeAdvance {
  TimeAdvance() = default;
  explicit TimeAdvance(Nanos at, std::optional<uint32_t> max = std::nullopt) : now(at), max_renewals(max) {}
  Nanos now = 0;
  std::optional<uint32_t> max_renewals;
};
// The node's labels changed (the Kubernetes Node object, or the daemon config on a host without
// Kubernetes): replaces NodeInfo.labels only and re-derives the node policies whose selection
// changes; the rest of the node (name, topology) is unchanged.
struct NodeLabels { std::map<std::string, std::string> labels; };
// The daemon restarted: observed state is gone; durable state (policies, preview acks, tombstones,
// generation) survives. persisted_generation is what the generation file held (0: trust the core).
struct DaemonRestart { uint64_t persisted_generation = 0; };
// The observers finished their initial listing after a restart: pruning may start (INV-7).
struct SyncComplete {};
// What the kernel's policy map holds right now (replaces the core's view of actual state).
struct BpfObserved { std::vector<ActualEntry> entries; };
// The mirror applied the current plan successfully: actual := what the plan produces.
struct BpfSynced {};
// A workload registered (or, with an empty role, unregistered) the role of one of its threads
// (issue #14: RegisterTaskRole). Keyed by (tid, start): it applies to the live task only, and a
// task that reuses the tid starts without it (INV-2).
struct TaskRoleSet {
  TaskKey key;
  std::string role;
  bool operator==(const TaskRoleSet&) const = default;
};

// One signal window of a policy's controller (issue 46; spec/state-machine.md, "The controller"):
// the p99 the window measured for the threads the controller acts on, or none (the source had
// nothing: no thread ran, the adapter did not report). It ends at the core's current time; the
// core decides the policy's new level from it (controller.hpp) and reports the decision in
// ApplyResult::decisions, so a trace of these events replays every decision exactly.
struct ControllerWindow {
  PolicyKind kind = PolicyKind::Node;
  std::string policy;
  std::optional<Nanos> signal;
  bool operator==(const ControllerWindow&) const = default;
};

using Event = std::variant<NodeInfoEvent, ClaimAllocated, ClaimUpdated, ClaimDeallocated, PodBound,
                           PodRemoved, TaskSeen, TaskRenamed, TaskExited, DraPolicyUpsert,
                           NodePolicyUpsert, PolicyDelete, PreviewAck, TimeAdvance, DaemonRestart,
                           SyncComplete, BpfObserved, BpfSynced, TaskRoleSet, NodeLabels, ControllerWindow>;

// The trace-format name of an event ("claim_allocated", ...).
const char* event_kind(const Event& e);
// The tid a task event is about (seen, renamed, exited, role set); 0 for any other event.
uint32_t task_event_tid(const Event& e);

}  // namespace c2c
