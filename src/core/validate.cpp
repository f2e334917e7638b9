// Input validation: every rejected input names its field; nothing is applied half-way.
#include <re2/re2.h>

#include <algorithm>

#include "core/core.hpp"
#include "core/core_impl.hpp"
#include "core/names.hpp"

namespace c2c {
namespace {

std::optional<FieldError> err(std::string field, std::string message) {
  return FieldError{std::move(field), std::move(message)};
}

// The kernel never puts a NUL byte in a name, and no Kubernetes name or UID holds one; a NUL would
// also be cut short by every C string API on the way to the map or a log.
std::optional<FieldError> check_text(const std::string& field, const std::string& s) {
  if (s.find('\0') != std::string::npos) return err(field, "must not contain a NUL byte");
  return std::nullopt;
}

// A comm as the kernel keeps it: at most TASK_COMM_LEN - 1 bytes, never a NUL. Any other byte
// may be in it (names are bytes, names.hpp): prctl(PR_SET_NAME, "x\ny") keeps the newline. (A
// newline was refused, so a rename to such a name left the task with the entry its former name
// had earned.)
std::optional<FieldError> check_comm(const std::string& field, const std::string& comm) {
  if (comm.size() > 15) return err(field, "longer than 15 bytes (TASK_COMM_LEN - 1)");
  if (comm.find('\0') != std::string::npos) return err(field, "must not contain a NUL byte");
  return std::nullopt;
}

std::optional<FieldError> check_generation(const std::string& field, int64_t g) {
  if (g < 0) return err(field, "must not be negative");
  if (g > kMaxGeneration) return err(field, "must be at most 2^53 (" + std::to_string(kMaxGeneration) + ")");
  return std::nullopt;
}

// Kubernetes object names: DNS-1123 subdomain, at most 253 characters.
bool valid_object_name(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  return s.front() != '-' && s.front() != '.' && s.back() != '-' && s.back() != '.';
}

// The compiled pattern goes to `keep` (when set), so the state stores this object (one compile).
std::optional<FieldError> check_regex(const std::string& field, const std::string& pattern, CompiledPatterns* keep) {
  if (pattern.size() > 1024) return err(field, "regex longer than 1024 characters");
  auto re = compile_regex(pattern, keep);
  if (!re->ok()) return err(field, "invalid RE2 regex: " + re->error());
  if (keep) keep->push_back(std::move(re));
  return std::nullopt;
}

// boost.inherit (issue 43 item 3): depth 1 or 2 (0: absent), and only where the policy boosts: the
// wakee inherits from a boosted run, and a policy that never boosts has none to pass on (INV-8).
std::optional<FieldError> check_boost_inherit(const std::string& field, uint32_t depth, bool boosts, const char* needs) {
  if (depth == 0) return std::nullopt;
  if (depth > kMaxBoostInheritDepth)
    return err(field + ".depth", "must be 1 or 2, got " + std::to_string(depth) +
                                     " (a boost is passed on at most two wakeups deep: INV-8)");
  if (!boosts) return err(field, std::string("needs ") + needs + ": only a boosted thread passes a boost on");
  return std::nullopt;
}

// spec.classify (issue 46 item 4): `apply` acts within the controller's bounds (CLS-3), so it needs
// a spec.controller; a value outside the enum (a decoder's cast) is refused too.
std::optional<FieldError> check_classify(const std::string& field, ClassifyMode m, bool has_controller) {
  if (m != ClassifyMode::Propose && m != ClassifyMode::Apply && m != ClassifyMode::Off)
    return err(field, "unknown mode (propose, apply, off)");
  if (m == ClassifyMode::Apply && !has_controller)
    return err(field, "apply acts within the policy's controller: set spec.controller, or use propose (shown only)");
  return std::nullopt;
}

// A role name as a workload registers it: what a DRA policy's selector.registeredRole names.
// Printable ASCII only (0x21..0x7e): the role socket's protocol is ASCII, and a byte above 0x7f
// is not text the durable state (JSON, UTF-8) can hold as it is (issue 42: one such role aborted
// the daemon while it was written to disk).
std::optional<FieldError> check_role(const std::string& field, const std::string& role) {
  if (role.empty()) return err(field, "empty role name");
  if (role.size() > kMaxRoleBytes) return err(field, "role longer than " + std::to_string(kMaxRoleBytes) + " bytes");
  for (char c : role) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= ' ' || b == 0x7f) return err(field, "role must not contain whitespace or control characters");
    if (b > 0x7f) return err(field, "role must be printable ASCII (a byte above 0x7f is not)");
  }
  return std::nullopt;
}

