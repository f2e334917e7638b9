// resource.k8s.io versions: which are read as v1, which are converted, which are refused.
#pragma once

#include <optional>
#include <string>

namespace c2c::k8s {

enum class ResourceApi : uint8_t {
  V1,        // resource.k8s.io/v1 (GA in 1.34)
  V1beta2,   // a verbatim copy of v1: decoded as v1
  V1beta1,   // converted: flat requests, devices[].basic, nodeName/allNodes as plain values
  Refused,   // v1alpha3 and unknown versions
};

struct ApiVersionInfo {
  ResourceApi api = ResourceApi::Refused;
  std::string refusal;  // why, for Refused
};

// For an apiVersion of the resource.k8s.io group.
ApiVersionInfo classify_resource_api(const std::string& api_version);
bool is_resource_group(const std::string& api_version);

}  // namespace c2c::k8s
