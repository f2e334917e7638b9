#include "api/convert.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "api/field_names.hpp"
#include "codec/json_reader.hpp"
#include "core/names.hpp"

namespace c2c::api {
namespace {

template <class T>
Converted<T> fail(std::string field, std::string message) {
  Converted<T> c;
  c.error = FieldError{std::move(field), std::move(message)};
  return c;
}

template <class T>
Converted<T> ok(T v) {
  Converted<T> c;
  c.value = std::move(v);
  return c;
}

std::string at(const std::string& path, const std::string& field) {
  return path.empty() ? field : path + "." + field;
}
std::string idx(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }


std::optional<FieldError> check_count(const std::string& field, int n) {
  if (static_cast<size_t>(n) > kMaxListItems)
    return FieldError{field, "more than " + std::to_string(kMaxListItems) + " items (" + std::to_string(n) + ")"};
  return std::nullopt;
}

std::optional<FieldError> check_map(const std::string& field, const google::protobuf::Map<std::string, std::string>& m) {
  if (auto e = check_count(field, static_cast<int>(m.size()))) return e;
  for (const auto& [k, v] : m) {
    if (auto e = check_string(field, k, 317)) return e;
    if (auto e = check_string(field + "[" + echo(k) + "]", v)) return e;
  }
  return std::nullopt;
}

std::map<std::string, std::string> to_std_map(const google::protobuf::Map<std::string, std::string>& m) {
  return {m.begin(), m.end()};
}


// Maps a core validation error into the proto's field names under `path`.
FieldError translate(const FieldError& e, const std::string& path) {
  return FieldError{FieldPath::parse(path).append(proto_path_of(FieldPath::parse(e.field))).str(), e.message};
}

Converted<std::optional<CpuSet>> cpus_from(const std::string& field, const std::string& text) {
  if (text.empty()) return ok<std::optional<CpuSet>>(std::nullopt);
  if (auto e = check_string(field, text, 1024)) return fail<std::optional<CpuSet>>(e->field, e->message);
  std::string why;
  auto s = CpuSet::parse(text, &why);
  if (!s) return fail<std::optional<CpuSet>>(field, "not a CPU list (\"0-3,8\"): " + why);
  return ok<std::optional<CpuSet>>(*s);
}

// spec.controller from the proto: the durations parsed here (their fields named), the
// combinations left to the core's validation, as for a manifest.
Converted<std::optional<ControllerSpec>> controller_from(bool present, const pb::ControllerSpec& c, const std::string& path) {
  using R = std::optional<ControllerSpec>;
  if (!present) return ok<R>(std::nullopt);
  const std::string f = at(path, "controller");
  ControllerSpec s;
  if (auto e = check_string(at(f, "role"), c.role(), 253)) return fail<R>(e->field, e->message);
  s.role = c.role();
  auto duration = [&](const std::string& field, const std::string& text, Nanos& out) -> std::optional<FieldError> {
    if (auto e = check_string(field, text, 64)) return e;
    auto ns = codec::parse_duration_ns(text);
    if (!ns) return FieldError{field, "invalid duration '" + echo(text) + "' (use e.g. \"500ms\", \"30s\")"};
    out = *ns;
    return std::nullopt;
  };
  const bool run_delay = !c.target().run_delay_p99().empty();
  if (run_delay == !c.target().step_p99().empty())
    return fail<R>(at(f, "target"), "set exactly one of run_delay_p99 or step_p99");
  s.target = run_delay ? ControllerTarget::RunDelayP99 : ControllerTarget::StepP99;
  if (auto e = duration(at(f, run_delay ? "target.run_delay_p99" : "target.step_p99"),
                        run_delay ? c.target().run_delay_p99() : c.target().step_p99(), s.target_ns))
    return fail<R>(e->field, e->message);
  s.boost = c.actions().boost();
  if (c.actions().has_slice()) {
    ControllerSlice sl;
    const auto& ps = c.actions().slice();
    for (auto [name, text, out] : {std::tuple{"from", &ps.from(), &sl.from}, std::tuple{"to", &ps.to(), &sl.to},
                                   std::tuple{"step", &ps.step(), &sl.step}})
      if (auto e = duration(at(f, std::string("actions.slice.") + name), *text, *out)) return fail<R>(e->field, e->message);
    s.slice = sl;
  }
  auto cpus = cpus_from(at(f, "actions.preferred_cpus"), c.actions().preferred_cpus());
  if (!cpus.ok()) return fail<R>(cpus.error.field, cpus.error.message);
  s.preferred_cpus = *cpus.value;
  for (auto [name, text, out] : {std::tuple{"cooldown", &c.cooldown(), &s.cooldown},
                                 std::tuple{"hysteresis", &c.hysteresis(), &s.hysteresis},
                                 std::tuple{"max_raised", &c.max_raised(), &s.max_raised},
                                 std::tuple{"window", &c.window(), &s.window}})
    if (auto e = duration(at(f, name), *text, *out)) return fail<R>(e->field, e->message);
  s.windows_without_signal = c.windows_without_signal() == 0 ? 3 : c.windows_without_signal();
  return ok<R>(std::move(s));
}

// boost.inherit.depth from the proto: absent (no boost or no inherit) is 0, off; an inherit with
// depth 0 is refused, as the manifest's is. The core's validation checks the range and the class
// (check_boost_inherit), naming boost.inherit.depth, translated to the proto's path.
Converted<uint32_t> boost_inherit_from(bool has, const pb::BoostSpec& b, const std::string& path) {
  if (!has || !b.has_inherit()) return Converted<uint32_t>{0u, {}};
  if (b.inherit().depth() == 0)
    return fail<uint32_t>(at(path, "boost.inherit.depth"), "must be 1 or 2 (omit boost.inherit to turn inheritance off)");
  return Converted<uint32_t>{b.inherit().depth(), {}};
}

// spec.classify from the proto: "" is the default (propose).
Converted<ClassifyMode> classify_from(const std::string& v, const std::string& field) {
  if (v.empty()) return Converted<ClassifyMode>{ClassifyMode::Propose, {}};
  if (auto m = classify_mode_from_string(v)) return Converted<ClassifyMode>{*m, {}};
  return fail<ClassifyMode>(field, "unknown mode '" + echo(v) + "' (propose, apply, off)");
}

void controller_to(const std::optional<ControllerSpec>& s, pb::ControllerSpec* c) {
  c->set_role(s->role);
  if (s->target == ControllerTarget::StepP99)
    c->mutable_target()->set_step_p99(codec::format_duration(s->target_ns));
  else
    c->mutable_target()->set_run_delay_p99(codec::format_duration(s->target_ns));
  c->mutable_actions()->set_boost(s->boost);
  if (s->slice) {
    auto* sl = c->mutable_actions()->mutable_slice();
    sl->set_from(codec::format_duration(s->slice->from));
    sl->set_to(codec::format_duration(s->slice->to));
    sl->set_step(codec::format_duration(s->slice->step));
  }
  if (s->preferred_cpus) c->mutable_actions()->set_preferred_cpus(s->preferred_cpus->to_string());
  c->set_cooldown(codec::format_duration(s->cooldown));
  c->set_hysteresis(codec::format_duration(s->hysteresis));
  c->set_max_raised(codec::format_duration(s->max_raised));
  c->set_window(codec::format_duration(s->window));
  c->set_windows_without_signal(s->windows_without_signal);
}

}  // namespace

std::optional<FieldError> check_string(const std::string& field, const std::string& s, size_t max) {
  if (s.size() > max)
    return FieldError{field, "longer than " + std::to_string(max) + " bytes (" + std::to_string(s.size()) + ")"};
  if (s.find('\0') != std::string::npos) return FieldError{field, "contains a NUL byte"};
  return std::nullopt;
}


// ---- policies --------------------------------------------------------------------------------

Converted<DraExecutionPolicy> from_proto(const pb::DRAExecutionPolicy& p, const std::string& path, Check check) {
  using R = Converted<DraExecutionPolicy>;
  DraExecutionPolicy d;
  if (auto e = check_string(at(path, "name"), p.name(), 253)) return fail<DraExecutionPolicy>(e->field, e->message);
  d.name = p.name();
  d.generation = p.generation();
  if (auto e = check_map(at(path, "match_labels"), p.match_labels())) return fail<DraExecutionPolicy>(e->field, e->message);
  d.match_labels = to_std_map(p.match_labels());
  if (auto e = check_count(at(path, "resource_claims"), p.resource_claims_size()))
    return fail<DraExecutionPolicy>(e->field, e->message);
  for (int i = 0; i < p.resource_claims_size(); ++i) {
    if (auto e = check_string(idx(at(path, "resource_claims"), static_cast<size_t>(i)), p.resource_claims(i), 253))
      return fail<DraExecutionPolicy>(e->field, e->message);
    d.resource_claims.push_back(p.resource_claims(i));
  }
  d.respect_allocated_cpuset = p.respect_allocated_cpuset();
  d.prefer_same_numa = p.prefer_same_numa();
  d.prefer_same_pcie_root = p.prefer_same_pcie_root();
  if (auto e = check_count(at(path, "task_roles"), p.task_roles_size())) return fail<DraExecutionPolicy>(e->field, e->message);
  for (int i = 0; i < p.task_roles_size(); ++i) {
    const auto& r = p.task_roles(i);
    std::string f = idx(at(path, "task_roles"), static_cast<size_t>(i));
    for (const auto& [name, value] : {std::pair{"name", &r.name()}, std::pair{"registered_role", &r.registered_role()},
                                      std::pair{"command_regex", &r.command_regex()},
                                      std::pair{"process_regex", &r.process_regex()}})
      if (auto e = check_string(f + "." + name, *value)) return fail<DraExecutionPolicy>(e->field, e->message);
    TaskRole role;
    role.name = r.name();
    role.registered_role = r.registered_role();
    role.comm_regex = r.command_regex();
    role.process_regex = r.process_regex();
    auto inherit = boost_inherit_from(r.has_boost(), r.boost(), f);
    if (!inherit.ok()) return fail<DraExecutionPolicy>(inherit.error.field, inherit.error.message);
    role.boost_inherit_depth = *inherit.value;
    if (r.execution_class().empty()) {
      role.exec_class = ExecClass::Normal;
    } else {
      auto c = exec_class_from_string(r.execution_class());
      if (!c)
        return fail<DraExecutionPolicy>(f + ".execution_class",
                                        "unknown execution class '" + echo(r.execution_class()) +
                                            "' (latency-critical, communication-progress, throughput, background, normal)");
      role.exec_class = *c;
    }
    d.task_roles.push_back(std::move(role));
  }
  d.require_preview = p.require_preview();
  if (!p.max_boost_duration().empty()) {
    if (auto e = check_string(at(path, "max_boost_duration"), p.max_boost_duration(), 64))
      return fail<DraExecutionPolicy>(e->field, e->message);
    auto ns = codec::parse_duration_ns(p.max_boost_duration());
    if (!ns)
      return fail<DraExecutionPolicy>(at(path, "max_boost_duration"),
                                      "invalid duration '" + echo(p.max_boost_duration()) + "' (use e.g. \"500ms\", \"30s\")");
    d.max_boost = *ns;
  }
  d.fail_closed_on_stale_claim = p.fail_closed_on_stale_claim();
  if (!p.fallback().empty()) {
    if (auto e = check_string(at(path, "fallback"), p.fallback(), 64)) return fail<DraExecutionPolicy>(e->field, e->message);
    d.fallback = p.fallback();
  }
  auto controller = controller_from(p.has_controller(), p.controller(), path);
  if (!controller.ok()) return fail<DraExecutionPolicy>(controller.error.field, controller.error.message);
  d.controller = *controller.value;
  auto classify = classify_from(p.classify(), at(path, "classify"));
  if (!classify.ok()) return fail<DraExecutionPolicy>(classify.error.field, classify.error.message);
  d.classify = *classify.value;
  if (auto e = check == Check::Full ? validate(d) : std::nullopt) {
    auto t = translate(*e, path);
    return fail<DraExecutionPolicy>(t.field, t.message);
  }
  R r;
  r.value = std::move(d);
  return r;
}

Converted<NodeSchedulingPolicy> from_proto(const pb::NodeSchedulingPolicy& p, const std::string& path, Check check) {
  NodeSchedulingPolicy n;
  if (auto e = check_string(at(path, "name"), p.name(), 253)) return fail<NodeSchedulingPolicy>(e->field, e->message);
  n.name = p.name();
  n.generation = p.generation();
  if (auto e = check_count(at(path, "node_names"), p.node_names_size())) return fail<NodeSchedulingPolicy>(e->field, e->message);
  for (int i = 0; i < p.node_names_size(); ++i) {
    if (auto e = check_string(idx(at(path, "node_names"), static_cast<size_t>(i)), p.node_names(i), 253))
      return fail<NodeSchedulingPolicy>(e->field, e->message);
    n.node_names.push_back(p.node_names(i));
  }
  if (auto e = check_map(at(path, "node_selectors"), p.node_selectors())) return fail<NodeSchedulingPolicy>(e->field, e->message);
  n.node_selectors = to_std_map(p.node_selectors());
  if (auto e = check_count(at(path, "node_selector_expressions"), p.node_selector_expressions_size()))
    return fail<NodeSchedulingPolicy>(e->field, e->message);
  for (int i = 0; i < p.node_selector_expressions_size(); ++i) {
    const auto& x = p.node_selector_expressions(i);
    const std::string f = idx(at(path, "node_selector_expressions"), static_cast<size_t>(i));
    auto op = label_operator_from_string(x.operator_());
    if (!op)
      return fail<NodeSchedulingPolicy>(f + ".operator", "unknown operator '" + echo(x.operator_()) +
                                                             "' (In, NotIn, Exists, DoesNotExist)");
    if (auto e = check_count(f + ".values", x.values_size())) return fail<NodeSchedulingPolicy>(e->field, e->message);
    LabelRequirement r{x.key(), *op, {x.values().begin(), x.values().end()}};
    n.node_selector_expressions.push_back(std::move(r));
  }
  if (auto e = check_count(at(path, "dra_selectors"), p.dra_selectors_size())) return fail<NodeSchedulingPolicy>(e->field, e->message);
  for (int i = 0; i < p.dra_selectors_size(); ++i) {
    const auto& s = p.dra_selectors(i);
    std::string f = idx(at(path, "dra_selectors"), static_cast<size_t>(i));
    for (const auto& [name, value] :
         {std::pair{"driver", &s.driver()}, std::pair{"pool", &s.pool()}, std::pair{"device", &s.device()}})
      if (auto e = check_string(f + "." + name, *value, 253)) return fail<NodeSchedulingPolicy>(e->field, e->message);
    n.dra_selectors.push_back(DraSelector{s.driver(), s.pool(), s.device()});
  }
  if (auto e = check_string(at(path, "command_regex"), p.command_regex(), 1024))
    return fail<NodeSchedulingPolicy>(e->field, e->message);
  n.command_regex = p.command_regex();
  if (auto e = check_string(at(path, "process_regex"), p.process_regex(), 1024))
    return fail<NodeSchedulingPolicy>(e->field, e->message);
  n.process_regex = p.process_regex();
  n.priority = p.priority();
  n.execution_time = p.execution_time_ns();
  auto inherit = boost_inherit_from(p.has_boost(), p.boost(), path);
  if (!inherit.ok()) return fail<NodeSchedulingPolicy>(inherit.error.field, inherit.error.message);
  n.boost_inherit_depth = *inherit.value;
  auto controller = controller_from(p.has_controller(), p.controller(), path);
  if (!controller.ok()) return fail<NodeSchedulingPolicy>(controller.error.field, controller.error.message);
  n.controller = *controller.value;
  auto classify = classify_from(p.classify(), at(path, "classify"));
  if (!classify.ok()) return fail<NodeSchedulingPolicy>(classify.error.field, classify.error.message);
  n.classify = *classify.value;
  if (auto e = check == Check::Full ? validate(n) : std::nullopt) {
    auto t = translate(*e, path);
    return fail<NodeSchedulingPolicy>(t.field, t.message);
  }
  return ok(std::move(n));
}

Converted<AnyPolicy> from_proto(const pb::Policy& p, const std::string& path, Check check) {
  switch (p.kind_case()) {
    case pb::Policy::kDra: {
      auto d = from_proto(p.dra(), at(path, "dra"), check);
      if (!d.ok()) return fail<AnyPolicy>(d.error.field, d.error.message);
      return ok<AnyPolicy>(std::move(*d.value));
    }
    case pb::Policy::kNode: {
      auto n = from_proto(p.node(), at(path, "node"), check);
      if (!n.ok()) return fail<AnyPolicy>(n.error.field, n.error.message);
      return ok<AnyPolicy>(std::move(*n.value));
    }
    case pb::Policy::KIND_NOT_SET: break;
  }
  return fail<AnyPolicy>(at(path, "kind"), "set exactly one of dra (DRAExecutionPolicy) or node (NodeSchedulingPolicy)");
}

Converted<PolicyKind> kind_from_proto(pb::PolicyKind k, const std::string& path) {
  if (k == pb::DRA_EXECUTION_POLICY) return ok(PolicyKind::Dra);
  if (k == pb::NODE_SCHEDULING_POLICY) return ok(PolicyKind::Node);
  return fail<PolicyKind>(path, "must be DRA_EXECUTION_POLICY or NODE_SCHEDULING_POLICY");
}

pb::DRAExecutionPolicy to_proto(const DraExecutionPolicy& p) {
  pb::DRAExecutionPolicy o;
  o.set_name(p.name);
  o.set_generation(p.generation);
  o.mutable_match_labels()->insert(p.match_labels.begin(), p.match_labels.end());
  for (const auto& c : p.resource_claims) o.add_resource_claims(c);
  o.set_respect_allocated_cpuset(p.respect_allocated_cpuset);
  o.set_prefer_same_numa(p.prefer_same_numa);
  o.set_prefer_same_pcie_root(p.prefer_same_pcie_root);
  for (const auto& r : p.task_roles) {
    auto* t = o.add_task_roles();
    t->set_name(r.name);
    t->set_registered_role(r.registered_role);
    t->set_command_regex(r.comm_regex);
    t->set_process_regex(r.process_regex);
    t->set_execution_class(to_string(r.exec_class));
    if (r.boost_inherit_depth) t->mutable_boost()->mutable_inherit()->set_depth(r.boost_inherit_depth);
  }
  o.set_require_preview(p.require_preview);
  o.set_max_boost_duration(codec::format_duration(p.max_boost));
  o.set_fail_closed_on_stale_claim(p.fail_closed_on_stale_claim);
  o.set_fallback(p.fallback);
  if (p.controller) controller_to(p.controller, o.mutable_controller());
  if (p.classify != ClassifyMode::Propose) o.set_classify(to_string(p.classify));
  return o;
}

pb::NodeSchedulingPolicy to_proto(const NodeSchedulingPolicy& p) {
  pb::NodeSchedulingPolicy o;
  o.set_name(p.name);
  o.set_generation(p.generation);
  for (const auto& n : p.node_names) o.add_node_names(n);
  o.mutable_node_selectors()->insert(p.node_selectors.begin(), p.node_selectors.end());
  for (const auto& r : p.node_selector_expressions) {
    auto* x = o.add_node_selector_expressions();
    x->set_key(r.key);
    x->set_operator_(to_string(r.op));
    for (const auto& v : r.values) x->add_values(v);
  }
  for (const auto& s : p.dra_selectors) {
    auto* d = o.add_dra_selectors();
    d->set_driver(s.driver);
    d->set_pool(s.pool);
    d->set_device(s.device);
  }
  o.set_command_regex(p.command_regex);
  o.set_process_regex(p.process_regex);
  o.set_priority(p.priority);
  o.set_execution_time_ns(p.execution_time);
  if (p.boost_inherit_depth) o.mutable_boost()->mutable_inherit()->set_depth(p.boost_inherit_depth);
  if (p.controller) controller_to(p.controller, o.mutable_controller());
  if (p.classify != ClassifyMode::Propose) o.set_classify(to_string(p.classify));
  return o;
}

pb::Policy to_proto(const AnyPolicy& p) {
  pb::Policy o;
  if (const auto* d = std::get_if<DraExecutionPolicy>(&p))
    *o.mutable_dra() = to_proto(*d);
  else
    *o.mutable_node() = to_proto(std::get<NodeSchedulingPolicy>(p));
  return o;
}

pb::PolicyKind to_proto(PolicyKind k) { return k == PolicyKind::Dra ? pb::DRA_EXECUTION_POLICY : pb::NODE_SCHEDULING_POLICY; }


// ---- claim bindings and pods -----------------------------------------------------------------

Converted<std::vector<Claim>> claims_from_bindings(
    const google::protobuf::RepeatedPtrField<pb::ClaimDeviceBinding>& bindings, const std::string& path) {
  using V = std::vector<Claim>;
  if (bindings.empty()) return fail<V>(path, "at least one binding is needed");
  if (auto e = check_count(path, bindings.size())) return fail<V>(e->field, e->message);
  V claims;
  std::vector<size_t> first_index;  // bindings index where each claim first appeared
  for (int i = 0; i < bindings.size(); ++i) {
    const auto& b = bindings[i];
    std::string f = idx(path, static_cast<size_t>(i));
    const std::pair<const char*, const std::string*> strings[] = {
        {"claim_uid", &b.claim_uid()}, {"pod_uid", &b.pod_uid()}, {"node_name", &b.node_name()},
        {"driver", &b.driver()},       {"pool", &b.pool()},       {"device", &b.device()},
        {"share_id", &b.share_id()},   {"pcie_root", &b.pcie_root()}, {"pci_bus_id", &b.pci_bus_id()},
        {"request", &b.request()},     {"claim_namespace", &b.claim_namespace()},
        {"claim_name", &b.claim_name()}, {"pod_name", &b.pod_name()}};
    for (const auto& [name, value] : strings)
      if (auto e = check_string(f + "." + name, *value, 253)) return fail<V>(e->field, e->message);
    if (b.claim_uid().empty()) return fail<V>(f + ".claim_uid", "must not be empty");
    if (b.claim_generation() < 1) return fail<V>(f + ".claim_generation", "must be at least 1");
    if (b.driver().empty()) return fail<V>(f + ".driver", "must not be empty");
    if (b.pool().empty()) return fail<V>(f + ".pool", "must not be empty");
    if (b.device().empty()) return fail<V>(f + ".device", "must not be empty");
    if (auto e = check_count(f + ".numa_nodes", b.numa_nodes_size())) return fail<V>(e->field, e->message);
    AllocatedDevice d;
    d.request = b.request();
    d.driver = b.driver();
    d.pool = b.pool();
    d.device = b.device();
    d.share_id = b.share_id();
    for (int j = 0; j < b.numa_nodes_size(); ++j) {
      int n = b.numa_nodes(j);
      if (n < 0 || n > 1023)
        return fail<V>(idx(f + ".numa_nodes", static_cast<size_t>(j)), "NUMA node " + std::to_string(n) + " out of range 0..1023");
      d.numa_nodes.push_back(n);
    }
    d.pcie_root = b.pcie_root();
    d.pci_bus_id = b.pci_bus_id();
    auto cpus = cpus_from(f + ".cpus", b.cpus());
    if (!cpus.ok()) return fail<V>(cpus.error.field, cpus.error.message);
    d.cpus = *cpus.value;

    auto it = std::find_if(claims.begin(), claims.end(), [&](const Claim& c) { return c.uid == b.claim_uid(); });
    if (it == claims.end()) {
      Claim c;
      c.uid = b.claim_uid();
      c.generation = b.claim_generation();
      c.node = b.node_name();
      claims.push_back(std::move(c));
      first_index.push_back(static_cast<size_t>(i));
      it = claims.end() - 1;
    } else {
      size_t first = first_index[static_cast<size_t>(it - claims.begin())];
      if (it->generation != b.claim_generation())
        return fail<V>(f + ".claim_generation", "differs from bindings[" + std::to_string(first) +
                                                    "] of the same claim (" + std::to_string(it->generation) + ")");
      if (it->node != b.node_name())
        return fail<V>(f + ".node_name", "differs from bindings[" + std::to_string(first) + "] of the same claim ('" +
                                             it->node + "')");
    }
    if (std::find(it->devices.begin(), it->devices.end(), d) == it->devices.end()) it->devices.push_back(std::move(d));
    if (!b.pod_uid().empty() &&
        std::find(it->reserved_for.begin(), it->reserved_for.end(), b.pod_uid()) == it->reserved_for.end())
      it->reserved_for.push_back(b.pod_uid());
  }
  for (size_t c = 0; c < claims.size(); ++c)
    if (auto e = validate(claims[c]))
      return fail<V>(idx(path, first_index[c]) + "." + binding_field_of(e->field), e->message);
  return ok(std::move(claims));
}

std::vector<pb::ClaimDeviceBinding> bindings_from_claim(const Claim& c) {
  std::vector<pb::ClaimDeviceBinding> out;
  std::vector<std::string> pods = c.reserved_for;
  if (pods.empty()) pods.emplace_back();
  for (const auto& pod : pods)
    for (const auto& d : c.devices) {
      pb::ClaimDeviceBinding b = device_binding(d);
      b.set_claim_uid(c.uid);
      b.set_claim_generation(c.generation);
      b.set_pod_uid(pod);
      b.set_node_name(c.node);
      out.push_back(std::move(b));
    }
  return out;
}

pb::ClaimDeviceBinding device_binding(const AllocatedDevice& d) {
  pb::ClaimDeviceBinding b;
  b.set_driver(d.driver);
  b.set_pool(d.pool);
  b.set_device(d.device);
  b.set_share_id(d.share_id);
  for (int n : d.numa_nodes) b.add_numa_nodes(n);
  b.set_pcie_root(d.pcie_root);
  b.set_pci_bus_id(d.pci_bus_id);
  if (d.cpus) b.set_cpus(d.cpus->to_string());
  b.set_request(d.request);
  return b;
}

Converted<Pod> from_proto(const pb::PodInfo& p, const std::string& path) {
  Pod o;
  const std::pair<const char*, const std::string*> strings[] = {
      {"uid", &p.uid()}, {"namespace", &p.namespace_()}, {"name", &p.name()}, {"cgroup", &p.cgroup()}};
  for (const auto& [name, value] : strings)
    if (auto e = check_string(at(path, name), *value)) return fail<Pod>(e->field, e->message);
  if (auto e = check_map(at(path, "labels"), p.labels())) return fail<Pod>(e->field, e->message);
  if (auto e = check_map(at(path, "claims"), p.claims())) return fail<Pod>(e->field, e->message);
  if (auto e = check_map(at(path, "task_roles"), p.task_roles())) return fail<Pod>(e->field, e->message);
  o.uid = p.uid();
  o.namespace_ = p.namespace_();
  o.name = p.name();
  o.labels = to_std_map(p.labels());
  o.claims = to_std_map(p.claims());
  o.task_roles = to_std_map(p.task_roles());
  o.cgroup = p.cgroup();
  auto cpus = cpus_from(at(path, "cpus"), p.cpus());
  if (!cpus.ok()) return fail<Pod>(cpus.error.field, cpus.error.message);
  if (*cpus.value && (*cpus.value)->empty()) return fail<Pod>(at(path, "cpus"), "an effective cpuset is never empty");
  o.cpuset = *cpus.value;
  if (auto e = validate(o)) return fail<Pod>(at(path, pod_field_of(e->field)), e->message);
  return ok(std::move(o));
}

pb::PodInfo to_proto(const Pod& p) {
  pb::PodInfo o;
  o.set_uid(p.uid);
  o.set_namespace_(p.namespace_);
  o.set_name(p.name);
  o.mutable_labels()->insert(p.labels.begin(), p.labels.end());
  o.mutable_claims()->insert(p.claims.begin(), p.claims.end());
  o.mutable_task_roles()->insert(p.task_roles.begin(), p.task_roles.end());
  o.set_cgroup(p.cgroup);
  if (p.cpuset) o.set_cpus(p.cpuset->to_string());
  return o;
}

// ---- tasks, entries, lineage, preview ------------------------------------------------------------

pb::Task to_proto(const Task& t, const std::string& pod_uid) {
  pb::Task o;
  o.set_tid(t.key.tid);
  o.set_start(t.key.start);
  o.set_tgid(t.tgid);
  o.set_comm(t.comm);
  o.set_cgroup(t.cgroup);
  o.set_pod_uid(pod_uid);
  o.set_title(t.title);
  return o;
}

Converted<Task> from_proto(const pb::Task& t, const std::string& path) {
  Task o;
  o.key = TaskKey{t.tid(), t.start()};
  o.tgid = t.tgid();
  if (auto e = check_string(at(path, "cgroup"), t.cgroup())) return fail<Task>(e->field, e->message);
  o.comm = t.comm();
  o.cgroup = t.cgroup();
  o.title = t.title();
  if (auto e = validate(o)) {
    FieldPath f = FieldPath::parse(e->field);
    if (f.size() > 1 && f.starts_with({"task"})) f = f.drop_front(1);
    return fail<Task>(at(path, f.str()), e->message);
  }
  return ok(std::move(o));
}

std::vector<std::string> flag_names(uint8_t flags) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : kRuntimeFlagNames)
    if (flags & bit) out.emplace_back(name);
  return out;
}

