// The claim-to-task state machine: a pure, deterministic core (spec/state-machine.md).
// No I/O, no threads, no clock, no globals. Every input is an Event; time is TimeAdvance.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/events.hpp"
#include "core/model.hpp"
#include "core/runtime_entry.hpp"

namespace c2c {

// Outcome of apply(): Applied (state may have changed), Ignored (a stale or duplicate input that
// must not change anything, e.g. an older generation: INV-3), Invalid (bad input; the state is
// unchanged and `field` names the offending field).
// One decision of a policy's controller (issue 46): what `get decisions` and a replay show.
struct ControllerDecisionRecord {
  PolicyKind kind = PolicyKind::Node;
  std::string policy;
  Nanos at = 0;                 // the core's time (the window's end, or the tick's)
  uint32_t from = 0, to = 0;    // levels
  std::optional<Nanos> signal;  // the window's p99; none for a tick or a window without signal
  ControllerRule rule = ControllerRule::Silent;
  std::string reason;
  bool operator==(const ControllerDecisionRecord&) const = default;
};

// Whether the controller of policy (kind, name) acts on an entry of this origin: every entry the
// policy derives; for a DRA policy only those of spec.controller.role. The core writes its level
// into exactly these entries and the daemon measures exactly these threads.
bool controller_acts_on(const Origin& o, PolicyKind kind, const std::string& name, const ControllerSpec& spec);

// A policy's controller as the core holds it (Core::controllers()).
struct ControllerStatus {
  PolicyKind kind = PolicyKind::Node;
  std::string policy;
  ControllerState state;
  uint32_t max_level = 0;
  ControllerSpec spec;  // the policy's spec.controller (the daemon measures its windows by it)
};

struct ApplyResult {
  enum class Status : uint8_t { Applied, Ignored, Invalid };
  Status status = Status::Applied;
  std::string field;            // for Invalid: the offending field, e.g. "policy.commandRegex"
  std::string message;          // for Ignored/Invalid: why
  std::vector<uint32_t> changed_tids;  // desired entries added, updated or removed
  std::vector<std::string> warnings;
  // Controller decisions this event made: one per controller_window, and the level changes a
  // time_advance forced (expiry, fallback). Holds are reported for windows only.
  std::vector<ControllerDecisionRecord> decisions;
  bool ok() const { return status != Status::Invalid; }
};

struct BatchResult {
  std::vector<ApplyResult> results;  // one per event applied; on a refusal, none
  std::optional<size_t> invalid;     // index of the first Invalid event (nothing was applied)
  ApplyResult refusal;               // its result (status Invalid, field, message)
  bool ok() const { return !invalid; }
};

struct Conflict {
  TaskKey task;
  std::string winner;                // "<kind>/<name>"
  std::vector<std::string> losers;
  std::string rule;                  // which resolution rule decided it
};

struct MatchedTask {
  TaskKey key;
  uint32_t tgid = 0;
  std::string comm;
  std::string title;                     // the process title (Task.title)
  std::string role, role_source;         // the DRA task role it matches and how (Origin::role_source)
  Strategy strategy = Strategy::ExactTid;
  std::optional<RuntimeValue> intended;  // what this policy would write (nullopt: it loses a conflict)
  std::optional<RuntimeValue> actual;    // what the kernel map holds now
};

struct PreviewResult {
  std::string policy;
  PolicyKind kind = PolicyKind::Node;
  int64_t policy_generation = 0;     // the generation the policy would have if applied
  uint64_t node_generation = 0;      // the node generation now
  std::vector<MatchedTask> matched;
  std::vector<Conflict> conflicts;
  std::vector<std::string> warnings;
  // requirePreview: what going live waits for ("... goes live after a preview of generation N is
  // acknowledged"), a field of its own so that a caller that acknowledges drops it without
  // matching warning text; shown after the warnings (api::to_proto, trace::to_json).
  std::string acknowledgement;
  std::string invalid_field;         // non-empty when the policy itself is invalid
  std::string invalid_message;
};

struct Violation {
  std::string invariant;   // "INV-1" .. "INV-8"
  std::string message;
  std::optional<Lineage> lineage;
  uint32_t tid = 0;
};

// What check_step() needs to know about the state before an event (INV-4 and INV-5 are
// properties of transitions, not only of states).
// What the event can touch, so that check_step() checks those keys only (an event then costs the
// checker what it costs the core). `full`: the event can touch every entry (node info, restart,
// sync complete, a read-back of the map), and check_step() runs the full check().
struct StepContext {
  uint64_t generation = 0;
  bool sync_event = false;
  bool restart_event = false;
  bool full = false;
  Nanos now = 0;                           // time before the event
  std::vector<uint32_t> tids;              // tids the event can affect, as the state stood before it
  std::vector<uint32_t> tasks;             // tasks the event names (their thread groups are checked too)
  std::vector<std::string> claims;         // claim uids the event names
  std::vector<std::string> pods;           // pod uids the event names
  std::vector<std::pair<PolicyKind, std::string>> policies;  // policies the event names
};

class CoreImpl;

class Core {
 public:
  Core();
  ~Core();
  Core(const Core&);
  Core& operator=(const Core&);
  Core(Core&&) noexcept;
  Core& operator=(Core&&) noexcept;

