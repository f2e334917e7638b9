// Internal state of the core, with the indexes that keep every event incremental:
// an event costs time in proportion to the entries it changes, not to the table size.
#pragma once

#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_map.h>
#include <re2/re2.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/core.hpp"
#include "core/derive_memo.hpp"
#include "core/intern_pool.hpp"
#include "core/lease_queue.hpp"
#include "core/names.hpp"
#include "core/tid_set.hpp"

namespace c2c {

// One live task, compact (issue #13 item 2): its strings and cpuset are ids in CoreImpl's intern
// pools (strings[], cpusets[]; 0 = empty / none), so that a slot of the flat task table is 48 bytes
// instead of ~260 and an event copies no strings. CoreImpl::task_of() gives the Task back.
struct TaskState {
  TaskKey key;
  uint32_t tgid = 0;
  uint32_t epoch = 0;   // restart epoch of the last observation (INV-7)
  uint32_t comm = 0;    // strings[]: the thread's comm
  uint32_t cgroup = 0;  // strings[]: the task's cgroup path
  uint32_t title = 0;   // strings[]: the process title, 0 when unknown
  uint32_t role = 0;    // strings[]: the registered role, 0 when none
  uint32_t pod = 0;     // strings[]: the pod uid resolved from the cgroup, 0 when in no known pod
  uint32_t cpuset = 0;  // cpusets[]: the effective cpuset of the task's cgroup, 0 when unknown
};

// A CpuSet's hash for its intern pool.
struct CpuSetHash {
  size_t operator()(const CpuSet& c) const { return absl::Hash<std::array<uint64_t, CpuSet::kWords>>{}(c.words()); }
};

struct ClaimState {
  Claim claim;
  uint32_t epoch = 0;
};

struct PodState {
  Pod pod;
  uint32_t epoch = 0;
  // pod.task_roles compiled once, in role-name order (the order a thread's comm is tried in).
  std::vector<std::pair<std::string, std::shared_ptr<const RE2>>> role_regex;
};

// RE2 patterns the core compiled in this process (validation and stored state alike): tests show
// that each pattern of a policy or pod is compiled once on its way in (issue 44).
uint64_t regex_compiles();

// The patterns one validation compiled (validate(..., &keep)): the stored state takes these
// objects instead of compiling the same text again (issue 44: one compile per pattern).
using CompiledPatterns = std::vector<std::shared_ptr<const RE2>>;

// A compiled RE2 pattern (unanchored unless the pattern anchors); null for an empty pattern.
// `reuse`: the validation's compiled patterns, searched by text first.
std::shared_ptr<const RE2> compile_regex(const std::string& pattern, const CompiledPatterns* reuse = nullptr);

// validate() of core.hpp that keeps the patterns it compiled (when `keep` is not null).
std::optional<FieldError> validate(const Event& e, CompiledPatterns* keep);
std::optional<FieldError> validate(const DraExecutionPolicy& p, CompiledPatterns* keep);
std::optional<FieldError> validate(const NodeSchedulingPolicy& p, CompiledPatterns* keep);
std::optional<FieldError> validate(const Pod& p, CompiledPatterns* keep);

// A role selector's patterns: the comm and the process title; every present one must match.
struct TitleAndComm {
  std::shared_ptr<const RE2> comm;
  std::shared_ptr<const RE2> title;
  bool empty() const { return !comm && !title; }
  bool matches(const std::string& comm, const std::string& title) const;
  bool matches(const Task& t) const { return matches(t.comm, t.title); }
};

struct DraPolicyState {
  DraExecutionPolicy policy;
  std::vector<TitleAndComm> role_regex;  // parallel to task_roles
  int64_t previewed_generation = -1;
  bool active() const { return !policy.require_preview || previewed_generation == policy.generation; }
  // Compiles each pattern once (or takes it from `reuse`, the validation's).
  static DraPolicyState of(const DraExecutionPolicy& p, const CompiledPatterns* reuse = nullptr);
};

struct NodePolicyState {
  NodeSchedulingPolicy policy;
  TitleAndComm regex;  // commandRegex on the comm, processRegex on the title
  static NodePolicyState of(const NodeSchedulingPolicy& p, const CompiledPatterns* reuse = nullptr);
};

// A policy's claim to a task, before conflicts are resolved.
struct Candidate {
  PolicyKind kind = PolicyKind::Node;
  std::string policy;
  int64_t policy_generation = 0;
  int32_t priority = 0;
  Strategy strategy = Strategy::ExactTid;
  std::string pod_uid;
  std::vector<ClaimRef> claims;
  std::string role;
  std::string role_source;  // Origin::role_source
  RuntimeValue value;  // generation and boost_until are filled in when the entry is written
};

// Resolution order when two policies match one task (spec/state-machine.md, "Conflicts").
bool candidate_precedes(const Candidate& a, const Candidate& b, std::string* rule);

// A policy given to preview(): it stands in for the stored policy of the same name.
struct PolicyOverride {
  const DraPolicyState* dra = nullptr;
  const NodePolicyState* node = nullptr;
};

// Hash maps keep their arrays when members leave; this gives them back once mostly empty, as
// TidSet does (memory is returned when tasks exit, issue #13). It rehashes: no iterator into the
// map may be live across the call.
template <class Map>
void shrink_if_sparse(Map& m) {
  if ((m.bucket_count() > 64 && m.size() * 8 < m.bucket_count()) || (m.empty() && m.bucket_count() > 1)) m.rehash(0);
}

class CoreImpl {
 public:
  // ---- durable state (survives DaemonRestart) ----
  NodeInfo node;
  uint64_t generation = 0;
  uint32_t epoch = 0;
  std::map<std::string, DraPolicyState> dra_policies;
  std::map<std::string, NodePolicyState> node_policies;
  std::unordered_map<std::string, int64_t> policy_high_water;  // "<kind>/<name>" -> highest generation seen
  // Claims: the highest generation seen and, apart from it, the generation a claim was deallocated
  // at. Only the second is a tombstone: a claim that was live before a restart and is re-listed at
  // its unchanged generation is live again (INV-7 completeness); a deallocated one is not (INV-3).
  std::unordered_map<std::string, int64_t> claim_high_water;   // uid -> highest generation seen
  std::unordered_set<std::string> claim_tombstones;  // deallocated at their high-water generation
  // The controllers' states (issue 46), one per stored policy with a spec.controller. Observed
  // state: a restart or a new generation of the policy starts it at level 0 (the static policy).
  std::map<std::pair<PolicyKind, std::string>, ControllerState> controllers;
  const ControllerSpec* controller_spec(PolicyKind kind, const std::string& name) const;
  void reset_controller(PolicyKind kind, const std::string& name, const std::optional<ControllerSpec>& spec);
  // Every controller's tick at `now` (expiry and fallback, CTL-4/5); level changes go to `out`.
  void tick_controllers(ApplyResult& out);
  // What the current level of the controller of the entry's policy does to a derived value (CTL-1,
  // INV-6): nothing at level 0, for a policy without a controller, or for a DRA role it does not
  // act on. rederive() applies it to every entry after the (memoized) derivation.
  void apply_level(const Origin& o, RuntimeValue& v) const;
  // A controller's level changed: re-derive the entries of that policy (their values follow it).
  void rederive_controlled(PolicyKind kind, const std::string& name, ApplyResult& out);
  // CTL-1, CTL-4, CTL-5 as predicates on one policy's controller state (check.cpp).
  void check_controller(PolicyKind kind, const std::string& name, std::vector<Violation>& out) const;