std::optional<uint8_t> flags_from_names(const std::vector<std::string>& names) {
  uint8_t flags = 0;
  for (const auto& n : names) {
    bool known = false;
    for (const auto& [bit, name] : kRuntimeFlagNames)
      if (n == name) {
        flags = static_cast<uint8_t>(flags | bit);
        known = true;
      }
    if (!known) return std::nullopt;
  }
  return flags;
}

pb::RuntimeEntry to_proto(uint32_t tid, const RuntimeValue& v) {
  pb::RuntimeEntry o;
  o.set_tid(tid);
  o.set_start(v.start);
  o.set_tgid(v.tgid);
  o.set_generation(v.generation);
  o.set_execution_class(to_string(v.exec_class));
  o.set_slice_ns(v.slice_ns);
  o.set_boost_until_ns(v.boost_until);
  o.set_max_boost_ns(v.max_boost);
  o.set_allowed_cpus(v.allowed.to_string());
  o.set_preferred_cpus(v.preferred.to_string());
  for (auto& f : flag_names(v.flags)) o.add_flags(f);
  return o;
}

Converted<RuntimeValue> from_proto(const pb::RuntimeEntry& e, const std::string& path) {
  RuntimeValue v;
  v.start = e.start();
  v.tgid = e.tgid();
  v.generation = e.generation();
  if (e.execution_class() == "unmatched" || e.execution_class().empty()) {
    v.exec_class = ExecClass::Unmatched;
  } else {
    auto c = exec_class_from_string(e.execution_class());
    if (!c) return fail<RuntimeValue>(at(path, "execution_class"), "unknown execution class");
    v.exec_class = *c;
  }
  v.slice_ns = e.slice_ns();
  v.boost_until = e.boost_until_ns();
  v.max_boost = e.max_boost_ns();
  auto allowed = cpus_from(at(path, "allowed_cpus"), e.allowed_cpus());
  if (!allowed.ok()) return fail<RuntimeValue>(allowed.error.field, allowed.error.message);
  v.allowed = allowed.value->value_or(CpuSet{});
  auto preferred = cpus_from(at(path, "preferred_cpus"), e.preferred_cpus());
  if (!preferred.ok()) return fail<RuntimeValue>(preferred.error.field, preferred.error.message);
  v.preferred = preferred.value->value_or(CpuSet{});
  auto flags = flags_from_names({e.flags().begin(), e.flags().end()});
  if (!flags) return fail<RuntimeValue>(at(path, "flags"), "unknown flag (boost, custom-slice, allowed-cpus, preferred-cpus, inherited)");
  v.flags = *flags;
  return ok(std::move(v));
}

