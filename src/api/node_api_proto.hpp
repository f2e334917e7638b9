// The typed node API (node_api.hpp) on the wire (spec/claim2core.proto): model -> proto for the
// replies, and the one table that names a refused request's field in proto terms.
#pragma once

#include <string>

#include "api/node_api.hpp"
#include "claim2core.pb.h"

namespace c2c::api {

namespace pb = ::claim2core::v1;

void to_proto(const node::Intent& in, pb::Intent* out);
pb::StatusResponse to_proto(const node::NodeStatus& s);
pb::ChangeEvent to_proto(const node::ChangeNote& n);
pb::PreviewResponse to_proto(const node::PreviewReply& r);
void to_proto(const node::Proposal& p, pb::RoleProposal* out);  // issue 46 item 4
void to_proto(const node::Decision& d, pb::ControllerDecision* out);
void to_proto(const ControllerStatus& c, pb::ControllerLevel* out);

// A refusal's field as the request names it ("policy.node.command_regex", "bindings[2].pool",
// "pods[0].cgroup", "claim_uid"). `binding_index` maps a claim index of the request to the
// index of its first binding (bindings are flat on the wire).
std::string request_field(const node::Refusal& r, const std::vector<int>& binding_index = {});

// An intent state as people read it: Pending, Sent, Applied, Failed, Unknown (unspecified). The
// CLI's tables and the policy CRDs' status.nodes[].state (src/k8s/policy_status.hpp) both use it.
const char* intent_state_name(pb::IntentState s);

}  // namespace c2c::api