  // ---- observed state (lost on DaemonRestart) ----
  bool loading = false;
  Nanos now = 0;
  std::unordered_map<std::string, ClaimState> claims;
  std::unordered_map<std::string, PodState> pods;
  // Flat (open addressing, the value in the slot): a task event looks its task up several times
  // (itself, its leader for the TGID fallback), and a node-based map costs a chain of cache misses
  // per lookup at 100k tasks (issue #13's profile). It never shrinks by itself: shrink_if_sparse().
  absl::flat_hash_map<uint32_t, TaskState> tasks;
  // The tasks' interned values (TaskState's ids), counted per task: given back as tasks leave.
  InternPool<std::string> strings;
  InternPool<CpuSet, CpuSetHash> cpusets;
  uint32_t intern(const std::string& s) { return s.empty() ? 0 : strings.acquire(s); }
  const std::string& str(uint32_t id) const { return strings[id]; }
  const std::string& comm_of(const TaskState& t) const { return strings[t.comm]; }
  const std::string& title_of(const TaskState& t) const { return strings[t.title]; }
  const std::string& cgroup_of(const TaskState& t) const { return strings[t.cgroup]; }
  const std::string& pod_of(const TaskState& t) const { return strings[t.pod]; }
  const CpuSet* cpuset_of(const TaskState& t) const { return t.cpuset ? &cpusets[t.cpuset] : nullptr; }
  // A task record from an observed task (its values interned), and back.
  TaskState make_task_state(const Task& t);
  void release_task_state(const TaskState& t);
  Task task_of(const TaskState& t) const;

