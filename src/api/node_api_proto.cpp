#include "api/node_api_proto.hpp"

#include "api/convert.hpp"
#include "api/field_names.hpp"
#include "api/replies.hpp"

namespace c2c::api {

void to_proto(const node::Intent& in, pb::Intent* p) {
  p->set_kind(to_proto(in.kind));
  p->set_policy(in.policy);
  p->set_policy_generation(in.generation);
  p->set_node(in.node);
  p->set_state(static_cast<pb::IntentState>(in.state));
  p->set_reason(in.reason);
  p->set_matched_tasks(in.matched_tasks);
  p->set_applied_entries(in.applied_entries);
  for (const auto& w : in.warnings) p->add_warnings(w);
  p->set_updated_unix_ms(in.updated_unix_ms);
}

pb::StatusResponse to_proto(const node::NodeStatus& s) {
  pb::StatusResponse out;
  out.set_node(s.node);
  out.set_node_generation(s.node_generation);
  out.set_restart_epoch(s.restart_epoch);
  out.set_loading(s.loading);
  out.set_desired_entries(s.desired_entries);
  out.set_actual_entries(s.actual_entries);
  out.set_pending_ops(s.pending_ops);
  out.set_scheduler_enforcing(s.scheduler_enforcing);
  out.set_scheduler_state(s.scheduler_state);
  out.set_scheduler_exit_reason(s.scheduler_exit_reason);
  out.set_scheduler_message(s.scheduler_message);
  for (const auto& v : s.violations) out.add_violations(v);
  out.set_state_digest(s.state_digest);
  out.set_pin_root(s.pin_root);
  out.set_durable_generation(s.durable_generation);
  out.set_policies(s.policies);
  out.set_claims(s.claims);
  out.set_tasks(s.tasks);
  out.set_watchers(s.watchers);
  out.set_pins_restored(s.pins_restored);
  out.set_pin_repair(s.pin_repair);
  out.set_activity(s.activity);
  return out;
}

pb::ChangeEvent to_proto(const node::ChangeNote& n) {
  pb::ChangeEvent ev;
  ev.set_node_generation(n.node_generation);
  ev.set_event_kind(n.event_kind);
  for (auto t : n.changed_tids) ev.add_changed_tids(t);
  for (const auto& in : n.intents) to_proto(in, ev.add_intents());
  return ev;
}

pb::PreviewResponse to_proto(const node::PreviewReply& r) {
  pb::PreviewResponse out = to_proto(r.result);
  for (const auto& w : r.warnings) out.add_warnings(w);
  out.set_acknowledged(r.acknowledged);
  out.set_node(r.node);
  for (const auto& p : r.proposals) to_proto(p, out.add_proposals());
  return out;
}

void to_proto(const node::Proposal& p, pb::RoleProposal* out) {
  out->set_tid(p.tid);
  out->set_role(p.role);
  out->set_execution_class(p.execution_class);
  out->set_confidence_permille(p.confidence_permille);
  out->set_counterpart(p.counterpart);
  out->set_reason(p.reason);
  out->set_outcome(p.outcome);
  out->set_policy_kind(to_proto(p.kind));
  out->set_policy(p.policy);
  out->set_classify(p.classify);
  out->set_text(p.text);
  out->set_window_ns(p.window_ns);
}

// The one table from a refusal to the request's field: per subject, the request's prefix and
// how the core's name inside it reads on the wire.
std::string request_field(const node::Refusal& r, const std::vector<int>& binding_index) {
  using S = node::Refusal::Subject;
  const FieldPath core = FieldPath::parse(r.field);
  switch (r.subject) {
    case S::Policy: {
      const FieldPath in = core.size() > 1 && core.starts_with({"policy"}) ? core.drop_front(1) : core;
      return FieldPath().add("policy").add(r.kind == PolicyKind::Dra ? "dra" : "node").append(proto_path_of(in)).str();
    }
    case S::Claim: {
      size_t at = r.index < binding_index.size() ? static_cast<size_t>(binding_index[r.index]) : r.index;
      return FieldPath().add("bindings").index(at).append(binding_path_of(core)).str();
    }
    case S::Pod:
      return FieldPath().add("pods").index(r.index).append(pod_path_of(core)).str();
    case S::ClaimRef:
      return r.field == "uid" ? "claim_uid" : r.field == "generation" ? "claim_generation" : r.field;
    case S::Acknowledge:
      return "acknowledge";
    case S::Request:
      break;
  }
  return r.field;
}

const char* intent_state_name(pb::IntentState s) { return reply::state_name(static_cast<node::IntentState>(s)); }

void to_proto(const node::Decision& d, pb::ControllerDecision* out) {
  const ControllerDecisionRecord& r = d.record;
  out->set_time_unix_ms(d.unix_ms);
  out->set_core_time_ns(r.at);
  out->set_policy_kind(to_proto(r.kind));
  out->set_policy(r.policy);
  out->set_from_level(r.from);
  out->set_to_level(r.to);
  out->set_has_signal(r.signal.has_value());
  if (r.signal) out->set_run_delay_p99_ns(*r.signal);
  out->set_cpu_share_mean(d.cpu_share_mean);
  out->set_cpu_share_max(d.cpu_share_max);
  out->set_threads_ran(d.threads_ran);
  for (uint32_t tid : d.tids) out->add_tids(tid);
  out->set_rule(to_string(r.rule));
  out->set_reason(r.reason);
  out->set_no_signal(d.no_signal);
  out->set_has_cpu_pressure(d.cpu_pressure_pct.has_value());
  if (d.cpu_pressure_pct) out->set_cpu_pressure_some_pct(*d.cpu_pressure_pct);
  out->set_pressure_cgroup(d.pressure_cgroup);
}

void to_proto(const ControllerStatus& c, pb::ControllerLevel* out) {
  out->set_policy_kind(to_proto(c.kind));
  out->set_policy(c.policy);
  out->set_level(c.state.level);
  out->set_max_level(c.max_level);
}

}  // namespace c2c::api
