// The typed node API (issue #13 item 5): what the gRPC service asks the engine and what it gets
// back, as plain C++ structs over the core's model. No protobuf here: the engine speaks these
// types only, src/api/node_api_proto.* converts them to the wire (once each way), and the
// service (src/daemon/service/service.cpp) glues the two without touching the core, the durable state or
// the intents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/core.hpp"

namespace c2c::node {

using PolicyId = std::pair<PolicyKind, std::string>;

enum class IntentState : uint8_t { Pending = 1, Sent = 2, Applied = 3, Failed = 4 };

// What the daemon promised to do for one policy generation on this node (spec/daemon.md, "Intents").
struct Intent {
  PolicyKind kind = PolicyKind::Node;
  std::string policy;
  int64_t generation = 0;
  std::string node;
  IntentState state = IntentState::Pending;
  std::string reason;
  uint32_t matched_tasks = 0;
  uint32_t applied_entries = 0;
  std::vector<std::string> warnings;
  int64_t updated_unix_ms = 0;
  bool operator==(const Intent&) const = default;
};

// A refused request: which part of it (the policy, the claim or pod at `index` of the request,
// the acknowledgement, a top-level field) and the core's field name inside it. The service turns
// it into the request's wire field path with api::request_field (one table), so no layer edits
// another's field names.
struct Refusal {
  enum class Subject : uint8_t { Policy, Claim, Pod, ClaimRef, Acknowledge, Request };
  Subject subject = Subject::Request;
  PolicyKind kind = PolicyKind::Node;  // Subject::Policy
  size_t index = 0;                    // Subject::Claim / Pod: position in the request
  std::string field;                   // the core's name, e.g. "spec.commandRegex", "claim.generation"
  std::string message;
};

// The outcome of a mutating call's apply phase. `durable`: a durable input changed (the batch
// is made durable before any reply; if that fails the reply is UNAVAILABLE).
struct Write {
  std::optional<Refusal> refused;  // nothing changed
  bool ignored = false;            // stale or duplicate input: nothing changed (INV-3)
  std::string message;
  std::vector<std::string> warnings;
  bool durable = false;
  // Set by upsert_policy only: why the policy as written does not select this node (the one
  // node-selection decision of the write, also behind its intent); nullopt when it does.
  std::optional<std::string> node_not_selected;
};

// A policy after its write: the generation stored, the node generation clients may be told and
// its intent.
struct PolicyReply {
  std::string node;  // this daemon's node name
  std::optional<int64_t> policy_generation;
  uint64_t node_generation = 0;
  std::optional<Intent> intent;
};

// A role proposed from activity as this node shows it (issue 46 item 4; wire: RoleProposal).
struct Proposal {
  uint32_t tid = 0;
  std::string role, execution_class;
  uint32_t confidence_permille = 0;
  uint32_t counterpart = 0;
  std::string reason, outcome;
  PolicyKind kind = PolicyKind::Node;
  std::string policy, classify, text;
  uint64_t window_ns = 0;
};

struct PreviewReply {
  PreviewResult result;             // result.acknowledgement: what going live still waits for
  std::optional<Refusal> refused;
  bool acknowledged = false;        // acknowledge was set and a PreviewAck was recorded
  std::vector<std::string> warnings;  // the daemon's own, after the core's
  bool durable = false;
  std::string node;                   // this daemon's node name
  std::vector<Proposal> proposals;    // the latest window's, under the previewed spec.classify
};

struct TaskRow {
  Task task;
  std::string pod_uid;  // from the kubelet cgroup name, "" outside pods
  // The policy the task gets (issue #15; empty when none): "<Kind>/<name>", role, strategy,
  // class, and the policies that match it too and lost ("<Kind>/<name> (rule)").
  std::string policy, role, strategy, execution_class;
  std::vector<std::string> outranked;
  bool applied = false;  // the pinned map holds an entry for this task (core.actual(), same start)
};

struct Bindings {
  std::vector<Claim> claims;
  std::vector<Pod> pods;
};

struct NodeStatus {
  std::string node;
  uint64_t node_generation = 0;
  uint32_t restart_epoch = 0;
  bool loading = false;
  uint32_t desired_entries = 0, actual_entries = 0;
  uint32_t pending_ops = 0;  // map writes owed (the retry queue)
  bool scheduler_enforcing = false;
  std::string scheduler_state, scheduler_exit_reason, scheduler_message;
  std::vector<std::string> violations;  // from the last read-back's Core::check()
  std::string state_digest;
  std::string pin_root;
  uint64_t durable_generation = 0;
  uint32_t policies = 0, claims = 0, tasks = 0, watchers = 0;
  uint32_t pins_restored = 0;
  std::string pin_repair;
  std::string activity;  // roles from activity: watching what, or unavailable and why
};

// RegisterTaskRole (issue #14, spec/daemon.md "Task roles"): who asks, for which thread.
struct RoleCaller {
  uint32_t pid = 0;         // the peer's process (SO_PEERCRED: its thread-group id)
  uint32_t uid = 0;
  bool privileged = false;  // root or an allowed uid: may label any thread
  // The role socket's connection: a pidfd of the process that connected (-1: none, gRPC). Its pid
  // is trusted only while that process lives (a pid can be reused once it exited, issue 42).
  int pidfd = -1;
  // Without a pidfd (a kernel before 6.5, or role_peer_identity: start-time): the pid's start time
  // (/proc/<pid>/stat field 22) at accept; the pid is trusted while it still has that start.
  std::optional<uint64_t> start_ticks = std::nullopt;
};
struct RoleRequest {
  uint32_t tid = 0;
  uint64_t start = 0;  // 0: read from /proc; else checked against the live task
  std::string role;    // empty: unregister
  RoleCaller caller;
};
struct RoleReply {
  // CallerExited: the process that connected to the role socket exited (its pid may name another
  // process now): refused, the client reconnects (UNAUTHENTICATED).
  enum class Code : uint8_t { Ok, Invalid, PermissionDenied, NotFound, StartMismatch, CallerExited };
  Code code = Code::Ok;
  std::string field, message;  // why, when not Ok (field: the request's)
  uint32_t tid = 0, tgid = 0;
  uint64_t start = 0;
  std::string role;
  bool changed = false;
  bool durable = false;
};

// One decision of a policy's controller as the daemon recorded it (issue 46): the core's record
// and what the daemon measured for it (`claim2core get decisions`, explain).
struct Decision {
  int64_t unix_ms = 0;
  ControllerDecisionRecord record;  // policy, core time, from -> to, signal (the p99), rule, reason
  std::vector<uint32_t> tids;       // the threads measured and acted on, sorted
  double cpu_share_mean = 0, cpu_share_max = 0;
  uint32_t threads_ran = 0;
  std::string no_signal;            // why the window had no signal ("" when it had one, or a tick)
  std::optional<double> cpu_pressure_pct;  // the cgroups' highest cpu.pressure `some` over the window, percent
  std::string pressure_cgroup;
};

struct Decisions {
  std::vector<Decision> decisions;         // oldest first
  std::vector<ControllerStatus> controllers;
};

// One change for Watch subscribers.
struct ChangeNote {
  uint64_t node_generation = 0;
  std::string event_kind;
  std::vector<uint32_t> changed_tids;
  std::vector<Intent> intents;  // the intents that changed (on the turn's last note)
};

}  // namespace c2c::node
