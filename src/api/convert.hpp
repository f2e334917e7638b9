// The daemon's wire types (spec/claim2core.proto) <-> the core's model (src/core).
//
// proto -> model never trusts the wire: every string is length-checked, every enum, duration,
// CPU list and number is range-checked, and then the core's own c2c::validate() runs. A refusal
// is a c2c::FieldError whose field is the proto field path under the caller's prefix, e.g.
// "policy.node.command_regex" or "bindings[2].cpus", so an INVALID_ARGUMENT names what to fix.
//
// model -> proto is total (the CLI turns manifests into the model with src/trace/policy_codec,
// then into requests with these functions; the daemon answers with them).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "claim2core.pb.h"
#include "core/core.hpp"

namespace c2c::api {

namespace pb = ::claim2core::v1;


// A conversion result: the value, or the field error (never both).
template <class T>
struct Converted {
  std::optional<T> value;
  FieldError error;
  bool ok() const { return value.has_value(); }
};

// Wire limits (a request above them is refused naming the field; gRPC's own message limit is
// set by the daemon too).
inline constexpr size_t kMaxStringBytes = 4096;
inline constexpr size_t kMaxListItems = 4096;

// A wire string: at most `max` bytes and free of NUL (which no Linux or Kubernetes name holds).
// Every name, uid and text field of every RPC goes through it.
std::optional<FieldError> check_string(const std::string& field, const std::string& s,
                                       size_t max = kMaxStringBytes);

// ---- policies --------------------------------------------------------------------------------
// Full: the wire checks, then c2c::validate() (the CLI). Wire: the wire checks only, for a caller
// that hands the policy to the core, which validates it (and compiles its regexes) once itself:
// claim2cored, so one request is validated once.
enum class Check : uint8_t { Full, Wire };
Converted<DraExecutionPolicy> from_proto(const pb::DRAExecutionPolicy& p, const std::string& path, Check check = Check::Full);
Converted<NodeSchedulingPolicy> from_proto(const pb::NodeSchedulingPolicy& p, const std::string& path,
                                           Check check = Check::Full);
// path "policy" gives fields "policy.dra.<field>" / "policy.node.<field>"; an unset oneof is
// refused as "<path>.kind".
Converted<AnyPolicy> from_proto(const pb::Policy& p, const std::string& path, Check check = Check::Full);
Converted<PolicyKind> kind_from_proto(pb::PolicyKind k, const std::string& path);

pb::DRAExecutionPolicy to_proto(const DraExecutionPolicy& p);
pb::NodeSchedulingPolicy to_proto(const NodeSchedulingPolicy& p);
pb::Policy to_proto(const AnyPolicy& p);
pb::PolicyKind to_proto(PolicyKind k);
using c2c::generation_of;  // a policy's identity is the core's (core/model.hpp)
using c2c::kind_of;
using c2c::name_of;

// ---- claim bindings and pods -----------------------------------------------------------------
// Groups bindings by claim_uid into claims (first appearance order). All bindings of one claim
// must agree on claim_generation and node_name; devices are deduplicated (a device reserved for
// two pods gives two bindings); reserved_for collects the bindings' pod UIDs.
Converted<std::vector<Claim>> claims_from_bindings(
    const google::protobuf::RepeatedPtrField<pb::ClaimDeviceBinding>& bindings, const std::string& path);
// A core refusal of a claim ("claim.generation", "claim.devices[0].pool") as the field of the
// ClaimDeviceBinding it came from ("claim_generation", "pool"): bindings are flat.
std::string binding_field_of(std::string core_field);
// A core pod field ("pod.taskRoles[decode]", "pod.cpuset") as PodInfo's proto field
// ("task_roles[decode]", "cpus"; a map key in brackets kept as it is). Before, the core's name
// reached the client: "pods[0].taskRoles".
std::string pod_field_of(const std::string& core_field);
// One binding per (device, reserved pod), or per device with an empty pod_uid when the claim
// is reserved for no pod.
std::vector<pb::ClaimDeviceBinding> bindings_from_claim(const Claim& c);
// A binding with only the device's fields set (request, driver, pool, device, share, NUMA nodes,
// PCIe root, PCI bus id, CPUs); the claim and pod fields are the caller's.
pb::ClaimDeviceBinding device_binding(const AllocatedDevice& d);

// An empty cgroup or cpus stays empty (the daemon resolves them from the host).
Converted<Pod> from_proto(const pb::PodInfo& p, const std::string& path);
pb::PodInfo to_proto(const Pod& p);

// ---- tasks, entries, lineage, preview ------------------------------------------------------------
pb::Task to_proto(const Task& t, const std::string& pod_uid = {});
Converted<Task> from_proto(const pb::Task& t, const std::string& path);
pb::RuntimeEntry to_proto(uint32_t tid, const RuntimeValue& v);
Converted<RuntimeValue> from_proto(const pb::RuntimeEntry& e, const std::string& path);
pb::Lineage to_proto(const Lineage& l);
Converted<Lineage> from_proto(const pb::Lineage& l, const std::string& path);
pb::Conflict to_proto(const c2c::Conflict& c);
c2c::Conflict from_proto(const pb::Conflict& c);
pb::PreviewResponse to_proto(const PreviewResult& r);
// Everything but invalid_field/invalid_message (an invalid preview is an INVALID_ARGUMENT).
Converted<PreviewResult> from_proto(const pb::PreviewResponse& r, const std::string& path);

std::vector<std::string> flag_names(uint8_t flags);
std::optional<uint8_t> flags_from_names(const std::vector<std::string>& names);

// The core's validation names manifest fields ("spec.taskRoles[0].selector.commandRegex"); the
// API names proto fields ("task_roles[0].command_regex"). Exposed for the tests.
std::string proto_field_of(const std::string& manifest_field);

}  // namespace c2c::api
