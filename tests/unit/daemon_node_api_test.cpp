// The typed node API on the wire (src/api/node_api_proto.*): a refusal's field is named the way
// the request names it, from the one table (api::request_field), and the preview's
// acknowledgement need is a field that an acknowledging call clears (no warning-text matching).
#include <gtest/gtest.h>

#include "api/node_api_proto.hpp"

namespace c2c::api {
namespace {

using S = node::Refusal::Subject;

node::Refusal refusal(S s, const std::string& field, size_t index = 0, PolicyKind kind = PolicyKind::Node) {
  node::Refusal r;
  r.subject = s;
  r.field = field;
  r.index = index;
  r.kind = kind;
  return r;
}

TEST(DaemonNodeApi, RefusalsAreNamedAsTheRequestNamesThem) {
  EXPECT_EQ(request_field(refusal(S::Policy, "policy.spec.commandRegex")), "policy.node.command_regex");
  EXPECT_EQ(request_field(refusal(S::Policy, "spec.commandRegex")), "policy.node.command_regex");
  EXPECT_EQ(request_field(refusal(S::Policy, "spec.taskRoles[1].selector.commandRegex", 0, PolicyKind::Dra)),
            "policy.dra.task_roles[1].command_regex");
  // Claim index 1 of the request starts at binding 3 (bindings are flat on the wire).
  EXPECT_EQ(request_field(refusal(S::Claim, "claim.generation", 1), {0, 3}), "bindings[3].claim_generation");
  EXPECT_EQ(request_field(refusal(S::Claim, "claim.devices[0].pool", 1), {0, 3}), "bindings[3].pool");
  EXPECT_EQ(request_field(refusal(S::Pod, "pod.cgroup", 2)), "pods[2].cgroup");
  // The core's names of PodInfo's fields that the proto spells otherwise (issue 42: they read
  // "pods[0].taskRoles"); a map key in brackets stays as it was.
  EXPECT_EQ(request_field(refusal(S::Pod, "pod.taskRoles", 0)), "pods[0].task_roles");
  EXPECT_EQ(request_field(refusal(S::Pod, "pod.taskRoles[Decode]", 1)), "pods[1].task_roles[Decode]");
  EXPECT_EQ(request_field(refusal(S::Pod, "pod.cpuset", 0)), "pods[0].cpus");
  EXPECT_EQ(request_field(refusal(S::Pod, "pod.labels[app.kubernetes.io/name]", 0)),
            "pods[0].labels[app.kubernetes.io/name]");
  EXPECT_EQ(request_field(refusal(S::ClaimRef, "uid")), "claim_uid");
  EXPECT_EQ(request_field(refusal(S::ClaimRef, "generation")), "claim_generation");
  EXPECT_EQ(request_field(refusal(S::Acknowledge, "policy")), "acknowledge");
  EXPECT_EQ(request_field(refusal(S::Request, "name")), "name");
}

TEST(DaemonNodeApi, TheAcknowledgementNeedIsAFieldShownAfterTheWarnings) {
  node::PreviewReply r;
  r.result.policy = "p";
  r.result.kind = PolicyKind::Dra;
  r.result.warnings = {"matches no task"};
  r.result.acknowledgement = "requirePreview: the policy goes live after a preview of generation 2 is acknowledged";
  auto pending = to_proto(r);
  ASSERT_EQ(pending.warnings_size(), 2);
  EXPECT_EQ(pending.warnings(1), r.result.acknowledgement);
  EXPECT_FALSE(pending.acknowledged());
  r.result.acknowledgement.clear();  // what Engine::preview does when it records the ack
  r.acknowledged = true;
  r.warnings = {"acknowledge ignored: x"};
  auto done = to_proto(r);
  ASSERT_EQ(done.warnings_size(), 2);
  EXPECT_EQ(done.warnings(0), "matches no task");
  EXPECT_EQ(done.warnings(1), "acknowledge ignored: x");
  EXPECT_TRUE(done.acknowledged());
}

}  // namespace
}  // namespace c2c::api