pb::Lineage to_proto(const Lineage& l) {
  pb::Lineage o;
  for (const auto& c : l.claims) {
    auto* r = o.add_claims();
    r->set_uid(c.uid);
    r->set_generation(c.generation);
  }
  o.set_pod_uid(l.pod_uid);
  o.set_cgroup(l.cgroup);
  o.set_tid(l.task.tid);
  o.set_start(l.task.start);
  o.set_tgid(l.tgid);
  o.set_comm(l.comm);
  o.set_title(l.title);
  o.set_policy_kind(to_proto(l.policy_kind));
  o.set_policy(l.policy);
  o.set_policy_generation(l.policy_generation);
  o.set_role(l.role);
  o.set_role_source(l.role_source);
  o.set_strategy(to_string(l.strategy));
  *o.mutable_entry() = to_proto(l.task.tid, l.value);
  return o;
}

Converted<Lineage> from_proto(const pb::Lineage& l, const std::string& path) {
  Lineage o;
  for (const auto& c : l.claims()) o.claims.push_back(ClaimRef{c.uid(), c.generation()});
  o.pod_uid = l.pod_uid();
  o.cgroup = l.cgroup();
  o.task = TaskKey{l.tid(), l.start()};
  o.tgid = l.tgid();
  o.comm = l.comm();
  o.title = l.title();
  auto k = kind_from_proto(l.policy_kind(), at(path, "policy_kind"));
  if (!k.ok()) return fail<Lineage>(k.error.field, k.error.message);
  o.policy_kind = *k.value;
  o.policy = l.policy();
  o.policy_generation = l.policy_generation();
  o.role = l.role();
  o.role_source = l.role_source();
  if (l.strategy() == "exact-tid")
    o.strategy = Strategy::ExactTid;
  else if (l.strategy() == "tgid")
    o.strategy = Strategy::Tgid;
  else
    return fail<Lineage>(at(path, "strategy"), "must be exact-tid or tgid");
  auto v = from_proto(l.entry(), at(path, "entry"));
  if (!v.ok()) return fail<Lineage>(v.error.field, v.error.message);
  o.value = *v.value;
  return ok(std::move(o));
}

