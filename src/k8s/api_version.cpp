#include "k8s/api_version.hpp"

namespace c2c::k8s {

bool is_resource_group(const std::string& api_version) {
  return api_version.rfind("resource.k8s.io/", 0) == 0;
}

ApiVersionInfo classify_resource_api(const std::string& api_version) {
  if (api_version == "resource.k8s.io/v1") return {ResourceApi::V1, {}};
  if (api_version == "resource.k8s.io/v1beta2") return {ResourceApi::V1beta2, {}};
  if (api_version == "resource.k8s.io/v1beta1") return {ResourceApi::V1beta1, {}};
  if (api_version == "resource.k8s.io/v1alpha3")
    return {ResourceApi::Refused,
            "resource.k8s.io/v1alpha3 is refused: its 1.31 shapes are not converted (servers since 1.32 "
            "serve v1beta1+ for claims and slices); read the object again as resource.k8s.io/v1"};
  return {ResourceApi::Refused, "unsupported apiVersion " + api_version +
                                    " (supported: resource.k8s.io/v1, v1beta2 read as v1, v1beta1 converted)"};
}

}  // namespace c2c::k8s
