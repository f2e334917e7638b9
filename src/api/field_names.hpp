// The core's field names as the wire (spec/claim2core.proto) names them, worked out on the paths'
// segments (core/field_path.hpp, issue 44 item 4) instead of by editing their text: the
// manifest's names of a policy, a claim's device fields as a flat ClaimDeviceBinding, a pod's as
// PodInfo. A map key or an index is never renamed. The text is rendered once, by the caller.
#pragma once

#include "core/field_path.hpp"

namespace c2c::api {

// "spec.taskRoles[2].selector.commandRegex" -> "task_roles[2].command_regex"
FieldPath proto_path_of(const FieldPath& manifest);
// "claim.devices[0].pool" -> "pool", "claim.generation" -> "claim_generation"
FieldPath binding_path_of(const FieldPath& core);
// "pod.taskRoles[decode]" -> "task_roles[decode]", "pod.cpuset" -> "cpus"
FieldPath pod_path_of(const FieldPath& core);

}  // namespace c2c::api
