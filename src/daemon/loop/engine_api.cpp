// The engine's typed node API (api/node_api.hpp): every request the gRPC service can make, on the
// loop thread, in the core's model. The service converts the wire to these calls and their
// results back; nothing here knows protobuf, and nothing outside the engine touches the core,
// the durable state or the intents.
#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "daemon/loop/engine.hpp"
#include "daemon/role_socket/task_roles.hpp"
#include "daemon/role_socket/peer_identity.hpp"
#include "host/cgroup.hpp"
#include "sched/loader.hpp"

namespace c2c::daemon {
namespace {

using Subject = node::Refusal::Subject;

Event upsert_event(const AnyPolicy& p) {
  if (const auto* d = std::get_if<DraExecutionPolicy>(&p)) return DraPolicyUpsert{*d};
  return NodePolicyUpsert{std::get<NodeSchedulingPolicy>(p)};
}

node::Refusal refusal(Subject s, const std::string& field, const std::string& message, size_t index = 0,
                      PolicyKind kind = PolicyKind::Node) {
  node::Refusal r;
  r.subject = s;
  r.kind = kind;
  r.index = index;
  r.field = field;
  r.message = message;
  return r;
}

}  // namespace

std::optional<AnyPolicy> Engine::stored_policy(PolicyKind kind, const std::string& name) const {
  if (kind == PolicyKind::Dra) {
    if (auto p = node_.core.dra_policy(name)) return AnyPolicy{*p};
  } else if (auto p = node_.core.node_policy(name)) {
    return AnyPolicy{*p};
  }
  return std::nullopt;
}

node::Write Engine::upsert_policy(const AnyPolicy& policy, bool require_named_node) {
  node::Write w;
  auto [kind, name] = policy_id(policy);
  // Node selection is decided once per write, on the policy as given (it reads the policy's
  // selectors and the node, never its generation, so the stored copy decides the same).
  std::string why;
  const bool selected = selects_this_node(node_.core, policy, &why);
  if (!selected) w.node_not_selected = why;
  if (const auto* n = std::get_if<NodeSchedulingPolicy>(&policy);
      require_named_node && n && !n->node_names.empty() &&
      std::find(n->node_names.begin(), n->node_names.end(), node_.node_name) == n->node_names.end()) {
    w.ignored = true;
    w.message = "node not selected: " + why;
    return w;
  }
  auto r = apply(upsert_event(policy));
  if (r.status == ApplyResult::Status::Invalid) {
    w.refused = refusal(Subject::Policy, r.field, r.message, 0, kind);
    return w;
  }
  w.warnings = r.warnings;
  if (r.status == ApplyResult::Status::Ignored) {
    w.ignored = true;
    w.message = r.message;
    return w;
  }
  auto stored = stored_policy(kind, name);
  if (!stored) return w;
  record(PutPolicy{*stored});
  if (selected) {
    node_.intents.accepted(kind, name, policy_generation(*stored), node_.node_name, r.warnings, now_unix_ms());
    if (const auto* in = node_.intents.find(kind, name)) record(PutIntent{*in});
  } else {
    // One intent per (policy, selected node): this node gets none, and says why.
    node_.intents.removed(kind, name);
    w.warnings.push_back("node not selected: " + why + ": no intent on this node");
  }
  w.durable = true;
  return w;
}

node::PolicyReply Engine::policy_reply(PolicyKind kind, const std::string& name) const {
  node::PolicyReply r;
  r.node = node_.node_name;
  if (auto stored = stored_policy(kind, name)) r.policy_generation = policy_generation(*stored);
  r.node_generation = reported_generation();
  if (const auto* in = node_.intents.find(kind, name)) r.intent = *in;
  return r;
}

node::Write Engine::delete_policy(PolicyKind kind, const std::string& name, int64_t generation) {
  node::Write w;
  auto live = stored_policy(kind, name);
  auto r = apply(PolicyDelete{kind, name, generation});
  if (r.status == ApplyResult::Status::Invalid) {
    w.refused = refusal(Subject::Request, r.field, r.message);
    return w;
  }
  if (r.status == ApplyResult::Status::Ignored || !live) {
    w.ignored = true;
    w.message = r.message.empty() ? "no such policy" : r.message;
    return w;
  }
  record(daemon::DeletePolicy{kind, name, std::max(generation, policy_generation(*live))});
  node_.intents.removed(kind, name);
  w.durable = true;
  return w;
}

node::Write Engine::bind_claims(const std::vector<Claim>& claims, const std::vector<Pod>& pods) {
  node::Write w;
  std::vector<Event> events;
  for (const auto& c : claims) events.push_back(node_.core.claim(c.uid) ? Event{ClaimUpdated{c}} : Event{ClaimAllocated{c}});
  std::vector<std::string> pod_warnings;
  for (const auto& p : pods) events.push_back(PodBound{resolve_pod(p, &pod_warnings)});
  auto b = apply_all(events);
  if (!b.ok()) {
    size_t i = *b.invalid;
    w.refused = i < claims.size() ? refusal(Subject::Claim, b.refusal.field, b.refusal.message, i)
                                  : refusal(Subject::Pod, b.refusal.field, b.refusal.message, i - claims.size());
    return w;
  }
  bool changed = false;
  for (size_t i = 0; i < b.results.size(); ++i) {
    const auto& r = b.results[i];
    changed |= r.status == ApplyResult::Status::Applied;
    if (i < claims.size()) {
      if (r.status == ApplyResult::Status::Ignored) w.warnings.push_back("claim " + claims[i].uid + ": " + r.message);
      if (r.status == ApplyResult::Status::Applied) record(PutClaim{claims[i]});
    } else if (r.status != ApplyResult::Status::Invalid) {
      record(PutPod{pods[i - claims.size()]});  // as given: an empty cgroup is resolved again at start
    }
  }
  w.warnings.insert(w.warnings.end(), pod_warnings.begin(), pod_warnings.end());
  if (!changed) {
    w.ignored = true;
    w.message = "nothing changed (same or older claim generations: INV-3)";
  }
  w.durable = changed;
  return w;
}

node::Write Engine::unbind_claim(const std::string& uid, int64_t generation) {
  node::Write w;
  auto live = node_.core.claim(uid);
  auto r = apply(ClaimDeallocated{uid, generation});
  if (r.status == ApplyResult::Status::Invalid) {
    w.refused = refusal(Subject::ClaimRef, r.field, r.message);
    return w;
  }
  if (r.status == ApplyResult::Status::Ignored || !live) {
    w.ignored = true;
    return w;
  }
  record(DeleteClaim{uid, std::max(generation, live->generation)});
  // Pods that no live claim reserves any more are forgotten with it.
  std::set<std::string> reserved;
  for (const auto& c : node_.durable.claims) reserved.insert(c.reserved_for.begin(), c.reserved_for.end());
  std::vector<std::string> gone;
  for (const auto& p : node_.durable.pods)
    if (!reserved.count(p.uid)) gone.push_back(p.uid);
  for (const auto& pod : gone) {
    apply(PodRemoved{pod});
    record(DeletePod{pod});
  }
  w.durable = true;
  return w;
}

node::PreviewReply Engine::preview(const AnyPolicy& policy, bool acknowledge) {
  node::PreviewReply out;
  out.node = node_.node_name;
  out.result = std::visit([&](const auto& p) { return node_.core.preview(p); }, policy);
  const PolicyKind kind = policy_id(policy).first;
  if (!out.result.invalid_field.empty()) {
    out.refused = refusal(Subject::Policy, out.result.invalid_field, out.result.invalid_message, 0, kind);
    return out;
  }
  out.result.node_generation = reported_generation();  // never above the durable ceiling
  out.proposals = previewed_proposals(activity_, kind, out.result.policy,
                                      std::visit([](const auto& p) { return p.classify; }, policy));
  if (!acknowledge) return out;
  auto a = apply(PreviewAck{kind, out.result.policy, out.result.policy_generation});
  if (a.status == ApplyResult::Status::Invalid) {
    out.refused = refusal(Subject::Acknowledge, a.field, a.field + ": " + a.message);
    return out;
  }
  if (a.status == ApplyResult::Status::Ignored) {  // e.g. node policies need no preview
    out.warnings.push_back("acknowledge ignored: " + a.message);
    return out;
  }
  record(AckPreview{kind, out.result.policy, out.result.policy_generation});
  out.acknowledged = true;
  out.result.acknowledgement.clear();  // this call acknowledged it: going live waits for nothing
  out.durable = true;
  return out;
}

node::RoleReply Engine::register_role(const node::RoleRequest& q) {
  using Code = node::RoleReply::Code;
  node::RoleReply out;
  auto fail = [&](Code c, std::string field, std::string message) {
    out.code = c;
    out.field = std::move(field);
    out.message = std::move(message);
    return out;
  };
  if (auto bad = c2c::validate(Event{TaskRoleSet{{q.tid, q.start}, q.role}})) return fail(Code::Invalid, bad->field, bad->message);
  // The role must also be text the durable state can hold, before anything changes: its record is
  // encoded once here (a few bytes). Validation already keeps out every byte the encoder refuses;
  // this is the second fence of issue 42, where one such role aborted the daemon mid-write.
  try {
    (void)encode_changes(0, {PutRole{TaskRoleSet{{q.tid, q.start}, q.role}}});
  } catch (const std::exception& e) {
    return fail(Code::Invalid, "role", std::string("cannot be stored: ") + e.what());
  }
  auto tid = caller_tid_in_daemon_ns("/proc", q.caller.pid, q.tid);
  if (!tid)
    return fail(Code::NotFound, "tid", "no thread " + std::to_string(q.tid) + " in the caller's process (its pid namespace)");
  auto target = read_role_target("/proc", *tid);
  if (!target) return fail(Code::NotFound, "tid", "no live thread " + std::to_string(q.tid) + " on this node");
  if (q.start != 0 && q.start != target->start)
    return fail(Code::StartMismatch, "start",
                std::to_string(q.start) + " is not the start of the live thread " + std::to_string(q.tid) + " (" +
                    std::to_string(target->start) + "): that task is gone and the tid reused (INV-2)");
  if (auto why = role_refusal(q.caller, *target)) return fail(Code::PermissionDenied, "", *why);
  // After every read under the caller's pid (its namespace, the target's tgid): if the caller
  // still lives now, that pid named it all along (issue 42, a reused pid).
  if ((q.caller.pidfd >= 0 || q.caller.start_ticks) &&
      peer_gone(PeerIdentity{static_cast<pid_t>(q.caller.pid), q.caller.pidfd, q.caller.start_ticks}))
    return fail(Code::CallerExited, "connection",
                "the process that connected (pid " + std::to_string(q.caller.pid) +
                    ") has exited; its pid may name another process now: reconnect");
  const TaskKey key{target->tid, target->start};
  // A thread registers at its start, usually before its creation event reached the core: it is
  // observed now, from /proc, as the event would have (HostFeed::complete).
  if (node_.core.task_key(key.tid) != key) {
    host::TaskEvent seen;
    seen.kind = host::TaskEventKind::New;
    seen.task = host::TaskInfo{key.tid, target->tgid, key.start, target->comm, "", 0, std::nullopt};
    std::vector<Event> events;
    feed_->complete(node_.core, seen, boottime_ns(), events);
    for (const auto& e : events) apply(e);
  }
  auto r = apply(TaskRoleSet{key, q.role});
  if (r.status == ApplyResult::Status::Invalid) return fail(Code::Invalid, r.field, r.message);
  if (node_.core.task_key(key.tid) != key) return fail(Code::NotFound, "tid", "thread " + std::to_string(q.tid) + " exited");
  out.tid = key.tid;
  out.start = key.start;
  out.tgid = target->tgid;
  out.role = q.role;
  out.changed = r.status == ApplyResult::Status::Applied;
  if (out.changed) {
    record(PutRole{TaskRoleSet{key, q.role}});
    out.durable = true;
  }
  return out;
}

std::vector<node::Intent> Engine::list_intents(const std::string& policy, std::optional<PolicyKind> kind) const {
  return node_.intents.list(policy, kind);
}

std::optional<Lineage> Engine::explain(uint32_t tid) const { return node_.core.explain(tid); }

std::optional<c2c_task_counters> Engine::task_counters(uint32_t tid) const {
  std::string why;
  auto c = sched::read_pinned_task_counters(tid, cfg_.pin_root + "/" + C2C_TASK_CNT_MAP_NAME, &why);
  if (!c) spdlog::debug("explain {}: no scheduler counters: {}", tid, why);
  return c;
}

node::NodeStatus Engine::status() {
  node::NodeStatus s;
  s.node = node_.node_name;
  s.node_generation = reported_generation();
  s.restart_epoch = node_.core.restart_epoch();
  s.loading = node_.core.loading();
  s.desired_entries = static_cast<uint32_t>(node_.core.desired_size());
  s.actual_entries = static_cast<uint32_t>(node_.core.actual().size());
  s.pending_ops = static_cast<uint32_t>(reconciler_->pending_ops());  // the deltas write the rest each turn
  auto sched = scheduler_status();
  s.scheduler_enforcing = sched.enforcing;
  s.scheduler_state = sched.state;
  s.scheduler_exit_reason = sched.exit_reason;
  s.scheduler_message = sched.message;
  s.violations = reconciler_->violations();  // from the last read-back
  s.state_digest = node_.core.digest();
  s.pin_root = cfg_.pin_root;
  s.durable_generation = node_.lease->durable();
  s.policies = static_cast<uint32_t>(node_.durable.policies.size());
  s.claims = static_cast<uint32_t>(node_.durable.claims.size());
  s.tasks = static_cast<uint32_t>(node_.core.task_count());
  s.watchers = static_cast<uint32_t>(watchers_.size());
  s.pins_restored = pins_restored_;
  s.pin_repair = pin_repair_;
  s.activity = activity_.status();
  return s;
}

std::vector<node::TaskRow> Engine::list_tasks(const TaskFilter& f) const { return daemon::list_tasks(node_.core, f); }


std::vector<AnyPolicy> Engine::list_policies() const { return node_.durable.policies; }

std::map<std::string, std::string> Engine::node_policies_not_selected() const {
  std::map<std::string, std::string> out;
  for (const auto& p : node_.durable.policies)
    if (const auto* n = std::get_if<NodeSchedulingPolicy>(&p))
      if (auto why = node_.core.node_not_selected(*n)) out[n->name] = *why;
  return out;
}

NodeLabelMap Engine::node_labels() const {
  return effective_node_labels(node_.node_name, cfg_.node_labels, node_.durable.node_object_labels);
}

node::Write Engine::set_node_labels(const NodeLabelMap& labels) {
  node::Write w;
  auto r = apply(NodeLabels{effective_node_labels(node_.node_name, cfg_.node_labels, labels)});
  if (r.status == ApplyResult::Status::Invalid) {
    w.refused = refusal(Subject::Request, r.field, r.message);
    return w;
  }
  // One copy, the durable state's: a batch that cannot be made durable takes it back with the rest.
  if (node_.durable.node_object_labels != labels) {
    record(PutNodeLabels{labels});  // a restart starts from them, not from the config (INV-7)
    w.durable = true;
  }
  w.warnings = r.warnings;
  w.ignored = r.status == ApplyResult::Status::Ignored;
  w.message = r.message;
  return w;
}

node::Decisions Engine::list_decisions(const std::string& policy, uint32_t tid, uint32_t limit) const {
  return node::Decisions{decisions_.list(policy, tid, limit), node_.core.controllers()};
}

std::optional<node::Decisions> Engine::explain_controller(uint32_t tid, uint32_t limit) const {
  auto e = node_.core.desired().find(tid);
  if (e == node_.core.desired().end()) return std::nullopt;
  const Origin& o = *e->second.origin;
  for (const ControllerStatus& c : node_.core.controllers()) {
    if (c.kind != o.kind || c.policy != o.policy) continue;
    if (c.kind == PolicyKind::Dra && c.spec.role != o.role) return std::nullopt;  // another role's
    return node::Decisions{decisions_.list(std::string(to_string(c.kind)) + "/" + c.policy, tid, limit), {c}};
  }
  return std::nullopt;
}

std::optional<node::Proposal> Engine::explain_proposal(uint32_t tid) const {
  auto v = activity_.of_tid(tid);
  if (!v) return std::nullopt;
  const PolicyProposals* pp = activity_.of_policy(v->kind, v->policy);
  return to_node_proposal(*v, pp ? pp->window_ns : 0);
}

node::Bindings Engine::list_bindings() const { return node::Bindings{node_.durable.claims, node_.durable.pods}; }

}  // namespace c2c::daemon