std::optional<FieldError> check_labels(const std::string& field, const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : labels) {
    if (k.empty() || k.size() > 317) return err(field, "label key '" + echo(k) + "' is empty or too long");
    if (auto e = check_text(field, k)) return e;
    if (v.size() > 63) return err(field + "[" + echo(k) + "]", "label value longer than 63 characters");
    if (auto e = check_text(field + "[" + echo(k) + "]", v)) return e;
  }
  return std::nullopt;
}

}  // namespace

std::optional<FieldError> validate(const DraExecutionPolicy& p) { return validate(p, nullptr); }

std::optional<FieldError> validate(const DraExecutionPolicy& p, CompiledPatterns* keep) {
  if (!valid_object_name(p.name)) return err("metadata.name", "must be a DNS-1123 name, got '" + echo(p.name) + "'");
  if (auto e = check_generation("metadata.generation", p.generation)) return e;
  if (auto e = check_labels("spec.workloadSelector.matchLabels", p.match_labels)) return e;
  if (p.resource_claims.empty())
    return err("spec.resourceClaims", "must name at least one pod resource claim (a DRA policy derives from claims)");
  for (size_t i = 0; i < p.resource_claims.size(); ++i)
    if (p.resource_claims[i].empty()) return err("spec.resourceClaims[" + std::to_string(i) + "]", "empty claim name");
    else if (auto e = check_text("spec.resourceClaims[" + std::to_string(i) + "]", p.resource_claims[i])) return e;
  if (p.task_roles.empty()) return err("spec.taskRoles", "must have at least one task role");
  for (size_t i = 0; i < p.task_roles.size(); ++i) {
    const auto& r = p.task_roles[i];
    std::string f = "spec.taskRoles[" + std::to_string(i) + "]";
    if (r.name.empty()) return err(f + ".name", "empty role name");
    if (auto e = check_text(f + ".name", r.name)) return e;
    // A registered role is printable ASCII without whitespace (check_role): a selector naming
    // anything else could never match a thread (issue 42).
    if (!r.registered_role.empty())
      if (auto e = check_role(f + ".selector.registeredRole", r.registered_role)) return e;
    if (r.registered_role.empty() && r.comm_regex.empty() && r.process_regex.empty())
      return err(f + ".selector", "needs registeredRole, commandRegex or processRegex");
    if (!r.comm_regex.empty())
      if (auto e = check_regex(f + ".selector.commandRegex", r.comm_regex, keep)) return e;
    if (!r.process_regex.empty())
      if (auto e = check_regex(f + ".selector.processRegex", r.process_regex, keep)) return e;
    if (r.exec_class == ExecClass::Unmatched) return err(f + ".executionClass", "is not an execution class");
    if (auto e = check_boost_inherit(f + ".boost.inherit", r.boost_inherit_depth, class_boosts(r.exec_class),
                                     "a boosting executionClass (latency-critical or communication-progress)"))
      return e;
  }
  if (p.max_boost < kMinBoostNs || p.max_boost > kMaxBoostNs)
    return err("spec.safety.maxBoostDuration", "must be between 1ms and 1h");
  if (p.fallback != "default-scheduler")
    return err("spec.safety.fallback", "only 'default-scheduler' is supported, got '" + echo(p.fallback) + "'");
  if (p.controller) {
    // A DRA policy's controller measures and acts on one of its task roles: the roles differ in
    // class, and a level means one thing for one class.
    const auto& c = *p.controller;
    if (c.role.empty()) return err("spec.controller.role", "must name one of spec.taskRoles[].name");
    auto role = std::find_if(p.task_roles.begin(), p.task_roles.end(), [&](const TaskRole& r) { return r.name == c.role; });
    if (role == p.task_roles.end())
      return err("spec.controller.role", "'" + echo(c.role) + "' is not a task role of this policy (spec.taskRoles[].name)");
    if (auto e = validate_controller(c, "spec.controller", class_boosts(role->exec_class), p.max_boost))
      return err(e->field, e->message);
  }
  if (auto e = check_classify("spec.classify", p.classify, p.controller.has_value())) return e;
  return std::nullopt;
}

