// Input validation: every rejected input names its field; nothing is applied half-way.
#include <re2/re2.h>

#include "core/core.hpp"

namespace c2c {
namespace {

std::optional<FieldError> err(std::string field, std::string message) {
  return FieldError{std::move(field), std::move(message)};
}

// Kubernetes object names: DNS-1123 subdomain, at most 253 characters.
bool valid_object_name(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  return s.front() != '-' && s.front() != '.' && s.back() != '-' && s.back() != '.';
}

std::optional<FieldError> check_regex(const std::string& field, const std::string& pattern) {
  if (pattern.size() > 1024) return err(field, "regex longer than 1024 characters");
  RE2::Options opts;
  opts.set_log_errors(false);
  RE2 re(pattern, opts);
  if (!re.ok()) return err(field, "invalid RE2 regex: " + re.error());
  return std::nullopt;
}

std::optional<FieldError> check_labels(const std::string& field, const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : labels) {
    if (k.empty() || k.size() > 317) return err(field, "label key '" + k + "' is empty or too long");
    if (v.size() > 63) return err(field + "[" + k + "]", "label value longer than 63 characters");
  }
  return std::nullopt;
}

}  // namespace

std::optional<FieldError> validate(const DraExecutionPolicy& p) {
  if (!valid_object_name(p.name)) return err("metadata.name", "must be a DNS-1123 name, got '" + p.name + "'");
  if (p.generation < 0) return err("metadata.generation", "must not be negative");
  if (auto e = check_labels("spec.workloadSelector.matchLabels", p.match_labels)) return e;
  if (p.resource_claims.empty())
    return err("spec.resourceClaims", "must name at least one pod resource claim (a DRA policy derives from claims)");
  for (size_t i = 0; i < p.resource_claims.size(); ++i)
    if (p.resource_claims[i].empty()) return err("spec.resourceClaims[" + std::to_string(i) + "]", "empty claim name");
  if (p.task_roles.empty()) return err("spec.taskRoles", "must have at least one task role");
  for (size_t i = 0; i < p.task_roles.size(); ++i) {
    const auto& r = p.task_roles[i];
    std::string f = "spec.taskRoles[" + std::to_string(i) + "]";
    if (r.name.empty()) return err(f + ".name", "empty role name");
    if (r.registered_role.empty() && r.comm_regex.empty())
      return err(f + ".selector", "needs registeredRole or commandRegex");
    if (!r.comm_regex.empty())
      if (auto e = check_regex(f + ".selector.commandRegex", r.comm_regex)) return e;
    if (r.exec_class == ExecClass::Unmatched) return err(f + ".executionClass", "is not an execution class");
  }
  if (p.max_boost < kMinBoostNs || p.max_boost > kMaxBoostNs)
    return err("spec.safety.maxBoostDuration", "must be between 1ms and 1h");
  if (p.fallback != "default-scheduler")
    return err("spec.safety.fallback", "only 'default-scheduler' is supported, got '" + p.fallback + "'");
  return std::nullopt;
}

std::optional<FieldError> validate(const NodeSchedulingPolicy& p) {
  if (!valid_object_name(p.name)) return err("metadata.name", "must be a DNS-1123 name, got '" + p.name + "'");
  if (p.generation < 0) return err("metadata.generation", "must not be negative");
  if (p.node_names.empty() && p.node_selectors.empty() && p.dra_selectors.empty())
    return err("nodeNames", "a node policy must select nodes: set nodeNames, nodeSelectors or draSelectors");
  for (size_t i = 0; i < p.node_names.size(); ++i)
    if (p.node_names[i].empty()) return err("nodeNames[" + std::to_string(i) + "]", "empty node name");
  if (auto e = check_labels("nodeSelectors", p.node_selectors)) return e;
  for (size_t i = 0; i < p.dra_selectors.size(); ++i)
    if (p.dra_selectors[i].driver.empty()) return err("draSelectors[" + std::to_string(i) + "].driver", "empty driver");
  if (p.command_regex.empty()) return err("commandRegex", "must not be empty");
  if (auto e = check_regex("commandRegex", p.command_regex)) return e;
  if (p.priority < 0 || p.priority > 1000) return err("priority", "must be between 0 and 1000");
  if (p.execution_time != 0 && (p.execution_time < kMinSliceNs || p.execution_time > kMaxSliceNs))
    return err("executionTime", "must be 0 (class default) or between 10000 and 100000000 ns");
  return std::nullopt;
}

std::optional<FieldError> validate(const Claim& c) {
  if (c.uid.empty()) return err("claim.uid", "must not be empty");
  if (c.generation < 1) return err("claim.generation", "must be at least 1");
  for (size_t i = 0; i < c.devices.size(); ++i) {
    const auto& d = c.devices[i];
    std::string f = "claim.devices[" + std::to_string(i) + "]";
    if (d.driver.empty()) return err(f + ".driver", "must not be empty");
    if (d.pool.empty()) return err(f + ".pool", "must not be empty");
    if (d.device.empty()) return err(f + ".device", "must not be empty");
    for (int n : d.numa_nodes)
      if (n < 0 || n > 1023) return err(f + ".numaNodes", "NUMA node " + std::to_string(n) + " out of range");
  }
  for (size_t i = 0; i < c.reserved_for.size(); ++i)
    if (c.reserved_for[i].empty()) return err("claim.reservedFor[" + std::to_string(i) + "]", "empty pod UID");
  return std::nullopt;
}

std::optional<FieldError> validate(const Pod& p) {
  if (p.uid.empty()) return err("pod.uid", "must not be empty");
  if (!p.cgroup.empty() && p.cgroup.front() != '/') return err("pod.cgroup", "must be an absolute cgroup path");
  if (p.cgroup == "/") return err("pod.cgroup", "the root cgroup cannot be a pod cgroup");
  if (auto e = check_labels("pod.labels", p.labels)) return e;
  for (const auto& [name, uid] : p.claims)
    if (name.empty() || uid.empty()) return err("pod.claims", "claim name and UID must not be empty");
  return std::nullopt;
}

std::optional<FieldError> validate(const Task& t) {
  if (t.key.tid == 0) return err("task.tid", "must be positive");
  if (t.tgid == 0) return err("task.tgid", "must be positive");
  if (t.comm.size() > 15) return err("task.comm", "longer than 15 bytes (TASK_COMM_LEN - 1)");
  if (!t.cgroup.empty() && t.cgroup.front() != '/') return err("task.cgroup", "must be an absolute cgroup path");
  if (t.cpuset && t.cpuset->empty()) return err("task.cpuset", "an effective cpuset is never empty");
  return std::nullopt;
}

std::optional<FieldError> validate(const NodeInfo& n) {
  if (n.default_max_boost < kMinBoostNs || n.default_max_boost > kMaxBoostNs)
    return err("node.defaultMaxBoost", "must be between 1ms and 1h");
  if (auto e = check_labels("node.labels", n.labels)) return e;
  for (const auto& [id, cpus] : n.numa_cpus)
    if (id < 0 || id > 1023) return err("node.numa", "NUMA node " + std::to_string(id) + " out of range");
  return std::nullopt;
}

}  // namespace c2c
