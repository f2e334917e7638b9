// Pod and DeviceClass: the consumers of claims and the (informational) classes.
#pragma once

#include "k8s/objects.hpp"

namespace c2c::k8s {

struct PodResourceClaim {
  std::string name;                          // the pod-level claim name
  std::string resource_claim_name;           // a claim that exists on its own
  std::string resource_claim_template_name;  // a claim generated per pod
};

struct ContainerClaim {
  std::string container;
  std::string name;     // PodResourceClaim.name
  std::string request;  // empty: all requests of the claim
};

// A JSON object mapping role names to comm regexes, e.g. '{"decode": "^decode"}'.
inline constexpr const char* kTaskRolesAnnotation = "claim2core.io/task-roles";

struct Pod {
  Origin origin;
  ObjectMeta meta;
  std::string node_name;
  std::string phase;
  std::vector<PodResourceClaim> resource_claims;
  std::vector<ContainerClaim> container_claims;
  // status.resourceClaimStatuses: pod claim name -> generated claim name ("" = no claim needed).
  std::map<std::string, std::string> claim_statuses;
  // The annotation claim2core.io/task-roles (issue #14): role name -> RE2 on a thread's comm, for
  // threads that registered no role themselves (c2c::Pod::task_roles).
  std::map<std::string, std::string> task_roles;

  // The ResourceClaim name a pod claim refers to, if known (templates go through the status).
  std::optional<std::string> claim_name_for(const std::string& pod_claim) const;
};

// A class name is not a driver name: classes select devices by CEL, and an allocation does not
// record its class. Kept for listing and diagnostics only.
struct DeviceClass {
  Origin origin;
  ObjectMeta meta;
  std::vector<std::string> selectors;
  std::string extended_resource_name;
};

}  // namespace c2c::k8s