std::optional<FieldError> validate(const NodeSchedulingPolicy& p) { return validate(p, nullptr); }

std::optional<FieldError> validate(const NodeSchedulingPolicy& p, CompiledPatterns* keep) {
  if (!valid_object_name(p.name)) return err("metadata.name", "must be a DNS-1123 name, got '" + echo(p.name) + "'");
  if (auto e = check_generation("metadata.generation", p.generation)) return e;
  if (p.node_names.empty() && p.node_selectors.empty() && p.node_selector_expressions.empty() &&
      p.dra_selectors.empty())
    return err("nodeNames", "a node policy must select nodes: set nodeNames, nodeSelectors or draSelectors");
  for (size_t i = 0; i < p.node_names.size(); ++i)
    if (p.node_names[i].empty()) return err("nodeNames[" + std::to_string(i) + "]", "empty node name");
    else if (auto e = check_text("nodeNames[" + std::to_string(i) + "]", p.node_names[i])) return e;
  if (auto e = validate_selector("nodeSelectors", p.node_selectors, p.node_selector_expressions))
    return err(e->field, e->message);
  for (size_t i = 0; i < p.dra_selectors.size(); ++i)
  {
    const auto& d = p.dra_selectors[i];
    const std::string f = "draSelectors[" + std::to_string(i) + "]";
    if (d.driver.empty()) return err(f + ".driver", "empty driver");
    if (auto e = check_text(f + ".driver", d.driver)) return e;
    if (auto e = check_text(f + ".pool", d.pool)) return e;
    if (auto e = check_text(f + ".device", d.device)) return e;
  }
  if (p.command_regex.empty() && p.process_regex.empty())
    return err("commandRegex", "set commandRegex (thread comm), processRegex (process title) or both");
  if (!p.command_regex.empty())
    if (auto e = check_regex("commandRegex", p.command_regex, keep)) return e;
  if (!p.process_regex.empty())
    if (auto e = check_regex("processRegex", p.process_regex, keep)) return e;
  if (p.priority < 0 || p.priority > 1000) return err("priority", "must be between 0 and 1000");
  if (p.execution_time != 0 && (p.execution_time < kMinSliceNs || p.execution_time > kMaxSliceNs))
    return err("executionTime", "must be 0 (class default) or between 10000 and 100000000 ns");
  if (auto e = check_boost_inherit("boost.inherit", p.boost_inherit_depth, p.priority > 0, "priority > 0 (a boosting policy)"))
    return e;
  if (p.controller) {
    // A node policy's controller acts on the threads the policy matches: there is no role to name.
    if (!p.controller->role.empty())
      return err("controller.role", "a node policy's controller acts on the threads the policy matches; role is for "
                                    "DRA execution policies");
    // The node's own bound (NodeInfo.defaultMaxBoost) is not known here; the lease still holds it.
    if (auto e = validate_controller(*p.controller, "controller", p.priority > 0, kMaxBoostNs))
      return err(e->field, e->message);
  }
  if (auto e = check_classify("classify", p.classify, p.controller.has_value())) return e;
  return std::nullopt;
}