pb::Conflict to_proto(const c2c::Conflict& c) {
  pb::Conflict o;
  o.set_tid(c.task.tid);
  o.set_start(c.task.start);
  o.set_winner(c.winner);
  for (const auto& l : c.losers) o.add_losers(l);
  o.set_rule(c.rule);
  return o;
}

c2c::Conflict from_proto(const pb::Conflict& c) {
  return c2c::Conflict{TaskKey{c.tid(), c.start()}, c.winner(), {c.losers().begin(), c.losers().end()}, c.rule()};
}

pb::PreviewResponse to_proto(const PreviewResult& r) {
  pb::PreviewResponse o;
  o.set_policy_generation(r.policy_generation);
  o.set_node_generation(r.node_generation);
  o.set_policy(std::string(to_string(r.kind)) + "/" + r.policy);
  for (const auto& m : r.matched) {
    auto* t = o.add_matched();
    t->set_tid(m.key.tid);
    t->set_start(m.key.start);
    t->set_tgid(m.tgid);
    t->set_comm(m.comm);
    t->set_title(m.title);
    t->set_role(m.role);
    t->set_role_source(m.role_source);
    t->set_strategy(to_string(m.strategy));
    if (m.intended) *t->mutable_intended() = to_proto(m.key.tid, *m.intended);
    if (m.actual) *t->mutable_actual() = to_proto(m.key.tid, *m.actual);
  }
  for (const auto& c : r.conflicts) *o.add_conflicts() = to_proto(c);
  for (const auto& w : r.warnings) o.add_warnings(w);
  if (!r.acknowledgement.empty()) o.add_warnings(r.acknowledgement);
  return o;
}