  // ---- indexes ----
  // The member sets are flat (TidSet): a task costs a few bytes in each, not a hash node.
  // Comms are counted; their members are kept only while a comm has few (kCommMembersKept). A
  // node's busy comms hold thousands of threads each, and a member set of such a comm cost every
  // task event (exit, new thread, rename) a cache miss in a large array at 100k tasks (issue #13):
  // once a comm passes the bound its set is dropped, and tasks_matching finds its tasks by one
  // pass over the tasks, until the comm has no task left. A policy for a rare comm (a thread
  // of its own name) still finds its few tasks without that pass.
  struct CommTasks {
    uint32_t count = 0;
    bool members_kept = true;
    TidSet members;  // while members_kept
  };
  static constexpr uint32_t kCommMembersKept = 64;
  std::unordered_map<std::string, CommTasks> tasks_by_comm;
  std::unordered_map<std::string, TidSet> tids_by_title;  // non-empty process titles only (index_task)
  // The tgid and cgroup indexes are flat maps (absl::flat_hash_map, the TidSet in the slot): a
  // lookup is one or two cache lines instead of a chain of nodes. The flat maps' iteration order
  // differs between runs (Abseil seeds its hash per process), so nothing observable may depend on
  // it (every listing sorts). comm and title stay std::unordered_map: preview's did-you-mean hint
  // takes its example from the first match in iteration order.
  absl::flat_hash_map<uint32_t, TidSet> tids_by_tgid;
  // Tasks by cgroup: hashed for the per-task updates (a path compares in one pass, not once per
  // tree level), plus the cgroups in order for subtree scans (it changes only when a cgroup
  // gains its first task or loses its last).
  // Each cgroup also keeps the pod its path resolves to, so that a task joining a known cgroup
  // (most new threads) costs no walk of its path's prefixes through pod_by_cgroup.
  struct CgroupTasks {
    TidSet tids;
    uint32_t pod = 0;       // strings[]: the resolved pod uid (a reference of its own), 0 = none
    bool resolved = false;  // false until resolved, and again whenever pod bindings change
    uint64_t id = 0;        // the observer's cgroup id the path was first seen with (Task::cgroup_id), 0 = none
  };
  // Keyed by the cgroup path's id in `strings` (the task record's `cgroup`): a task event hashes
  // and compares no path here (a path is ~60-100 bytes, and comparing it reads the pool's copy: a
  // cache miss at 100k tasks).
  absl::flat_hash_map<uint32_t, CgroupTasks> tids_by_cgroup;
  // Cgroup ids to the interned path they were seen with, while a task is in that cgroup (the
  // entry goes with the path's CgroupTasks). A task event whose id is known takes the path's id
  // from here when its path has the same length and hash as the one recorded (an id that now
  // names another path, e.g. a renamed cgroup, is interned by its path as without an id).
  struct CgroupPath {
    uint32_t path = 0;  // strings[]: no reference of its own (the cgroup's tasks hold them)
    uint32_t size = 0;
    uint64_t hash = 0;  // cgroup_path_hash
  };
  absl::flat_hash_map<uint64_t, CgroupPath> cgroup_by_id;
  static uint64_t cgroup_path_hash(const std::string& path);
  uint32_t intern_cgroup(const Task& t);  // strings.acquire of t.cgroup, through cgroup_by_id
  absl::btree_set<std::string> cgroups_in_order;  // a B-tree: a few cache lines per lookup, not one per level
  std::map<std::string, std::string, std::less<>> pod_by_cgroup;  // transparent: resolve_pod looks up prefixes by view
  std::unordered_map<std::string, std::unordered_set<std::string>> pods_by_claim;  // claim uid -> pod uids

  // ---- the desired table and the kernel side ----
  // Flat (Core::DesiredTable): a task event looks its entry up several times (rederive, set_entry,
  // touch); one slot, one cache line. Handed out as is by Core::desired().
  Core::DesiredTable desired;
  // (renew_at, tid) of boosted entries, earliest first. A boosted entry appearing or leaving is an
  // insert/erase here on every such task event: a lazy heap (lease_queue.hpp) appends either at its
  // end instead of walking a tree to a random leaf.
  LeaseQueue lease_renewals;
  Core::ActualTable actual;
  absl::flat_hash_map<uint32_t, std::string> removal_reasons;  // why a tid left the desired table
  absl::flat_hash_map<uint32_t, Conflict> conflicts;          // tids matched by more than one policy
  std::unordered_map<std::string, std::weak_ptr<const Origin>> origin_pool;  // shared lineage origins
  size_t origin_pool_swept_size = 0;
  // Entries by their (shared) origin: check_step finds the entries a claim, pod or policy event can
  // invalidate by walking the few live origins instead of the whole table.
  std::unordered_map<const Origin*, TidSet> entries_by_origin;