std::optional<FieldError> validate(const Claim& c) {
  if (c.uid.empty()) return err("claim.uid", "must not be empty");
  if (auto e = check_text("claim.uid", c.uid)) return e;
  if (c.generation < 1) return err("claim.generation", "must be at least 1");
  if (auto e = check_generation("claim.generation", c.generation)) return e;
  if (auto e = check_text("claim.node", c.node)) return e;
  for (size_t i = 0; i < c.devices.size(); ++i) {
    const auto& d = c.devices[i];
    std::string f = "claim.devices[" + std::to_string(i) + "]";
    if (d.driver.empty()) return err(f + ".driver", "must not be empty");
    if (d.pool.empty()) return err(f + ".pool", "must not be empty");
    if (d.device.empty()) return err(f + ".device", "must not be empty");
    for (const auto& [name, text] : {std::pair<const char*, const std::string*>{".request", &d.request},
                                     {".driver", &d.driver}, {".pool", &d.pool}, {".device", &d.device},
                                     {".shareID", &d.share_id}, {".pcieRoot", &d.pcie_root},
                                     {".pciBusID", &d.pci_bus_id}})
      if (auto e = check_text(f + name, *text)) return e;
    for (int n : d.numa_nodes)
      if (n < 0 || n > 1023) return err(f + ".numaNodes", "NUMA node " + std::to_string(n) + " out of range");
  }
  for (size_t i = 0; i < c.reserved_for.size(); ++i)
    if (c.reserved_for[i].empty()) return err("claim.reservedFor[" + std::to_string(i) + "]", "empty pod UID");
    else if (auto e = check_text("claim.reservedFor[" + std::to_string(i) + "]", c.reserved_for[i])) return e;
  return std::nullopt;
}

std::optional<FieldError> validate(const Pod& p) { return validate(p, nullptr); }

std::optional<FieldError> validate(const Pod& p, CompiledPatterns* keep) {
  if (p.uid.empty()) return err("pod.uid", "must not be empty");
  if (auto e = check_text("pod.uid", p.uid)) return e;
  if (auto e = check_text("pod.namespace", p.namespace_)) return e;
  if (auto e = check_text("pod.name", p.name)) return e;
  if (auto e = check_text("pod.cgroup", p.cgroup)) return e;
  if (!p.cgroup.empty() && p.cgroup.front() != '/') return err("pod.cgroup", "must be an absolute cgroup path");
  if (p.cgroup == "/") return err("pod.cgroup", "the root cgroup cannot be a pod cgroup");
  if (auto e = check_labels("pod.labels", p.labels)) return e;
  for (const auto& [name, uid] : p.claims)
    if (name.empty() || uid.empty()) return err("pod.claims", "claim name and UID must not be empty");
    else if (auto e = check_text("pod.claims", name + uid)) return e;
  // Like a task's: the kernel never reports an empty effective cpuset (an empty cpuset.cpus means
  // "inherit the parent's", which the host plane resolves before it reports one).
  if (p.cpuset && p.cpuset->empty()) return err("pod.cpuset", "an effective cpuset is never empty");
  for (const auto& [role, pattern] : p.task_roles) {
    const std::string f = "pod.taskRoles[" + echo(role) + "]";
    if (auto e = check_role("pod.taskRoles", role)) return e;
    if (pattern.empty()) return err(f, "empty comm regex");
    if (auto e = check_regex(f, pattern, keep)) return e;
  }
  return std::nullopt;
}

std::optional<FieldError> validate(const Task& t) {
  if (t.key.tid == 0) return err("task.tid", "must be positive");
  if (t.tgid == 0) return err("task.tgid", "must be positive");
  if (auto e = check_comm("task.comm", t.comm)) return e;
  if (auto e = check_text("task.cgroup", t.cgroup)) return e;
  if (!t.role.empty())
    if (auto e = check_role("task.role", t.role)) return e;
  if (t.title.size() > kMaxTitleBytes)
    return err("task.title", "longer than " + std::to_string(kMaxTitleBytes) + " bytes");
  if (auto e = check_text("task.title", t.title)) return e;
  if (!t.cgroup.empty() && t.cgroup.front() != '/') return err("task.cgroup", "must be an absolute cgroup path");
  if (t.cpuset && t.cpuset->empty()) return err("task.cpuset", "an effective cpuset is never empty");
  return std::nullopt;
}

std::optional<FieldError> validate(const NodeInfo& n) {
  if (n.default_max_boost < kMinBoostNs || n.default_max_boost > kMaxBoostNs)
    return err("node.defaultMaxBoost", "must be between 1ms and 1h");
  if (auto e = check_text("node.name", n.name)) return e;
  if (auto e = check_labels("node.labels", n.labels)) return e;
  for (const auto& [root, cpus] : n.pcie_root_cpus)
    if (auto e = check_text("node.pcieRoots", root)) return e;
  for (const auto& [id, cpus] : n.numa_cpus)
    if (id < 0 || id > 1023) return err("node.numa", "NUMA node " + std::to_string(id) + " out of range");
  return std::nullopt;
}