Converted<PreviewResult> from_proto(const pb::PreviewResponse& r, const std::string& path) {
  PreviewResult o;
  const std::string& policy = r.policy();
  auto slash = policy.find('/');
  if (slash != std::string::npos) {
    std::string kind = policy.substr(0, slash);
    if (kind == to_string(PolicyKind::Dra))
      o.kind = PolicyKind::Dra;
    else if (kind == to_string(PolicyKind::Node))
      o.kind = PolicyKind::Node;
    else
      return fail<PreviewResult>(at(path, "policy"), "kind must be DRAExecutionPolicy or NodeSchedulingPolicy");
    o.policy = policy.substr(slash + 1);
  } else {
    o.policy = policy;
  }
  o.policy_generation = r.policy_generation();
  o.node_generation = r.node_generation();
  for (int i = 0; i < r.matched_size(); ++i) {
    const auto& t = r.matched(i);
    std::string f = idx(at(path, "matched"), static_cast<size_t>(i));
    MatchedTask m;
    m.key = TaskKey{t.tid(), t.start()};
    m.tgid = t.tgid();
    m.comm = t.comm();
    m.title = t.title();
    m.role = t.role();
    m.role_source = t.role_source();
    if (t.strategy() == "tgid")
      m.strategy = Strategy::Tgid;
    else if (t.strategy() == "exact-tid")
      m.strategy = Strategy::ExactTid;
    else
      return fail<PreviewResult>(f + ".strategy", "must be exact-tid or tgid");
    if (t.has_intended()) {
      auto v = from_proto(t.intended(), f + ".intended");
      if (!v.ok()) return fail<PreviewResult>(v.error.field, v.error.message);
      m.intended = *v.value;
    }
    if (t.has_actual()) {
      auto v = from_proto(t.actual(), f + ".actual");
      if (!v.ok()) return fail<PreviewResult>(v.error.field, v.error.message);
      m.actual = *v.value;
    }
    o.matched.push_back(std::move(m));
  }
  for (const auto& c : r.conflicts()) o.conflicts.push_back(from_proto(c));
  o.warnings.assign(r.warnings().begin(), r.warnings().end());
  return ok(std::move(o));
}

}  // namespace c2c::api