  // The transition function. On Invalid or Ignored the state is unchanged.
  ApplyResult apply(const Event& e);
  // A batch, all or nothing: every event is first tried, in order, on a copy of the few parts of
  // the state that decide whether an event is Invalid (node, time, policies, claims, pods and
  // their marks: never the tasks or the tables); if one is Invalid nothing is applied. Otherwise
  // every event is applied. Costs the batch plus the size of those parts, not of the core.
  BatchResult apply_all(const std::vector<Event>& events);
  // A hint, no effect on the state: `e` is about to be applied. Starts the memory loads a task
  // event begins with (its task and its group's leader, its entry, its reconcile marks), so that a
  // caller holding a queue of events overlaps them with the work on the event before (at 100k
  // tasks each is a miss of the last-level cache; issue #13). Other events: nothing.
  void prefetch(const Event& e) const;
  // The same for a task event not yet made into an Event (the daemon's queue of ring-buffer
  // records): its tid, and its tgid and cgroup id when known (0: not known).
  void prefetch_task(uint32_t tid, uint32_t tgid, uint64_t cgroup_id = 0) const;
  // The second stage, for the event after the next: reads the task's record and entry (which
  // prefetch_task brought in one event earlier) and starts the loads they lead to: its cgroup's
  // members and its entry's lineage members (an exit, a rename or a reuse updates them).
  void prefetch_task_dependents(uint32_t tid) const;

  // Read-only queries.
  PreviewResult preview(const DraExecutionPolicy& p) const;
  PreviewResult preview(const NodeSchedulingPolicy& p) const;
  Plan plan() const;                                  // full reconcile: desired vs actual
  // Incremental reconcile (spec/state-machine.md, "Reconcile"): the ops for the TIDs whose desired
  // or actual entry changed since the last call, then forgets them. Equal to plan() restricted to
  // those TIDs, so a caller that writes every op it is given (and then applies BpfSynced) keeps the
  // map equal to the desired table without a full plan per turn. Costs the number of such TIDs.
  Plan take_plan_delta();
  // The earliest boottime at which TimeAdvance has work to do (a boost lease reaching half-life,
  // when it is renewed), if any: the daemon arms one timer from it. O(1): the lease index's head.
  std::optional<Nanos> next_deadline() const;
  std::vector<Violation> check() const;               // INV-1..INV-8 over the state and actual
  // plan() and check() in pieces, for a caller that spreads a full pass over many turns (the
  // daemon's read-back: spec/daemon.md, "A full pass in slices"). Over a partition of
  // entry_keys(), the plans of the parts, in tid order, are plan(); the key checks of the parts
  // and check_named() hold the violations of check(). Each costs its keys (check_named: the
  // claims and policies), not the tables.
  std::vector<uint32_t> entry_keys() const;           // desired ∪ actual, each tid once, in no order
  Plan plan_of(std::vector<uint32_t> tids) const;     // plan()'s ops for these tids, in tid order
  std::vector<Violation> check_keys(std::vector<uint32_t> tids) const;
  std::vector<Violation> check_named() const;         // the claims' and policies' own invariants
  StepContext step_context(const Event& e) const;     // call before apply(e)
  std::vector<Violation> check_step(const StepContext& before, const ApplyResult& r) const;
  std::optional<Lineage> explain(uint32_t tid) const;
  std::vector<Lineage> desired_table() const;         // sorted by tid
  std::vector<Conflict> conflicts() const;            // current conflicts, sorted by tid
  // The claims a DRA policy names that are stale for a pod it selects, as preview warns about them
  // ("DRAExecutionPolicy/<name>: claim <uid> stale (fail closed): ..."); O(pods). The daemon's
  // intent reasons use it (spec/daemon.md, "Intents").
  std::vector<std::string> stale_claims(const DraExecutionPolicy& p) const;
  // The controllers of the stored policies with a spec.controller, by kind then name.
  std::vector<ControllerStatus> controllers() const;

