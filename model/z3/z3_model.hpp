// The core's transition relation over a witness key, in Z3 (model/README.md, "Z3").
//
// A state here is the projection of the node (core + mirror) onto one free witness key w: the
// globals, the one policy that can derive w's entry, the task running as TID w, the pod and claim
// that task belongs to, the desired entry D[w], the core's view of the kernel map A[w], the
// kernel map itself B[w], and the applier's pending snapshot P[w]. Every event either touches w
// (its "hit" parameter is true: w is among the keys it re-derives) or leaves w's projection alone
// apart from the node generation, which other keys may bump. Invariants relate values at w only,
// so checking them on a free w is the same as checking them for all keys, without quantifiers.
#pragma once

#include <z3++.h>

#include <cstdint>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace c2c::z3m {

// CPU sets are bit-vectors. The checker uses 8 CPUs (the invariants are per-bit, so a small
// width loses nothing and keeps bit-blasting cheap); conformance uses the core's full width.
inline constexpr unsigned kFullCpuBits = 256;  // c2c::kMaxCpus
// The bounds of a boost lease (maxBoostDuration). model/in_step_test.cpp checks these and
// kFullCpuBits against the core (src/core) and the scheduler's headers (bpf/).
inline constexpr int64_t kMinBoostNs = 1'000'000;          // c2c::kMinBoostNs
inline constexpr int64_t kMaxBoostNs = 3'600'000'000'000;  // c2c::kMaxBoostNs
unsigned cpu_bits();
void set_cpu_bits(unsigned bits);  // call before building any state

enum class Sort { Bool, Int, Cpus };
struct Field {
  const char* name;
  Sort sort;
  const char* doc;
};
const std::vector<Field>& fields();

// One state: a Z3 expression per field (fresh constants, or next-state expressions).
struct State {
  std::map<std::string, z3::expr> v;
  const z3::expr& operator[](const std::string& f) const;
  z3::expr& operator[](const std::string& f);
};
State fresh_state(z3::context& c, const std::string& prefix);
z3::expr same_state(const State& a, const State& b);  // field-wise equality

// The transition's event kinds. Each one is the core's handler (src/core/apply_*.cpp, one file per
// family of event kinds) or a step of the mirror (snapshot, compare-and-swap write, crash in the
// middle of an apply).
enum class Event {
  ClaimUpsert,      // ClaimAllocated / ClaimUpdated
  ClaimDealloc,     // ClaimDeallocated
  PodBound,
  PodRemoved,
  TaskSeen,         // incl. TID reuse (a new start)
  TaskExited,
  PolicyUpsert,     // DraPolicyUpsert / NodePolicyUpsert
  PolicyDelete,
  PreviewAck,
  TimeAdvance,
  DaemonRestart,
  SyncComplete,
  BpfObserved,
  BpfSynced,        // the mirror applied plan(D, A) to the map
  MirrorSnapshot,   // applier: snapshot D[w] under the lock
  MirrorWrite,      // applier: write the snapshot under the lock (compare-and-swap on generation)
  CrashMidApply,    // the write reached the map, the daemon died before recording it, restart
};
const std::vector<Event>& all_events();
const char* to_string(Event e);
std::optional<Event> event_from_string(const std::string& s);

// Seeded bugs: each replaces one rule of the transition with a buggy one.
enum class Mutant {
  None,
  AcceptOlderGeneration,    // claim/policy upsert ignores the high-water mark (INV-3)
  SkipCpusetIntersection,   // allowed CPUs = the claim's CPUs, not envelope & claim (INV-6)
  NeverExpireBoost,         // leases are never renewed nor dropped (INV-8)
  ReuseGenerationOnRestart, // restart continues from the persisted generation without +1 (INV-4)
  ForgetDeallocCleanup,     // deallocation does not re-derive the claim's tasks (INV-1)
  DropStartCompare,         // a new start for a known TID keeps the old entry (INV-2)
  ResurrectOnRestart,       // restart keeps the desired table (INV-7)
  BlindWrite,               // the applier writes its snapshot without the CAS (INV-3)
  PruneWhileLoading,        // plan deletes while loading (INV-7)
  SkipPrune,                // plan keeps entries the desired table does not explain (INV-5)
  DeferRunOutLease,         // a bounded renewal step may leave a lease that has run out (INV-8)
};
const std::vector<Mutant>& all_mutants();
const char* to_string(Mutant m);
std::optional<Mutant> mutant_from_string(const std::string& s);

// Event parameters: fresh constants (the solver picks them; conformance pins them).
struct Params {
  std::map<std::string, z3::expr> v;
  const z3::expr& operator[](const std::string& f) const;
};
Params fresh_params(z3::context& c, const std::string& prefix);

// Environment assumptions the core relies on (model/README.md). With `assume_persisted` the
// generation file never lags the generation in use (the mirror's durable lease guarantees it).
struct Options {
  Mutant mutant = Mutant::None;
  bool assume_persisted = true;
};

// T_e(s, p, s'): the guard and effects of event e as a constraint. Ignored or invalid inputs are
// modelled as "nothing changes" (the core's Ignored/Invalid contract).
z3::expr transition(Event e, const State& s, const Params& p, const State& n, const Options& o);
// The same relation as a function: the guard on (s, p) and the next state's expressions.
struct Step {
  z3::expr guard;
  State next;
};
Step step(Event e, const State& s, const Params& p, const Options& o);

// Bounds on a state that hold by construction (types: generations and times are naturals).
z3::expr type_ok(const State& s);

// The initial state: an empty node, fresh map.
z3::expr initial(const State& s);

// INV-1..INV-8 at the witness: a state predicate and a two-state predicate (monotonicity).
struct Invariant {
  std::string id;   // "INV-1"
  std::string what;
};
const std::vector<Invariant>& invariants();
z3::expr inv_state(const std::string& id, const State& s);
// `e`, when known, adds the event-specific step parts (INV-5: after bpf_synced, A equals D).
z3::expr inv_step(const std::string& id, const State& s, const State& n, std::optional<Event> e = std::nullopt);
z3::expr all_inv_state(const State& s);

// Human-readable dump of a state in a model (only fields that differ when `before` is given).
std::string describe(const z3::model& m, const State& s, const State* before = nullptr);
std::string describe_params(const z3::model& m, const Params& p);

}  // namespace c2c::z3m
