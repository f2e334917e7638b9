#include "api/replies_proto.hpp"

#include "api/proto_json.hpp"

namespace c2c::api {
namespace {

template <class R>
std::vector<std::string> strings(const R& r) {
  return {r.begin(), r.end()};
}

template <class M>
std::map<std::string, std::string> strings_map(const M& m) {
  return {m.begin(), m.end()};
}

}  // namespace

std::optional<PolicyKind> plain(pb::PolicyKind k) {
  if (k == pb::DRA_EXECUTION_POLICY) return PolicyKind::Dra;
  if (k == pb::NODE_SCHEDULING_POLICY) return PolicyKind::Node;
  return std::nullopt;
}

reply::Intent plain(const pb::Intent& m) {
  reply::Intent o;
  o.kind = plain(m.kind());
  o.policy = m.policy();
  o.policy_generation = m.policy_generation();
  o.node = m.node();
  o.state = static_cast<node::IntentState>(m.state());
  o.reason = m.reason();
  o.matched_tasks = m.matched_tasks();
  o.applied_entries = m.applied_entries();
  o.warnings = strings(m.warnings());
  o.updated_unix_ms = m.updated_unix_ms();
  o.json = proto_to_json(m);
  return o;
}

reply::RuntimeEntry plain(const pb::RuntimeEntry& m) {
  return reply::RuntimeEntry{m.tid(), m.start(), m.tgid(), m.generation(), m.execution_class(), m.slice_ns(),
                             m.boost_until_ns(), m.max_boost_ns(), m.allowed_cpus(), m.preferred_cpus(),
                             strings(m.flags())};
}

reply::Upsert plain(const pb::UpsertPolicyResponse& m) {
  reply::Upsert o;
  o.policy_generation = m.policy_generation();
  o.node_generation = m.node_generation();
  o.warnings = strings(m.warnings());
  o.ignored = m.ignored();
  o.message = m.message();
  if (m.has_intent()) o.intent = plain(m.intent());
  o.node = m.node();
  o.node_selected = m.node_selected();
  o.node_not_selected = m.node_not_selected();
  o.json = proto_to_json(m);
  return o;
}

reply::Delete plain(const pb::DeletePolicyResponse& m) {
  return reply::Delete{m.node_generation(), m.ignored(), m.message(), proto_to_json(m)};
}

reply::Proposal plain(const pb::RoleProposal& m) {
  return reply::Proposal{m.tid(),    m.role(),   m.execution_class(), m.confidence_permille(), m.counterpart(),
                         m.reason(), m.outcome(), plain(m.policy_kind()), m.policy(),          m.classify(),
                         m.text(),   m.window_ns()};
}

reply::Preview plain(const pb::PreviewResponse& m) {
  reply::Preview o;
  o.policy_generation = m.policy_generation();
  o.node_generation = m.node_generation();
  for (const auto& t : m.matched()) {
    reply::MatchedTask x{t.tid(), t.start(), t.tgid(), t.comm(), t.strategy(), t.title(), t.role(), t.role_source(),
                         std::nullopt, std::nullopt};
    if (t.has_intended()) x.intended = plain(t.intended());
    if (t.has_actual()) x.actual = plain(t.actual());
    o.matched.push_back(std::move(x));
  }
  for (const auto& c : m.conflicts())
    o.conflicts.push_back(reply::Conflict{c.tid(), c.start(), c.winner(), strings(c.losers()), c.rule()});
  o.warnings = strings(m.warnings());
  o.acknowledged = m.acknowledged();
  o.policy = m.policy();
  o.node = m.node();
  for (const auto& p : m.proposals()) o.proposals.push_back(plain(p));
  o.json = proto_to_json(m);
  return o;
}

std::vector<reply::Intent> plain(const pb::ListIntentsResponse& m) {
  std::vector<reply::Intent> out;
  for (const auto& i : m.intents()) out.push_back(plain(i));
  return out;
}

reply::Task plain(const pb::Task& m) {
  reply::Task o;
  o.tid = m.tid();
  o.start = m.start();
  o.tgid = m.tgid();
  o.comm = m.comm();
  o.cgroup = m.cgroup();
  o.pod_uid = m.pod_uid();
  o.title = m.title();
  o.policy = m.policy();
  o.role = m.role();
  o.strategy = m.strategy();
  o.execution_class = m.execution_class();
  o.outranked = strings(m.outranked());
  o.applied = m.applied();
  o.json = proto_to_json(m);
  return o;
}

std::vector<reply::Task> plain(const pb::ListTasksResponse& m) {
  std::vector<reply::Task> out;
  for (const auto& t : m.tasks()) out.push_back(plain(t));
  return out;
}

reply::Binding plain(const pb::ClaimDeviceBinding& m) {
  reply::Binding o;
  o.claim_uid = m.claim_uid();
  o.claim_generation = m.claim_generation();
  o.pod_uid = m.pod_uid();
  o.node_name = m.node_name();
  o.driver = m.driver();
  o.pool = m.pool();
  o.device = m.device();
  o.share_id = m.share_id();
  o.numa_nodes.assign(m.numa_nodes().begin(), m.numa_nodes().end());
  o.pcie_root = m.pcie_root();
  o.pci_bus_id = m.pci_bus_id();
  o.cpus = m.cpus();
  o.request = m.request();
  o.claim_namespace = m.claim_namespace();
  o.claim_name = m.claim_name();
  o.pod_name = m.pod_name();
  o.json = proto_to_json(m);
  return o;
}

reply::PodInfo plain(const pb::PodInfo& m) {
  return reply::PodInfo{m.uid(),    m.namespace_(), m.name(), strings_map(m.labels()), strings_map(m.claims()),
                        m.cgroup(), m.cpus(),       strings_map(m.task_roles()), proto_to_json(m)};
}

reply::Bindings plain(const pb::ListBindingsResponse& m) {
  reply::Bindings o;
  for (const auto& b : m.bindings()) o.bindings.push_back(plain(b));
  for (const auto& p : m.pods()) o.pods.push_back(plain(p));
  o.json = proto_to_json(m);
  return o;
}

Converted<reply::Policies> plain(const pb::ListPoliciesResponse& m) {
  Converted<reply::Policies> out;
  reply::Policies o;
  for (int i = 0; i < m.policies_size(); ++i) {
    auto p = from_proto(m.policies(i), "policies[" + std::to_string(i) + "]", Check::Wire);
    if (!p.ok()) {
      out.error = p.error;
      return out;
    }
    o.policies.push_back(std::move(*p.value));
  }
  for (const auto& n : m.node_not_selected()) o.node_not_selected[n.name()] = n.reason();
  o.json = proto_to_json(m);
  out.value = std::move(o);
  return out;
}

reply::Explain plain(const pb::ExplainResponse& m) {
  reply::Explain o;
  o.found = m.found();
  if (m.has_inherited())
    o.inherited = reply::BoostInheritance{m.inherited().runs(), m.inherited().from_tid(), m.inherited().depth()};
  if (m.has_lineage()) {
    const auto& l = m.lineage();
    reply::Lineage x;
    for (const auto& c : l.claims()) x.claims.push_back(reply::ClaimRef{c.uid(), c.generation()});
    x.pod_uid = l.pod_uid();
    x.cgroup = l.cgroup();
    x.tid = l.tid();
    x.start = l.start();
    x.tgid = l.tgid();
    x.comm = l.comm();
    x.policy_kind = plain(l.policy_kind());
    x.policy = l.policy();
    x.policy_generation = l.policy_generation();
    x.role = l.role();
    x.strategy = l.strategy();
    if (l.has_entry()) x.entry = plain(l.entry());
    x.title = l.title();
    x.role_source = l.role_source();
    o.lineage = std::move(x);
  }
  o.json = proto_to_json(m);
  if (m.has_controller()) o.controller = plain(m.controller());
  for (const auto& d : m.decisions()) o.decisions.push_back(plain(d));
  for (const auto& p : m.proposals()) o.proposals.push_back(plain(p));
  return o;
}

reply::Decision plain(const pb::ControllerDecision& m) {
  reply::Decision o;
  o.time_unix_ms = m.time_unix_ms();
  o.core_time_ns = m.core_time_ns();
  o.policy_kind = plain(m.policy_kind());
  o.policy = m.policy();
  o.from_level = m.from_level();
  o.to_level = m.to_level();
  o.has_signal = m.has_signal();
  o.run_delay_p99_ns = m.run_delay_p99_ns();
  o.cpu_share_mean = m.cpu_share_mean();
  o.cpu_share_max = m.cpu_share_max();
  o.threads_ran = m.threads_ran();
  o.tids.assign(m.tids().begin(), m.tids().end());
  o.rule = m.rule();
  o.reason = m.reason();
  o.no_signal = m.no_signal();
  if (m.has_cpu_pressure()) o.cpu_pressure_pct = m.cpu_pressure_some_pct();
  o.pressure_cgroup = m.pressure_cgroup();
  o.json = proto_to_json(m);
  return o;
}

reply::ControllerLevel plain(const pb::ControllerLevel& m) {
  return reply::ControllerLevel{plain(m.policy_kind()), m.policy(), m.level(), m.max_level(), proto_to_json(m)};
}

reply::Decisions plain(const pb::ListDecisionsResponse& m) {
  reply::Decisions o;
  for (const auto& d : m.decisions()) o.decisions.push_back(plain(d));
  for (const auto& c : m.controllers()) o.controllers.push_back(plain(c));
  o.json = proto_to_json(m);
  return o;
}

reply::Status plain(const pb::StatusResponse& m) {
  reply::Status o;
  o.node = m.node();
  o.node_generation = m.node_generation();
  o.restart_epoch = m.restart_epoch();
  o.loading = m.loading();
  o.desired_entries = m.desired_entries();
  o.actual_entries = m.actual_entries();
  o.pending_ops = m.pending_ops();
  o.scheduler_enforcing = m.scheduler_enforcing();
  o.scheduler_state = m.scheduler_state();
  o.scheduler_exit_reason = m.scheduler_exit_reason();
  o.scheduler_message = m.scheduler_message();
  o.violations = strings(m.violations());
  o.state_digest = m.state_digest();
  o.pin_root = m.pin_root();
  o.durable_generation = m.durable_generation();
  o.policies = m.policies();
  o.claims = m.claims();
  o.tasks = m.tasks();
  o.watchers = m.watchers();
  o.pins_restored = m.pins_restored();
  o.pin_repair = m.pin_repair();
  o.activity = m.activity();
  o.json = proto_to_json(m);
  return o;
}

reply::Change plain(const pb::ChangeEvent& m) {
  reply::Change o;
  o.node_generation = m.node_generation();
  o.event_kind = m.event_kind();
  o.changed_tids.assign(m.changed_tids().begin(), m.changed_tids().end());
  for (const auto& i : m.intents()) o.intents.push_back(plain(i));
  o.json = proto_to_json(m);
  return o;
}

reply::Role plain(const pb::RegisterTaskRoleResponse& m) {
  return reply::Role{m.tid(), m.start(), m.tgid(), m.role(), m.changed(), m.node_generation(), proto_to_json(m)};
}

}  // namespace c2c::api

namespace c2c::reply {

std::string kind_name(const std::optional<PolicyKind>& k) { return k ? to_string(*k) : "Unknown"; }

const char* state_name(node::IntentState s) {
  switch (s) {
    case node::IntentState::Pending: return "Pending";
    case node::IntentState::Sent: return "Sent";
    case node::IntentState::Applied: return "Applied";
    case node::IntentState::Failed: return "Failed";
  }
  return "Unknown";
}

}  // namespace c2c::reply
