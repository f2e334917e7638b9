// The engine's typed node API (api/node_api.hpp): every request the gRPC service can make, on the
// loop thread, in the core's model. The service converts the wire to these calls and their
// results back; nothing here knows protobuf, and nothing outside the engine touches the core,
// the durable state or the intents.
#include <set>

#include "daemon/engine.hpp"
#include "host/cgroup.hpp"

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
    if (auto p = core_.dra_policy(name)) return AnyPolicy{*p};
  } else if (auto p = core_.node_policy(name)) {
    return AnyPolicy{*p};
  }
  return std::nullopt;
}

node::Write Engine::upsert_policy(const AnyPolicy& policy) {
  node::Write w;
  auto [kind, name] = policy_id(policy);
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
  std::string why;
  if (selects_this_node(*stored, &why)) {
    intents_.accepted(kind, name, policy_generation(*stored), node_name_, r.warnings, now_unix_ms());
    if (const auto* in = intents_.find(kind, name)) record(PutIntent{*in});
  } else {
    // One intent per (policy, selected node): this node gets none, and says why.
    intents_.removed(kind, name);
    w.warnings.push_back("node not selected: " + why + ": no intent on this node");
  }
  w.durable = true;
  return w;
}

node::PolicyReply Engine::policy_reply(PolicyKind kind, const std::string& name) const {
  node::PolicyReply r;
  if (auto stored = stored_policy(kind, name)) r.policy_generation = policy_generation(*stored);
  r.node_generation = reported_generation();
  if (const auto* in = intents_.find(kind, name)) r.intent = *in;
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
  intents_.removed(kind, name);
  w.durable = true;
  return w;
}

node::Write Engine::bind_claims(const std::vector<Claim>& claims, const std::vector<Pod>& pods) {
  node::Write w;
  std::vector<Event> events;
  for (const auto& c : claims) events.push_back(core_.claim(c.uid) ? Event{ClaimUpdated{c}} : Event{ClaimAllocated{c}});
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
  auto live = core_.claim(uid);
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
  for (const auto& c : durable_.claims) reserved.insert(c.reserved_for.begin(), c.reserved_for.end());
  std::vector<std::string> gone;
  for (const auto& p : durable_.pods)
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
  out.result = std::visit([&](const auto& p) { return core_.preview(p); }, policy);
  const PolicyKind kind = policy_id(policy).first;
  if (!out.result.invalid_field.empty()) {
    out.refused = refusal(Subject::Policy, out.result.invalid_field, out.result.invalid_message, 0, kind);
    return out;
  }
  out.result.node_generation = reported_generation();  // never above the durable ceiling
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

std::vector<node::Intent> Engine::list_intents(const std::string& policy, std::optional<PolicyKind> kind) const {
  return intents_.list(policy, kind);
}

std::optional<Lineage> Engine::explain(uint32_t tid) const { return core_.explain(tid); }

node::NodeStatus Engine::status() {
  node::NodeStatus s;
  s.node = node_name_;
  s.node_generation = reported_generation();
  s.restart_epoch = core_.restart_epoch();
  s.loading = core_.loading();
  s.desired_entries = static_cast<uint32_t>(core_.desired_size());
  s.actual_entries = static_cast<uint32_t>(core_.actual().size());
  s.pending_ops = static_cast<uint32_t>(retry_.size());  // the deltas write the rest each turn
  auto sched = scheduler_status();
  s.scheduler_enforcing = sched.enforcing;
  s.scheduler_state = sched.state;
  s.scheduler_exit_reason = sched.exit_reason;
  s.scheduler_message = sched.message;
  s.violations = last_violations_;  // from the last read-back
  s.state_digest = core_.digest();
  s.pin_root = cfg_.pin_root;
  s.durable_generation = lease_->durable();
  s.policies = static_cast<uint32_t>(durable_.policies.size());
  s.claims = static_cast<uint32_t>(durable_.claims.size());
  s.tasks = static_cast<uint32_t>(core_.tasks().size());
  s.watchers = static_cast<uint32_t>(watchers_.size());
  s.pins_restored = pins_restored_;
  s.pin_repair = pin_repair_;
  return s;
}

std::vector<node::TaskRow> Engine::list_tasks(const TaskFilter& f) const { return daemon::list_tasks(core_, f); }


std::vector<AnyPolicy> Engine::list_policies() const { return durable_.policies; }

std::map<std::string, std::string> Engine::node_policies_not_selected() const {
  std::map<std::string, std::string> out;
  for (const auto& p : durable_.policies)
    if (const auto* n = std::get_if<NodeSchedulingPolicy>(&p))
      if (auto why = core_.node_not_selected(*n)) out[n->name] = *why;
  return out;
}

NodeLabelMap Engine::node_labels() const {
  return effective_node_labels(node_name_, cfg_.node_labels, node_object_labels_);
}

node::Write Engine::set_node_labels(const NodeLabelMap& labels) {
  node::Write w;
  auto r = apply(NodeLabels{effective_node_labels(node_name_, cfg_.node_labels, labels)});
  if (r.status == ApplyResult::Status::Invalid) {
    w.refused = refusal(Subject::Request, r.field, r.message);
    return w;
  }
  node_object_labels_ = labels;
  w.warnings = r.warnings;
  w.ignored = r.status == ApplyResult::Status::Ignored;
  w.message = r.message;
  return w;
}

node::Bindings Engine::list_bindings() const { return node::Bindings{durable_.claims, durable_.pods}; }

}  // namespace c2c::daemon
