// The transition function: one handler per event kind (spec/state-machine.md, "Events"), called by
// CoreImpl::apply (apply.cpp). Every handler validates first and mutates only after every check
// passed, so an Invalid or Ignored input leaves the state exactly as it was.
// Each family of event kinds has its own file (apply_<family>.cpp), so that a change to one
// handler, a seeded bug of tests/mutants among them, recompiles that family only.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>

#include "core/core_impl.hpp"

namespace c2c {

struct EventHandlers {
  CoreImpl& s;
  // The event's patterns as its validation compiled them (CoreImpl::apply): stored, not compiled again.
  const CompiledPatterns* compiled = nullptr;

  static ApplyResult invalid(std::string field, std::string message) {
    ApplyResult r;
    r.status = ApplyResult::Status::Invalid;
    r.field = std::move(field);
    r.message = std::move(message);
    return r;
  }
  static ApplyResult ignored(std::string message) {
    ApplyResult r;
    r.status = ApplyResult::Status::Ignored;
    r.message = std::move(message);
    return r;
  }
  static ApplyResult invalid(const FieldError& e) { return invalid(e.field, e.message); }

  // apply_node_and_pods.cpp
  ApplyResult operator()(const NodeInfoEvent& ev);
  ApplyResult operator()(const NodeLabels& ev);
  ApplyResult operator()(const PodBound& ev);
  ApplyResult operator()(const PodRemoved& ev);
  void detach_pod(const Pod& p);
  void reresolve(const std::unordered_set<uint32_t>& tids);

  // apply_claims.cpp
  ApplyResult operator()(const ClaimAllocated& ev);
  ApplyResult operator()(const ClaimUpdated& ev);
  ApplyResult operator()(const ClaimDeallocated& ev);
  ApplyResult upsert_claim(const Claim& c);
  void add_dra_selected(std::unordered_set<uint32_t>& affected) const;

  // apply_tasks.cpp
  ApplyResult operator()(const TaskSeen& ev);
  ApplyResult operator()(const TaskRenamed& ev);
  ApplyResult operator()(const TaskExited& ev);
  ApplyResult operator()(const TaskRoleSet& ev);

  // apply_policies.cpp
  ApplyResult operator()(const DraPolicyUpsert& ev);
  ApplyResult operator()(const NodePolicyUpsert& ev);
  ApplyResult operator()(const PolicyDelete& ev);
  ApplyResult operator()(const PreviewAck& ev);
  template <class P>
  std::optional<ApplyResult> policy_generation(PolicyKind kind, P& p, const P* existing);
  std::unordered_set<uint32_t> dra_reach(const DraExecutionPolicy& p) const;

  // apply_daemon.cpp
  ApplyResult operator()(const TimeAdvance& ev);
  ApplyResult operator()(const DaemonRestart& ev);
  ApplyResult operator()(const SyncComplete&);
  ApplyResult operator()(const BpfObserved& ev);
  ApplyResult operator()(const BpfSynced&);
  void forget_reasons();

  // apply_controller.cpp
  ApplyResult operator()(const ControllerWindow& ev);
};

}  // namespace c2c
