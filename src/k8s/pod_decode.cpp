// Pod and DeviceClass decoding.
#include "core/core.hpp"
#include "k8s/decode.hpp"
#include "k8s/json_fields.hpp"

namespace c2c::k8s {

using nlohmann::json;
using namespace fields;

std::optional<std::string> Pod::claim_name_for(const std::string& pod_claim) const {
  for (const auto& rc : resource_claims) {
    if (rc.name != pod_claim) continue;
    if (!rc.resource_claim_name.empty()) return rc.resource_claim_name;
    auto it = claim_statuses.find(pod_claim);
    if (it == claim_statuses.end() || it->second.empty()) return std::nullopt;  // not generated (yet)
    return it->second;
  }
  return std::nullopt;
}

namespace {

// metadata.annotations["claim2core.io/task-roles"]: a JSON object of role -> comm regex, checked
// as the core checks it (a pod the core would refuse is refused here, naming the annotation).
std::map<std::string, std::string> task_roles_annotation(const json& obj) {
  std::map<std::string, std::string> out;
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return out;
  auto a = m->find("annotations");
  if (a == m->end() || !a->is_object()) return out;
  auto v = a->find(kTaskRolesAnnotation);
  if (v == a->end()) return out;
  const std::string field = std::string("metadata.annotations[") + kTaskRolesAnnotation + "]";
  if (!v->is_string()) throw FieldError(field, "must be a string holding a JSON object, e.g. '{\"decode\": \"^decode\"}'");
  json roles = json::parse(v->get<std::string>(), nullptr, false);
  if (roles.is_discarded() || !roles.is_object())
    throw FieldError(field, "must be a JSON object of role name -> comm regex, e.g. {\"decode\": \"^decode\"}");
  for (const auto& [role, pattern] : roles.items()) {
    if (!pattern.is_string()) throw FieldError(field, "the comm regex of role '" + role + "' must be a string");
    out[role] = pattern.get<std::string>();
  }
  c2c::Pod check;
  check.uid = "-";
  check.task_roles = out;
  if (auto e = c2c::validate(check)) throw FieldError(field, e->field + ": " + e->message);
  return out;
}

}  // namespace

Pod decode_pod(const json& obj) {
  Pod p;
  p.origin.api_version = string(obj, "apiVersion", "");
  p.meta = meta(obj);
  if (p.meta.name.empty()) throw FieldError("metadata.name", "is required");
  const json& spec = object(obj, "spec", "");
  p.node_name = string(spec, "nodeName", "spec");
  const json& rcs = array(spec, "resourceClaims", "spec");
  for (size_t i = 0; i < rcs.size(); ++i) {
    std::string path = index("spec.resourceClaims", i);
    PodResourceClaim rc{string(rcs[i], "name", path), string(rcs[i], "resourceClaimName", path),
                        string(rcs[i], "resourceClaimTemplateName", path)};
    if (rc.name.empty()) throw FieldError(join(path, "name"), "is required");
    if (rc.resource_claim_name.empty() == rc.resource_claim_template_name.empty())
      throw FieldError(path, "exactly one of resourceClaimName and resourceClaimTemplateName must be set");
    p.resource_claims.push_back(std::move(rc));
  }
  for (const char* list : {"initContainers", "containers"}) {
    const json& cs = array(spec, list, "spec");
    for (size_t i = 0; i < cs.size(); ++i) {
      std::string path = index(join("spec", list), i);
      std::string container = string(cs[i], "name", path);
      const json& claims = array(object(cs[i], "resources", path), "claims", join(path, "resources"));
      for (size_t k = 0; k < claims.size(); ++k) {
        std::string cp = index(join(path, "resources.claims"), k);
        p.container_claims.push_back({container, string(claims[k], "name", cp), string(claims[k], "request", cp)});
      }
    }
  }
  p.task_roles = task_roles_annotation(obj);
  const json& status = object(obj, "status", "");
  p.phase = string(status, "phase", "status");
  const json& st = array(status, "resourceClaimStatuses", "status");
  for (size_t i = 0; i < st.size(); ++i) {
    std::string path = index("status.resourceClaimStatuses", i);
    p.claim_statuses[string(st[i], "name", path)] = string(st[i], "resourceClaimName", path);
  }
  return p;
}

DeviceClass decode_device_class(const json& obj) {
  DeviceClass c;
  c.origin.api_version = string(obj, "apiVersion", "");
  c.meta = meta(obj);
  if (c.meta.name.empty()) throw FieldError("metadata.name", "is required");
  const json& spec = object(obj, "spec", "");
  const json& sels = array(spec, "selectors", "spec");
  for (size_t i = 0; i < sels.size(); ++i) {
    std::string path = index("spec.selectors", i);
    c.selectors.push_back(string(object(sels[i], "cel", path), "expression", join(path, "cel")));
  }
  c.extended_resource_name = string(spec, "extendedResourceName", "spec");
  return c;
}

}  // namespace c2c::k8s