  uint64_t generation() const;
  Nanos now() const;
  bool loading() const;                               // after a restart, before SyncComplete
  uint32_t restart_epoch() const;
  size_t desired_size() const;
  // The desired and actual tables, as the core holds them: flat hash maps (open addressing, the
  // entry in the slot: one cache line per lookup at 100k entries). Their iteration order differs
  // between runs (Abseil seeds its hash per process): a listing must sort.
  using DesiredTable = absl::flat_hash_map<uint32_t, DesiredEntry>;
  using ActualTable = absl::flat_hash_map<uint32_t, RuntimeValue>;
  const DesiredTable& desired() const;
  const ActualTable& actual() const;
  std::vector<Task> tasks() const;                    // sorted by tid
  std::vector<TaskKey> task_keys() const;             // every live task's key, in no order (no strings)
  size_t task_count() const;                          // live tasks (no copy)
  std::optional<TaskKey> task_key(uint32_t tid) const;  // the task known under tid, if any (no copy of all)
  std::optional<Task> task(uint32_t tid) const;         // that task, if any (one copy, not of all)
  // True when TaskSeen{t} would change nothing (same task, comm, title, tgid, cgroup, cpuset and
  // role, seen in this restart epoch): the rescan sends only the tasks for which it is false.
  bool knows_task_as(const Task& t) const;
  std::optional<DraExecutionPolicy> dra_policy(const std::string& name) const;
  std::optional<NodeSchedulingPolicy> node_policy(const std::string& name) const;
  std::optional<Claim> claim(const std::string& uid) const;
  std::optional<Pod> pod(const std::string& uid) const;
  const NodeInfo& node() const;
  // Whether this node is selected by a node policy (nodeNames, nodeSelectors, draSelectors, ANDed):
  // nullopt when it is, else the first requirement that fails, e.g. "nodeSelectors.matchExpressions[0]:
  // gpu In [a100], but the node has gpu=h100" (preview and `get policies` show it as "node not
  // selected: ..."; intents use it to say why a node gets none).
  std::optional<std::string> node_not_selected(const NodeSchedulingPolicy& p) const;
  // A stable digest of the whole state (tests use it to show a rejected input changed nothing).
  std::string digest() const;

 private:
  std::unique_ptr<CoreImpl> impl_;
};

// Validation shared by the core, the trace parser and the daemon's API: nullopt when valid,
// else the offending field and a message.
struct FieldError {
  std::string field;
  std::string message;
};
std::optional<FieldError> validate(const DraExecutionPolicy& p);
std::optional<FieldError> validate(const NodeSchedulingPolicy& p);
std::optional<FieldError> validate(const Claim& c);
std::optional<FieldError> validate(const Pod& p);
std::optional<FieldError> validate(const Task& t);
std::optional<FieldError> validate(const NodeInfo& n);
// Everything about one event that does not depend on the state (the entity checks above, bounds,
// text without NUL bytes). Core::apply() runs it first; the trace decoder runs it on every line
// before anything is applied (spec/trace-format.md).
std::optional<FieldError> validate(const Event& e);

}  // namespace c2c
