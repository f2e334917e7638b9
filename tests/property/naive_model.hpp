// A deliberately naive reference model of the claim-to-task state machine, written from
// spec/state-machine.md only (never from src/core/*.cpp). It keeps plain maps of claims, pods,
// tasks and policies and, after every event, recomputes the whole desired table from scratch.
// It shares only the plain data types of the core's headers (events, entities, RuntimeValue) so
// that the two can be compared field by field; set algebra, matching, conflicts, leases,
// generations and plans are all re-implemented here.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/events.hpp"
#include "core/model.hpp"
#include "core/runtime_entry.hpp"

namespace c2c::naive {

enum class Status : uint8_t { Applied, Ignored, Invalid };

struct Outcome {
  Status status = Status::Applied;
  std::string field;    // Invalid: the offending field
  std::string message;  // Ignored/Invalid: why
};

// One desired entry with its lineage, in the shape of c2c::Lineage plus the derivation epoch.
struct Entry {
  RuntimeValue value;
  PolicyKind kind = PolicyKind::Node;
  std::string policy;
  int64_t policy_generation = 0;
  std::string pod_uid;
  std::vector<ClaimRef> claims;
  std::string role;
  std::string role_source;  // "registered role r" / "pod annotation role r" when matched by registeredRole
  Strategy strategy = Strategy::ExactTid;
  std::string cgroup;
  std::string comm;
  uint32_t epoch = 0;
};

// Why an entry left the desired table: only the invariant tag is specified.
enum class RemovalTag : uint8_t { Other, ClaimDeallocated /*INV-1*/, Restart /*INV-7*/ };

struct Op {
  PlanOp::Kind kind = PlanOp::Kind::Add;
  uint32_t tid = 0;
  RuntimeValue value;
  bool tid_reused = false;                    // Update whose start differs (INV-2)
  std::optional<RemovalTag> removal;          // Delete: recorded reason; nullopt = unexplained (INV-5)
};

// §3 Conflicts: a task matched by more than one policy.
struct NaiveConflict {
  std::string winner;               // "<kind>/<name>"
  std::vector<std::string> losers;  // in resolution order
  std::string rule;                 // the rule that put the winner before the first loser
  bool operator==(const NaiveConflict&) const = default;
};

struct NaivePlan {
  std::vector<Op> ops;  // sorted by tid
  std::vector<uint32_t> deferred;
};

// Where the core and the spec disagree on a point the lead has not decided yet (findings/), the
// model follows the core by default so that the property keeps guarding everything else;
// `spec_strict` (C2C_PROPERTY_OPEN_FINDINGS=1) follows the spec's letter instead.
struct Options {
  bool spec_strict = false;
};

class NaiveModel {
 public:
  explicit NaiveModel(Options o = {}) : opt_(o) {}
  Outcome apply(const Event& e);
  NaivePlan plan() const;
  // Conflicts of the current state, recomputed from scratch (tid -> conflict).
  std::map<uint32_t, NaiveConflict> conflicts() const;
  // §6 preview of a stored policy: the tasks it matches (gate ignored) -> whether it wins there.
  std::map<uint32_t, bool> preview_matches(PolicyKind kind, const std::string& name) const;

  // Read access for the generator and the comparison.
  uint64_t generation() const { return g_; }
  uint32_t epoch() const { return epoch_; }
  Nanos now() const { return now_; }
  bool loading() const { return loading_; }
  const NodeInfo& node() const { return node_; }
  const std::map<uint32_t, Entry>& desired() const { return desired_; }
  const std::map<uint32_t, RuntimeValue>& actual() const { return actual_; }
  const std::map<uint32_t, Task>& tasks() const { return tasks_; }
  const std::map<std::string, Claim>& claims() const { return claims_; }
  const std::map<std::string, Pod>& pods() const { return pods_; }
  const std::map<std::string, DraExecutionPolicy>& dra() const { return dra_; }
  const std::map<std::string, NodeSchedulingPolicy>& nsp() const { return nsp_; }
  // Acknowledged preview generation per policy (durable, §2).
  const std::map<std::pair<PolicyKind, std::string>, int64_t>& previewed() const { return previewed_; }
  // Tombstones of deallocated claims: uid -> generation (§2).
  const std::map<std::string, int64_t>& claim_tombstones() const { return claim_deallocated_; }
  // Tids whose desired entry the last applied event added, changed or removed (sorted).
  const std::vector<uint32_t>& last_changed() const { return last_changed_; }
  int64_t claim_high_water(const std::string& uid) const;
  int64_t policy_high_water(PolicyKind k, const std::string& name) const;
  std::optional<int64_t> policy_generation(PolicyKind k, const std::string& name) const;

