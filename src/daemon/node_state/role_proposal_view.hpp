// What the roles proposed from one activity window mean on this node (issue 46 item 4;
// spec/state-machine.md §11): each proposal with the policy whose `spec.classify` decides it and
// its outcome (proposal_outcome: a registered role or the policy's explicit selector wins). Kept
// apart from explain and preview so that they only print it. A pure function of the core's state
// and the window: the daemon's activity gathering (controller/activity_windows.*) feeds it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "core/role_proposals.hpp"

namespace c2c::daemon {

struct ProposalView {
  RoleProposal proposal;
  ProposalOutcome outcome = ProposalOutcome::Shown;
  PolicyKind kind = PolicyKind::Node;
  std::string policy;  // the policy whose threads these are: the thread's own entry's, else its process's
  ClassifyMode mode = ClassifyMode::Propose;  // that policy's spec.classify
  ThreadRoleFacts facts;                      // what outranks a proposal for this thread
  uint32_t tgid = 0;
  uint64_t start = 0;  // the task's start as the core knows it (0: not known to the core)
  // "proposed: critical-path (latency-critical), confidence 0.93: tid 7 wakes ... [NodeSchedulingPolicy/x, classify: propose]"
  std::string text;
};

// The `spec.classify` of the policy kind/name as the core holds it (nullopt: no such policy).
std::optional<ClassifyMode> classify_of(const Core& core, PolicyKind kind, const std::string& name);

// Proposals only for a policy's threads: a thread with an entry (its policy), or a thread of a
// process one of whose threads in the window has an entry (that policy; the lowest such tid's).
// Threads of no policy and policies with `classify: off` get none. Sorted by tid.
std::vector<ProposalView> view_proposals(const Core& core, const ActivityWindow& w);

// The same proposal under another spec.classify (preview of a new version of the policy):
// nullopt under `off` (no proposal), else its outcome and text for `mode`.
std::optional<ProposalView> under_mode(ProposalView v, ClassifyMode mode);

}  // namespace c2c::daemon
