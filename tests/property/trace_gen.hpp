// Generation of event traces over a deliberately SMALL universe, so that things collide: 3 claims,
// 3 pods (one nested inside another, one whose cgroup is a string prefix of another), 7 tids with
// reuse, comms that do and do not match ^EngineCore(_DP[0-9]+)?$, 2 node and 2 DRA policies with
// overlapping selectors, cpusets that sometimes lie outside the envelope, restarts with a lagging
// or a leading persisted generation, foreign and garbage kernel entries, stale and duplicate
// inputs and some invalid ones. Boundaries are drawn on purpose (issue 45): generations at 2^53 - 1,
// 2^53 and 2^53 + 1 (upserts, restarts, kernel entries at the node's own G), CPUs in every 64-bit
// word of the mask (the trace's layout), and live pods rebound to their other cgroup; the
// differential counts each hit (Coverage::boundaries) and the run fails when one is never hit.
//
// A generated step is abstract (a kind and eight small numbers); concretize() turns it into an
// Event using the reference model's current state (e.g. "the claim's next generation", "the live
// task's start"), so that a shrunk trace stays meaningful: removing a step re-targets later ones.
#pragma once

#include <rapidcheck.h>

#include <array>
#include <cstdint>
#include <ostream>
#include <vector>

#include "core/events.hpp"
#include "naive_model.hpp"

namespace c2c::property {

enum class StepKind : uint8_t {
  TaskSeen, TaskRenamed, TaskExited, ClaimAllocated, ClaimUpdated, ClaimDeallocated, PodBound,
  PodRemoved, DraUpsert, NodeUpsert, PolicyDelete, Preview, TimeAdvance, Restart, SyncComplete,
  BpfObserved, BpfSynced, NodeInfo, TaskRoleSet, NodeLabels, PodRebound, kCount
};

struct Step {
  StepKind kind = StepKind::TaskSeen;
  std::array<uint8_t, 8> p{};
};

void showValue(const Step& s, std::ostream& os);

rc::Gen<Step> gen_step();
rc::Gen<std::vector<Step>> gen_trace();
// Steps that build a DRA entry whose CPUs are an intersection (claim CPUs within the pod's), put
// before the generated ones in a quarter of the traces.
std::vector<Step> dra_world_steps();

// C2C_PROPERTY_OPEN_FINDINGS=1 also generates the inputs of open findings (findings/*.jsonl).
bool explore_open_findings();

// The node every trace starts from (the daemon always learns its node first), with its CPUs in one
// of the layouts of the 256-CPU space, drawn by `draw` (0-7; 0: CPUs 0-7; the others reach the
// upper words, the last word's layouts twice as often).
Event initial_node_event(uint8_t draw = 0);
Event concretize(const Step& s, const naive::NaiveModel& m);

}  // namespace c2c::property
