// The wire messages (spec/claim2core.proto) -> the client's plain replies (api/replies.hpp), each
// once, with the message's JSON (api/proto_json.hpp). Used by the client library (src/client) and
// by tests that build replies as the daemon sends them.
#pragma once

#include "api/convert.hpp"
#include "api/replies.hpp"
#include "claim2core.pb.h"

namespace c2c::api {

reply::Intent plain(const pb::Intent& m);
reply::RuntimeEntry plain(const pb::RuntimeEntry& m);
reply::Upsert plain(const pb::UpsertPolicyResponse& m);
reply::Delete plain(const pb::DeletePolicyResponse& m);
reply::Preview plain(const pb::PreviewResponse& m);
std::vector<reply::Intent> plain(const pb::ListIntentsResponse& m);
reply::Task plain(const pb::Task& m);
std::vector<reply::Task> plain(const pb::ListTasksResponse& m);
reply::Binding plain(const pb::ClaimDeviceBinding& m);
reply::PodInfo plain(const pb::PodInfo& m);
reply::Bindings plain(const pb::ListBindingsResponse& m);
// The policies through from_proto's wire checks (the daemon validated them); a policy that does
// not convert is the error, named under "policies[i]".
Converted<reply::Policies> plain(const pb::ListPoliciesResponse& m);
reply::Explain plain(const pb::ExplainResponse& m);
reply::Proposal plain(const pb::RoleProposal& m);
reply::Decision plain(const pb::ControllerDecision& m);
reply::ControllerLevel plain(const pb::ControllerLevel& m);
reply::Decisions plain(const pb::ListDecisionsResponse& m);
reply::Status plain(const pb::StatusResponse& m);
reply::Change plain(const pb::ChangeEvent& m);
reply::Role plain(const pb::RegisterTaskRoleResponse& m);

std::optional<PolicyKind> plain(pb::PolicyKind k);

}  // namespace c2c::api