namespace {

std::optional<FieldError> check_policy_ref(const std::string& name, int64_t generation) {
  if (!valid_object_name(name)) return err("name", "must be a DNS-1123 name, got '" + echo(name) + "'");
  return check_generation("generation", generation);
}

struct EventChecks {
  CompiledPatterns* keep = nullptr;  // the patterns compiled on the way (validate(e, keep))
  std::optional<FieldError> operator()(const NodeInfoEvent& e) const { return validate(e.node); }
  std::optional<FieldError> operator()(const ClaimAllocated& e) const { return validate(e.claim); }
  std::optional<FieldError> operator()(const ClaimUpdated& e) const { return validate(e.claim); }
  std::optional<FieldError> operator()(const ClaimDeallocated& e) const {
    if (e.uid.empty()) return err("uid", "must not be empty");
    if (auto x = check_text("uid", e.uid)) return x;
    return check_generation("generation", e.generation);
  }
  std::optional<FieldError> operator()(const PodBound& e) const { return validate(e.pod, keep); }
  std::optional<FieldError> operator()(const PodRemoved& e) const { return check_text("uid", e.uid); }
  std::optional<FieldError> operator()(const TaskSeen& e) const { return validate(e.task); }
  std::optional<FieldError> operator()(const TaskRenamed& e) const { return check_comm("comm", e.comm); }
  std::optional<FieldError> operator()(const TaskExited&) const { return std::nullopt; }
  std::optional<FieldError> operator()(const DraPolicyUpsert& e) const { return validate(e.policy, keep); }
  std::optional<FieldError> operator()(const NodePolicyUpsert& e) const { return validate(e.policy, keep); }
  std::optional<FieldError> operator()(const PolicyDelete& e) const { return check_policy_ref(e.name, e.generation); }
  std::optional<FieldError> operator()(const PreviewAck& e) const { return check_policy_ref(e.name, e.generation); }
  std::optional<FieldError> operator()(const TimeAdvance&) const { return std::nullopt; }
  std::optional<FieldError> operator()(const ControllerWindow& e) const {
    if (e.policy.empty()) return err("policy", "must name the policy whose controller the window is for");
    if (auto x = check_text("policy", e.policy)) return x;
    if (e.signal && *e.signal > kControllerMaxDurationNs) return err("signal", "must be at most 1h (a p99 in ns)");
    return std::nullopt;
  }
  std::optional<FieldError> operator()(const DaemonRestart& e) const {
    if (e.persisted_generation > static_cast<uint64_t>(kMaxGeneration))
      return err("persistedGeneration", "must be at most 2^53 (" + std::to_string(kMaxGeneration) + ")");
    return std::nullopt;
  }
  std::optional<FieldError> operator()(const SyncComplete&) const { return std::nullopt; }
  std::optional<FieldError> operator()(const BpfObserved& e) const {
    for (size_t i = 0; i < e.entries.size(); ++i)
      if (e.entries[i].tid == 0) return err("entries[" + std::to_string(i) + "].tid", "must be positive");
    return std::nullopt;
  }
  std::optional<FieldError> operator()(const BpfSynced&) const { return std::nullopt; }
  std::optional<FieldError> operator()(const TaskRoleSet& e) const {
    if (e.key.tid == 0) return err("tid", "must be positive");
    if (e.role.empty()) return std::nullopt;  // unregister
    return check_role("role", e.role);
  }
  // Node labels come from the API server (or the daemon config, validated the same way): the
  // Kubernetes label syntax.
  std::optional<FieldError> operator()(const NodeLabels& e) const {
    if (auto x = validate_labels("labels", e.labels)) return err(x->field, x->message);
    return std::nullopt;
  }
};

}  // namespace

std::optional<FieldError> validate(const Event& e) { return std::visit(EventChecks{}, e); }

std::optional<FieldError> validate(const Event& e, CompiledPatterns* keep) { return std::visit(EventChecks{keep}, e); }

}  // namespace c2c
