// Roles found from activity, with a confidence (issue 46 item 4; spec/state-machine.md §11). A pure
// function of one activity window (core/activity.hpp: who woke whom, how each thread ran) to at
// most one proposed role per thread, each with a confidence in [0, 1] (in per mille: exact, no
// floating point to differ between builds) and a reason that names its figures. Deterministic: the
// same window in any order gives the same proposals (CLS-1). Whether a proposal acts is decided
// by proposal_outcome(): a registered role or an explicit selector always wins (CLS-2), and only
// `spec.classify: apply` acts, within the policy's controller (CLS-3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/activity.hpp"

namespace c2c {

enum class ExecClass : uint8_t;  // core/model.hpp

// spec.classify of a policy: propose (the default: proposals are shown in preview and explain),
// apply (also acted on, within spec.controller), off (no proposals).
enum class ClassifyMode : uint8_t { Propose = 0, Apply = 1, Off = 2 };
const char* to_string(ClassifyMode m);
std::optional<ClassifyMode> classify_mode_from_string(const std::string& s);

enum class ProposedRole : uint8_t {
  CriticalPath = 0,    // wakes, or is woken by, one thread on most of that thread's wakeups
  BackgroundLike = 1,  // runs (nearly) all the window and wakes nobody
};
const char* to_string(ProposedRole r);
// The class a proposal stands for: latency-critical, background.
ExecClass proposed_class(ProposedRole r);

struct RoleProposal {
  uint32_t tid = 0;
  ProposedRole role = ProposedRole::CriticalPath;
  uint32_t confidence_permille = 0;  // 0..1000
  uint32_t counterpart = 0;          // critical path: the thread on the other end of the edge; else 0
  std::string reason;                // one line with the figures that decided
  bool operator==(const RoleProposal&) const = default;
};

// The rules' thresholds (spec/state-machine.md §11).
inline constexpr uint64_t kStepMinWakeups = 8;         // a wakee woken fewer times has no "every step"
inline constexpr uint32_t kStepSharePermille = 500;    // the edge carries at least half its wakeups
inline constexpr uint64_t kStepFullEvidence = 32;      // wakeups at which the count no longer lowers the confidence
inline constexpr uint32_t kBusySharePermille = 800;    // CPU share of the window for background-like
inline constexpr uint64_t kBusyFullEvidenceNs = 1'000'000'000;  // window length at full confidence

// num / den in per mille, floor, at most 1000 (0 when den is 0). No overflow for any u64.
uint32_t permille(uint64_t num, uint64_t den);

// At most one proposal per thread of the window, sorted by tid. Rules, for each thread:
//  critical path: an edge N -> L carries c of L's w wakeups (w >= kStepMinWakeups) with
//    c / max(w, c) >= kStepSharePermille: both N and L are on the critical path, confidence
//    share * min(1, w / kStepFullEvidence);
//  background-like: CPU share run_ns / window >= kBusySharePermille, no wake given and no edge out,
//    confidence share * min(1, window / kBusyFullEvidenceNs).
// A thread with several candidates keeps the highest confidence; ties: critical path first, then
// the lowest counterpart tid.
std::vector<RoleProposal> propose_roles(const ActivityWindow& w);

// What a proposal does for a thread (CLS-2, CLS-3), first that applies:
enum class ProposalOutcome : uint8_t {
  Off = 0,                        // classify: off (no proposals are made)
  OutrankedByRegisteredRole = 1,  // the thread registered a role: the role wins
  OutrankedBySelector = 2,        // the policy's explicit selector matches the thread: it wins
  Applied = 3,                    // classify: apply: the controller acts on (critical path) or keeps out (background) the thread
  Shown = 4,                      // classify: propose: shown in preview and explain, not acted on
};
const char* to_string(ProposalOutcome o);
struct ThreadRoleFacts {
  bool registered_role = false;    // the task has a registered (or pod-annotation) role
  bool explicit_selector = false;  // a policy's selector (commandRegex, processRegex, registeredRole) matches it
};
ProposalOutcome proposal_outcome(ClassifyMode mode, const ThreadRoleFacts& facts);

// The threads a policy's controller acts on once its proposals are resolved (CLS-3): `members`
// (the threads its selector gives it) plus the critical-path proposals whose outcome is Applied;
// a background-like proposal never adds a thread, and no proposal removes a member (a member is
// matched by a selector, which wins). Sorted, each once. The threads get exactly the
// controller's level action (controller.hpp, CTL-1): a proposal never brings a class or boost of
// its own.
std::vector<uint32_t> controller_members(std::vector<uint32_t> members, const std::vector<RoleProposal>& proposals,
                                         const std::vector<ProposalOutcome>& outcomes);

// "critical-path, confidence 0.93: <reason>" (explain and preview print this).
std::string describe(const RoleProposal& p);

}  // namespace c2c
