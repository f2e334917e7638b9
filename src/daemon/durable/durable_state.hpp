// What claim2cored persists so that a restart (even after kill -9) rebuilds the same inputs
// (spec/daemon.md, "Durability"): the policies with their generations, preview acknowledgements,
// tombstones of deleted policies and claims (so nothing older comes back: INV-3), the claim
// bindings and pods the API gave it, and the intents. The node generation lives in its own file
// (src/mirror GenerationLease, INV-4).
//
// File: one JSON object {"format":"claim2core-daemon-state","version":1,"state":{...},
// "checksum":"<fnv1a64 of state.dump()>"}, written temp + fsync + rename + fsync(dir): a crash
// leaves the old or the new file, never a torn one. A file that does not parse, has the wrong
// checksum or a malformed field is an error naming the field ("state.policies[2].spec.commandRegex"),
// never silently an empty state.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/core.hpp"
#include "daemon/node_state/intents.hpp"

namespace c2c::daemon {

PolicyId policy_id(const AnyPolicy& p);
int64_t policy_generation(const AnyPolicy& p);

struct PolicyTombstone {
  AnyPolicy last;              // the policy as it was when deleted (restoring the tombstone
                               // replays upsert + delete on a fresh core)
  int64_t deleted_generation = 0;
  bool operator==(const PolicyTombstone&) const = default;
};

// A deallocated claim (its uid and the generation it was deallocated at): an older or equal
// generation of it must stay ignored after a restart (INV-3).
struct ClaimTombstone {
  std::string uid;
  int64_t generation = 0;
  bool operator==(const ClaimTombstone&) const = default;
};

// Claim tombstones kept (the most recent deallocations; the oldest is forgotten first). A
// tombstone only matters while a stale observation of its claim can still arrive (an observer
// lagging behind its API server); claim uids are never reused, so the bound trades an
// unbounded file for the rare stale re-allocation of a claim deallocated 4096 deallocations ago.
inline constexpr size_t kMaxClaimTombstones = 4096;

struct DurableState {
  std::vector<AnyPolicy> policies;                    // live, sorted by (kind, name)
  std::map<PolicyId, int64_t> preview_acks;           // acknowledged preview generation
  std::vector<PolicyTombstone> policy_tombstones;
  std::vector<Claim> claims;                          // live, sorted by uid
  std::vector<ClaimTombstone> claim_tombstones;       // oldest deallocation first, <= kMaxClaimTombstones
  std::vector<Pod> pods;                              // sorted by uid
  std::vector<Intent> intents;                        // sorted by (kind, policy)
  // Registered task roles (RegisterTaskRole), sorted by tid: re-sent at start to the tasks that
  // still live with the same (tid, start), dropped for the others (INV-7, INV-2).
  std::vector<TaskRoleSet> roles;
  // The Kubernetes Node object's labels, as the observer last sent them (SetNodeLabels); none:
  // the config's node.labels apply. Kept so that a restart selects the same node policies before
  // the feed reconnects (INV-7: a live policy's entries do not leave and come back).
  std::optional<std::map<std::string, std::string>> node_object_labels;
  uint64_t log_seq = 0;  // the last state-log record this snapshot includes (replay skips up to it)
  bool operator==(const DurableState&) const = default;

  // Upserts keep the vectors sorted and unique by key.
  void put_policy(const AnyPolicy& p);
  void delete_policy(PolicyKind kind, const std::string& name, int64_t generation);
  void put_claim(const Claim& c);
  void delete_claim(const std::string& uid, int64_t generation);
  void put_pod(const Pod& p);
  void delete_pod(const std::string& uid);
  void put_role(const TaskRoleSet& r);  // an empty role deletes
  void delete_role(uint32_t tid);
  const TaskRoleSet* role(uint32_t tid) const;
};

// One change of the durable state, as a state-log record carries it (spec/daemon.md, "The write
// path"). Every change is idempotent given the order (a put replaces, a delete of what is gone
// does nothing), so replaying a record twice is harmless.
struct PutPolicy { AnyPolicy policy; };
struct DeletePolicy { PolicyKind kind; std::string name; int64_t generation = 0; };
struct PutClaim { Claim claim; };
struct DeleteClaim { std::string uid; int64_t generation = 0; };
struct PutPod { Pod pod; };
struct DeletePod { std::string uid; };
struct AckPreview { PolicyKind kind; std::string name; int64_t generation = 0; };
struct PutIntent { Intent intent; };
struct PutRole { TaskRoleSet role; };  // an empty role: the tid's registration is removed
struct PutNodeLabels { std::map<std::string, std::string> labels; };  // the Node object's labels
using StateChange = std::variant<PutPolicy, DeletePolicy, PutClaim, DeleteClaim, PutPod, DeletePod, AckPreview,
                                 PutIntent, PutRole, PutNodeLabels>;
void apply_change(DurableState& s, const StateChange& c);

// A log record's payload: {"seq":N,"changes":[{"putPolicy":{...}}, ...]} (the same codecs as the
// snapshot). decode: false with *err naming the field.
std::string encode_changes(uint64_t seq, const std::vector<StateChange>& changes);
bool decode_changes(const std::string& text, uint64_t* seq, std::vector<StateChange>* out, FieldError* err);

std::string encode_state(const DurableState& s);
// nullopt on success; else *err names the field. `out` is untouched on error.
bool decode_state(const std::string& text, DurableState* out, FieldError* err);

// Reads the file (missing: empty state, true). Any other failure: false, *err names the field.
bool load_state(const std::string& path, DurableState* out, FieldError* err);
// Durable write (temp, fsync, rename, fsync dir). Returns "" or the error.
std::string save_state(const std::string& path, const DurableState& s);

// The events that rebuild the durable part of a fresh core, to be applied right after
// DaemonRestart: tombstones (upsert + delete), live policies, preview acks, claims, pods.
std::vector<Event> restore_events(const DurableState& s);

}  // namespace c2c::daemon