 private:
  struct Candidate {
    Entry entry;
    int32_t priority = 0;
  };

  // Event handlers: mutate *this (a scratch copy) and return the outcome.
  Outcome on(const NodeInfoEvent& e);
  Outcome on(const NodeLabels& e);
  // Controller windows change no entry (the controller's levels are not applied to entries yet):
  // only the outcome is modelled, the decisions are tests/property/controller_test.cpp's.
  Outcome on(const ControllerWindow& e);
  Outcome on_claim(const Claim& c);
  Outcome on(const ClaimDeallocated& e);
  Outcome on(const PodBound& e);
  Outcome on(const PodRemoved& e);
  Outcome on(const TaskSeen& e);
  Outcome on(const TaskRenamed& e);
  Outcome on(const TaskExited& e);
  Outcome on(const TaskRoleSet& e);
  Outcome on(const DraPolicyUpsert& e);
  Outcome on(const NodePolicyUpsert& e);
  Outcome on(const PolicyDelete& e);
  Outcome on(const PreviewAck& e);
  Outcome on(const TimeAdvance& e);
  Outcome on(const DaemonRestart& e);
  Outcome on(const SyncComplete& e);
  Outcome on(const BpfObserved& e);
  Outcome on(const BpfSynced& e);

  // The whole desired table, recomputed from the observed state and the policies.
  // `renew`: the tids whose due boost leases this step renews (time_advance only); every other
  // boost keeps its lease unless it has run out.
  std::map<uint32_t, Entry> derive(const std::set<uint32_t>& renew = {}) const;
  // `ungated`: a DRA policy that counts as live although it waits for a preview (§6 preview).
  std::vector<Candidate> candidates(const Task& t, const std::string* ungated = nullptr) const;
  std::optional<Candidate> dra_candidate(const DraExecutionPolicy& p, const Task& t, bool ignore_gate = false) const;
  std::optional<Candidate> node_candidate(const NodeSchedulingPolicy& p, const Task& t,
                                          Strategy s) const;
  const Pod* pod_of(const Task& t) const;
  // nullopt: no CPU set is known (no task or pod cpuset, a node without CPUs); see §3 CPU sets.
  std::optional<CpuSet> envelope(const Task& t) const;
  bool node_selected(const NodeSchedulingPolicy& p) const;
  bool claim_live_for(const std::string& uid, const std::string& pod_uid) const;
  // Installs a freshly derived table: keeps unchanged leases, stamps changed entries with G+1.
  void install(std::map<uint32_t, Entry> next, RemovalTag tag);

  Options opt_;
  NodeInfo node_;
  uint64_t g_ = 0;
  uint32_t epoch_ = 0;
  Nanos now_ = 0;
  bool loading_ = false;

  std::map<std::string, DraExecutionPolicy> dra_;
  std::map<std::string, NodeSchedulingPolicy> nsp_;
  std::map<std::pair<PolicyKind, std::string>, int64_t> previewed_;
  std::map<std::pair<PolicyKind, std::string>, int64_t> policy_hwm_;
  std::map<std::string, int64_t> claim_hwm_;
  std::map<std::string, int64_t> claim_deallocated_;  // §2: a claim's tombstone, apart from its mark

  std::map<std::string, Claim> claims_;
  std::map<std::string, Pod> pods_;
  std::map<uint32_t, Task> tasks_;

  std::map<uint32_t, Entry> desired_;
  std::map<uint32_t, RuntimeValue> actual_;
  std::map<uint32_t, RemovalTag> removal_;
  std::vector<uint32_t> last_changed_;
};

// Set algebra written here on the raw words, so that a bug in CpuSet's operators cannot hide.
CpuSet intersect(const CpuSet& a, const CpuSet& b);
CpuSet unite(const CpuSet& a, const CpuSet& b);
bool is_empty(const CpuSet& a);

}  // namespace c2c::naive
