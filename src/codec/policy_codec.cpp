#include "codec/policy_codec.hpp"

#include "core/core.hpp"
#include "codec/json_reader.hpp"
#include "core/names.hpp"

namespace c2c::codec {

using nlohmann::json;

std::optional<PolicyKind> policy_kind_from_string(const std::string& s) {
  if (s == "DRAExecutionPolicy") return PolicyKind::Dra;
  if (s == "NodeSchedulingPolicy") return PolicyKind::Node;
  return std::nullopt;
}

namespace {

uint64_t required_duration(const Reader& r, const char* key) {
  if (!r.has(key)) r.fail(key, "is required");
  return r.duration_ns_or(key, 0);
}

// spec.controller (issue 46; core/controller.hpp). Every duration but the slice's is required: a
// controller acts on its own, so nothing about its pace is left to a default the operator did not
// read. The core's validation then checks the combinations (decode_policy).
std::optional<ControllerSpec> decode_controller(const Reader& spec) {
  auto c = spec.opt_child("controller");
  if (!c) return std::nullopt;
  c->only({"role", "target", "actions", "cooldown", "hysteresis", "maxRaised", "window", "windowsWithoutSignal"});
  ControllerSpec s;
  s.role = c->str_or("role", "");
  Reader target = c->child("target");
  target.only({"runDelayP99", "stepP99"});
  const bool run_delay = target.has("runDelayP99");
  if (run_delay == target.has("stepP99")) c->fail("target", "set exactly one of runDelayP99 or stepP99");
  s.target = run_delay ? ControllerTarget::RunDelayP99 : ControllerTarget::StepP99;
  s.target_ns = required_duration(target, run_delay ? "runDelayP99" : "stepP99");
  Reader actions = c->child("actions");
  actions.only({"boost", "slice", "preferredCPUs"});
  s.boost = actions.boolean_or("boost", false);
  if (auto slice = actions.opt_child("slice")) {
    slice->only({"from", "to", "step"});
    s.slice = ControllerSlice{required_duration(*slice, "from"), required_duration(*slice, "to"),
                              required_duration(*slice, "step")};
  }
  s.preferred_cpus = actions.cpus("preferredCPUs");
  s.cooldown = required_duration(*c, "cooldown");
  s.hysteresis = required_duration(*c, "hysteresis");
  s.max_raised = required_duration(*c, "maxRaised");
  s.window = required_duration(*c, "window");
  const int64_t silent = c->i64_or("windowsWithoutSignal", 3);
  if (silent < 1 || silent > kControllerMaxSilentWindows) c->fail("windowsWithoutSignal", "must be between 1 and 1000");
  s.windows_without_signal = static_cast<uint32_t>(silent);
  return s;
}

json encode_controller(const ControllerSpec& s) {
  json actions = json::object();
  if (s.boost) actions["boost"] = true;
  if (s.slice)
    actions["slice"] = {{"from", format_duration(s.slice->from)},
                        {"to", format_duration(s.slice->to)},
                        {"step", format_duration(s.slice->step)}};
  if (s.preferred_cpus) actions["preferredCPUs"] = s.preferred_cpus->to_string();
  json c{{"target", {{to_string(s.target), format_duration(s.target_ns)}}},
         {"actions", actions},
         {"cooldown", format_duration(s.cooldown)},
         {"hysteresis", format_duration(s.hysteresis)},
         {"maxRaised", format_duration(s.max_raised)},
         {"window", format_duration(s.window)},
         {"windowsWithoutSignal", s.windows_without_signal}};
  if (!s.role.empty()) c["role"] = s.role;
  return c;
}

// boost: {inherit: {depth: 1|2}} (issue 43 item 3): absent is off. The range and the boosting class
// are the core's validation (validate.cpp, check_boost_inherit); here the shape, and a depth that
// fits its field (a huge one is refused as out of range, not cut).
uint32_t decode_boost_inherit(const Reader& parent) {
  auto boost = parent.opt_child("boost");
  if (!boost) return 0;
  boost->only({"inherit"});
  auto inherit = boost->opt_child("inherit");
  if (!inherit) return 0;
  inherit->only({"depth"});
  const int64_t depth = inherit->i64("depth");
  if (depth < 1 || depth > static_cast<int64_t>(kMaxBoostInheritDepth))
    inherit->fail("depth", "must be 1 or 2 (omit boost.inherit to turn inheritance off)");
  return static_cast<uint32_t>(depth);
}

json encode_boost_inherit(uint32_t depth) { return {{"inherit", {{"depth", depth}}}}; }

// spec.classify (issue 46 item 4): propose (default) | apply | off.
ClassifyMode decode_classify(const Reader& spec) {
  const std::string v = spec.str_or("classify", "propose");
  auto m = classify_mode_from_string(v);
  if (!m) spec.fail("classify", "unknown mode '" + echo(v) + "' (propose, apply, off)");
  return *m;
}

void read_metadata(const Reader& root, std::string& name, int64_t& generation) {
  Reader md = root.child("metadata");  // other metadata (labels, uid, ...) is Kubernetes' business
  name = md.str("name");
  generation = md.i64_or("generation", 0);
  if (generation < 0) md.fail("generation", "must not be negative");
}

DraExecutionPolicy decode_dra(const Reader& root) {
  DraExecutionPolicy p;
  read_metadata(root, p.name, p.generation);
  Reader spec = root.child("spec");
  spec.only({"workloadSelector", "resourceClaims", "topology", "taskRoles", "safety", "controller", "classify"});
  if (auto ws = spec.opt_child("workloadSelector")) {
    ws->only({"matchLabels"});
    p.match_labels = ws->string_map("matchLabels");
  }
  p.resource_claims = spec.strings("resourceClaims");
  if (auto topo = spec.opt_child("topology")) {
    topo->only({"respectAllocatedCPUSet", "preferSameNUMA", "preferSamePCIeRoot"});
    p.respect_allocated_cpuset = topo->boolean_or("respectAllocatedCPUSet", true);
    p.prefer_same_numa = topo->boolean_or("preferSameNUMA", false);
    p.prefer_same_pcie_root = topo->boolean_or("preferSamePCIeRoot", false);
  }
  for (const Reader& r : spec.array("taskRoles")) {
    r.only({"name", "selector", "executionClass", "boost"});
    TaskRole role;
    role.name = r.str("name");
    if (auto sel = r.opt_child("selector")) {
      sel->only({"registeredRole", "commandRegex", "processRegex"});
      role.registered_role = sel->str_or("registeredRole", "");
      role.comm_regex = sel->str_or("commandRegex", "");
      role.process_regex = sel->str_or("processRegex", "");
    }
    const std::string cls = r.str("executionClass");
    auto ec = exec_class_from_string(cls);
    if (!ec)
      r.fail("executionClass", "unknown class '" + echo(cls) +
                                   "' (latency-critical, communication-progress, throughput, background, normal)");
    role.exec_class = *ec;
    role.boost_inherit_depth = decode_boost_inherit(r);
    p.task_roles.push_back(role);
  }
  if (auto safety = spec.opt_child("safety")) {
    safety->only({"requirePreview", "maxBoostDuration", "failClosedOnStaleClaim", "fallback"});
    p.require_preview = safety->boolean_or("requirePreview", false);
    p.max_boost = safety->duration_ns_or("maxBoostDuration", p.max_boost);
    p.fail_closed_on_stale_claim = safety->boolean_or("failClosedOnStaleClaim", true);
    p.fallback = safety->str_or("fallback", p.fallback);
  }
  p.controller = decode_controller(spec);
  p.classify = decode_classify(spec);
  return p;
}

// nodeSelectors in either form: the seeds' map of labels (`{zone: a}`), or a Kubernetes
// LabelSelector (`{matchLabels: {...}, matchExpressions: [{key, operator, values}]}`). A map whose
// matchLabels or matchExpressions member is not a string is the second form (a label named
// "matchLabels" has a string value).
void decode_node_selectors(const Reader& spec, NodeSchedulingPolicy& p) {
  if (!spec.has("nodeSelectors")) return;
  const auto& raw = spec.raw().at("nodeSelectors");
  auto structured = [&](const char* k) { return raw.is_object() && raw.contains(k) && !raw.at(k).is_string(); };
  if (!structured("matchLabels") && !structured("matchExpressions")) {
    p.node_selectors = spec.string_map("nodeSelectors");
    return;
  }
  Reader sel = spec.child("nodeSelectors");
  sel.only({"matchLabels", "matchExpressions"});
  p.node_selectors = sel.string_map("matchLabels");
  for (const Reader& e : sel.array("matchExpressions")) {
    e.only({"key", "operator", "values"});
    LabelRequirement r;
    r.key = e.str("key");
    const std::string op = e.str("operator");
    auto parsed = label_operator_from_string(op);
    if (!parsed) e.fail("operator", "unknown operator '" + echo(op) + "' (In, NotIn, Exists, DoesNotExist)");
    r.op = *parsed;
    r.values = e.strings("values");
    p.node_selector_expressions.push_back(std::move(r));
  }
}

NodeSchedulingPolicy decode_node(const Reader& root) {
  NodeSchedulingPolicy p;
  read_metadata(root, p.name, p.generation);
  Reader spec = root.child("spec");
  spec.only({"nodeNames", "nodeSelectors", "draSelectors", "commandRegex", "processRegex", "priority", "executionTime",
             "controller", "classify", "boost"});
  p.node_names = spec.strings("nodeNames");
  decode_node_selectors(spec, p);
  for (const Reader& d : spec.array("draSelectors")) {
    d.only({"driver", "pool", "device"});
    p.dra_selectors.push_back({d.str("driver"), d.str_or("pool", ""), d.str_or("device", "")});
  }
  p.command_regex = spec.str_or("commandRegex", "");
  p.process_regex = spec.str_or("processRegex", "");
  int64_t prio = spec.i64_or("priority", 0);
  if (prio < 0 || prio > 1000) spec.fail("priority", "must be between 0 and 1000");
  p.priority = static_cast<int32_t>(prio);
  int64_t slice = spec.i64_or("executionTime", 0);
  if (slice < 0) spec.fail("executionTime", "must not be negative (nanoseconds)");
  p.execution_time = static_cast<Nanos>(slice);
  p.boost_inherit_depth = decode_boost_inherit(spec);
  p.controller = decode_controller(spec);
  p.classify = decode_classify(spec);
  return p;
}

// Field names in the core's validation errors are relative to the manifest; prefix them.
std::string under(const std::string& path, const std::string& field) { return path.empty() ? field : path + "." + field; }

}  // namespace

AnyPolicy decode_policy(const json& j, const std::string& path) {
  Reader root(j, path);
  root.only({"apiVersion", "kind", "metadata", "spec"});
  const std::string api = root.str("apiVersion");
  if (api != kPolicyApiVersion)
    root.fail("apiVersion", "unsupported '" + echo(api) + "' (expected " + kPolicyApiVersion + ")");
  const std::string kind = root.str("kind");
  auto k = policy_kind_from_string(kind);
  if (!k) root.fail("kind", "unknown policy kind '" + echo(kind) + "' (DRAExecutionPolicy or NodeSchedulingPolicy)");
  if (*k == PolicyKind::Dra) {
    auto p = decode_dra(root);
    if (auto e = validate(p)) {
      std::string f = e->field.rfind("metadata", 0) == 0 || e->field.rfind("spec", 0) == 0 ? e->field : "spec." + e->field;
      throw DecodeError(under(path, f), e->message);
    }
    return p;
  }
  auto p = decode_node(root);
  if (auto e = validate(p)) {
    std::string f = e->field.rfind("metadata", 0) == 0 ? e->field : "spec." + e->field;
    throw DecodeError(under(path, f), e->message);
  }
  return p;
}

json encode_policy(const DraExecutionPolicy& p) {
  json roles = json::array();
  for (const auto& r : p.task_roles) {
    json sel = json::object();
    if (!r.registered_role.empty()) sel["registeredRole"] = r.registered_role;
    if (!r.comm_regex.empty()) sel["commandRegex"] = r.comm_regex;
    if (!r.process_regex.empty()) sel["processRegex"] = r.process_regex;
    json role{{"name", r.name}, {"selector", sel}, {"executionClass", to_string(r.exec_class)}};
    if (r.boost_inherit_depth) role["boost"] = encode_boost_inherit(r.boost_inherit_depth);
    roles.push_back(std::move(role));
  }
  json out = {{"apiVersion", kPolicyApiVersion},
          {"kind", "DRAExecutionPolicy"},
          {"metadata", {{"name", p.name}, {"generation", p.generation}}},
          {"spec",
           {{"workloadSelector", {{"matchLabels", p.match_labels}}},
            {"resourceClaims", p.resource_claims},
            {"topology",
             {{"respectAllocatedCPUSet", p.respect_allocated_cpuset},
              {"preferSameNUMA", p.prefer_same_numa},
              {"preferSamePCIeRoot", p.prefer_same_pcie_root}}},
            {"taskRoles", roles},
            {"safety",
             {{"requirePreview", p.require_preview},
              {"maxBoostDuration", format_duration(p.max_boost)},
              {"failClosedOnStaleClaim", p.fail_closed_on_stale_claim},
              {"fallback", p.fallback}}}}}};
  if (p.controller) out["spec"]["controller"] = encode_controller(*p.controller);
  if (p.classify != ClassifyMode::Propose) out["spec"]["classify"] = to_string(p.classify);
  return out;
}

json encode_policy(const NodeSchedulingPolicy& p) {
  json dra = json::array();
  for (const auto& d : p.dra_selectors) {
    json s{{"driver", d.driver}};
    if (!d.pool.empty()) s["pool"] = d.pool;
    if (!d.device.empty()) s["device"] = d.device;
    dra.push_back(s);
  }
  json spec{{"priority", p.priority}, {"executionTime", p.execution_time}};
  if (!p.command_regex.empty()) spec["commandRegex"] = p.command_regex;
  if (!p.process_regex.empty()) spec["processRegex"] = p.process_regex;
  if (!p.node_names.empty()) spec["nodeNames"] = p.node_names;
  // The simple map form when it says everything (what the seeds and older traces hold).
  if (!p.node_selector_expressions.empty()) {
    json exprs = json::array();
    for (const auto& r : p.node_selector_expressions) {
      json e{{"key", r.key}, {"operator", to_string(r.op)}};
      if (!r.values.empty()) e["values"] = r.values;
      exprs.push_back(e);
    }
    spec["nodeSelectors"] = {{"matchLabels", p.node_selectors}, {"matchExpressions", exprs}};
  } else if (!p.node_selectors.empty()) {
    spec["nodeSelectors"] = p.node_selectors;
  }
  if (!dra.empty()) spec["draSelectors"] = dra;
  if (p.boost_inherit_depth) spec["boost"] = encode_boost_inherit(p.boost_inherit_depth);
  if (p.controller) spec["controller"] = encode_controller(*p.controller);
  if (p.classify != ClassifyMode::Propose) spec["classify"] = to_string(p.classify);
  return {{"apiVersion", kPolicyApiVersion},
          {"kind", "NodeSchedulingPolicy"},
          {"metadata", {{"name", p.name}, {"generation", p.generation}}},
          {"spec", spec}};
}

}  // namespace c2c::codec