  // ---- incremental reconcile (spec/state-machine.md, "Reconcile") ----
  // Tids whose desired or actual entry (or delete reason) changed since the last take_plan_delta(),
  // limited to tids that have an op (D and A differ there: a tid in neither, or in both with the
  // same value, has none).
  TidSet dirty;
  // Tids for which plan() has an op or a deferred delete (D and A differ there): bpf_synced
  // executes exactly these.
  TidSet unsynced;
  // Records that tid's D or A entry changed: marks it dirty and updates `unsynced`.
  void touch(uint32_t tid);

  // ---- memoized derivation (derive.cpp) ----
  mutable DeriveMemo memo;
  // A stored policy's pattern on a task's comm and title, and whether a stored node policy selects
  // this node: memoized (the plain TitleAndComm::matches / node_selected for anything else).
  bool memo_matches(const TitleAndComm& p, const TaskState& t) const;
  bool memo_matches(const RE2& pattern, uint32_t text) const;
  bool memo_node_selected(const NodeSchedulingPolicy& p) const;
  // A task's winning policy, value, lineage and conflict (candidates + resolve + the pooled
  // origin), memoized by its inputs; `scratch` holds it when it cannot be memoized (it produced
  // warnings, which may name the task). Warnings go to `warnings`.
  const DeriveMemo::Derivation& derivation(const TaskState& t, DeriveMemo::Derivation& scratch,
                                           std::vector<std::string>& warnings);
  std::shared_ptr<const Origin> origin_of(Candidate& winner);  // pooled (intern_origin)

  // ---- event handlers (apply.cpp, which hands each event to event_handlers.hpp) ----
  ApplyResult apply(const Event& e);
  // A copy of what decides whether an event is Invalid (apply_all's dry run, core.cpp): node, time,
  // generation, epoch, loading, policies, claims, pods (without their tasks) and every mark.
  CoreImpl validity_skeleton() const;

  // ---- derivation (derive.cpp) ----
  std::vector<Candidate> candidates(const TaskState& t, const PolicyOverride& ov,
                                    std::vector<std::string>* warnings) const;
  std::optional<Candidate> resolve(std::vector<Candidate> cands, Conflict* conflict) const;
  std::optional<CpuSet> envelope(const TaskState& t) const;
  bool node_selected(const NodeSchedulingPolicy& p) const;
  // Why the node is not selected (the first failed requirement); nullopt when it is.
  std::optional<std::string> node_not_selected(const NodeSchedulingPolicy& p) const;
  bool claim_live_for(const std::string& claim_uid, const std::string& pod_uid) const;
  // The stale-claim warnings of a DRA policy over the pods it selects (Core::stale_claims).
  std::vector<std::string> stale_claims(const DraExecutionPolicy& p) const;

  // Re-derives the given tasks' entries; bumps the generation once if anything changed.
  // `reason` explains removals (it becomes the plan's delete reason).
  // The task events' form: a few tids (any order, repeats allowed) and the reason built only when
  // an entry really leaves (most task events change nothing or add one; a reason string built per
  // event was a measurable share of the event's cost, issue #13).
  void rederive(std::vector<uint32_t> tids, ApplyResult& out, const std::function<std::string()>& reason);
  void rederive(const std::unordered_set<uint32_t>& tids, ApplyResult& out, const std::string& reason) {
    rederive(std::vector<uint32_t>(tids.begin(), tids.end()), out, [&reason] { return reason; });
  }
  // Tasks whose entry may depend on the given pods / node policies (their patterns).
  std::unordered_set<uint32_t> tasks_of_pods(const std::unordered_set<std::string>& pod_uids) const;
  // The live tasks a pod holds (record's `pod` is the pod's uid): found under the pod's cgroup,
  // not kept per pod (a pod's member set cost every task event in it a cache miss at 100k tasks).
  void add_tasks_of_pod(const PodState& pod, std::unordered_set<uint32_t>& out) const;
  std::unordered_set<uint32_t> tasks_matching(const std::vector<const TitleAndComm*>& patterns) const;

