// Kubernetes-style policy manifests (apiVersion scheduling.gthulhu.io/v1alpha1), as JSON.
// One decoder for traces, YAML manifests (converted to JSON) and the daemon's API.
#pragma once

#include <nlohmann/json.hpp>

#include <variant>

#include "core/model.hpp"

namespace c2c::codec {

inline constexpr const char* kPolicyApiVersion = "scheduling.gthulhu.io/v1alpha1";


// Throws DecodeError naming the field. Also runs the core's validation, so a decoded policy is
// always one the core accepts. `path` prefixes field names (e.g. "policy").
AnyPolicy decode_policy(const nlohmann::json& j, const std::string& path);
nlohmann::json encode_policy(const DraExecutionPolicy& p);
nlohmann::json encode_policy(const NodeSchedulingPolicy& p);
std::optional<PolicyKind> policy_kind_from_string(const std::string& s);

}  // namespace c2c::codec