  // ---- index maintenance ----
  // Which of a task's index keys to (un)index: a re-observation or a TID reuse within the same
  // process and cgroup moves only the keys that changed (each key is a cache miss at 100k tasks).
  enum IndexKey : uint8_t {
    kByComm = 1,
    kByTitle = 2,
    kByTgid = 4,
    kByCgroup = 8,  // and the pod
    kAllKeys = 15,
  };
  // The index keys a re-observation `t` of the live task `old` moves, and whether it changes
  // nothing at all (the TaskSeen handler's no-op, and Core::knows_task_as for the rescan).
  uint8_t moved_keys(const TaskState& old, const Task& t) const;
  // The same, between two records whose values are interned (equal text, equal id): the TaskSeen
  // handler's form, which compares no strings (reading the pool's copy of a cgroup path is a cache
  // miss or two at 100k tasks, and the new record interns the values anyway).
  static uint8_t moved_keys(const TaskState& old, const TaskState& fresh);
  bool same_observation(const TaskState& old, const Task& t) const;
  // Whether a re-observation `t` of `old` keeps the role `old` registered (same_observation and the
  // TaskSeen handler apply the same rule).
  static bool keeps_role(const TaskState& old, const Task& t);
  // cgroup_id: the observer's id of the task's cgroup (Task::cgroup_id), recorded in cgroup_by_id.
  void index_task(uint32_t tid, uint8_t keys = kAllKeys, uint64_t cgroup_id = 0);
  void unindex_task(uint32_t tid, uint8_t keys = kAllKeys);
  void count_comm(const std::string& comm, uint32_t tid);    // one task more with this comm
  void uncount_comm(const std::string& comm, uint32_t tid);  // one task fewer with this comm
  const std::string& resolve_pod(const std::string& cgroup) const;  // the pod uid, "" when none
  uint32_t cgroup_pod(CgroupTasks& cg, const std::string& cgroup);  // resolve_pod, cached in cg
  void forget_cgroup_pods();  // pod bindings changed: every cgroup resolves again
  std::unordered_set<uint32_t> tasks_under_cgroup(const std::string& cgroup) const;
  void add_thread_group(std::unordered_set<uint32_t>& tids, uint32_t leader_tgid) const;
  void add_thread_group(std::vector<uint32_t>& tids, uint32_t leader_tgid) const;
  void set_entry(uint32_t tid, DesiredEntry e);
  std::shared_ptr<const Origin> intern_origin(const std::string& key, Origin o);
  void erase_entry(uint32_t tid, const std::string& reason);
  // The tids whose leases a time_advance to `at` renews: the first `limit` due leases in
  // (renew_at, tid) order (all when unset), then every other due lease that has run out (INV-8).
  std::vector<uint32_t> leases_to_renew(Nanos at, std::optional<uint32_t> limit) const;
  // A superset of the boosted tids whose leases have run out by `at` (check_step's scope).
  std::vector<uint32_t> leases_maybe_run_out(Nanos at) const;
  void unlink_origin(const Origin* o, uint32_t tid);

  // ---- queries ----
  Plan plan() const;
  // The op plan() has for one tid (nullopt: none; *deferred set when its delete waits for loading).
  std::optional<PlanOp> plan_op(uint32_t tid, bool* deferred) const;
  Plan take_plan_delta();
  // The ops of plan() for these tids only (any order, duplicates allowed), in tid order.
  Plan plan_of(std::vector<uint32_t> tids) const;
  std::vector<uint32_t> entry_keys() const;  // desired ∪ actual, each once, in no order
  std::vector<Violation> check() const;
  // check() in pieces (Core::check_keys, Core::check_named): the key-scoped invariants over these
  // tids, and the claims' and policies' own (generation high-water marks).
  std::vector<Violation> check_keys(std::vector<uint32_t> tids) const;
  std::vector<Violation> check_named() const;
  // The invariants over the given keys only (check.cpp): check() is this over every key.
  struct CheckScope {
    std::vector<uint32_t> tids;  // sorted, unique
    std::vector<std::string> claims;
    std::vector<std::pair<PolicyKind, std::string>> policies;
  };
  std::vector<Violation> check_scope(const CheckScope& scope) const;
  // The tids whose invariants an event about these keys can change, in the current state.
  void expand_scope(const StepContext& ctx, std::vector<uint32_t>& tids) const;
  std::optional<Lineage> lineage(uint32_t tid) const;
  std::string digest() const;
};

PreviewResult preview_dra(const CoreImpl& s, const DraExecutionPolicy& p);
PreviewResult preview_node(const CoreImpl& s, const NodeSchedulingPolicy& p);

}  // namespace c2c
