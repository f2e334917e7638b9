// Issue #14 item 2 in the core: a registered role is an input event (task_role_set) keyed by
// (tid, start), and a pod's claim2core.io/task-roles annotation gives roles by comm to threads that
// registered none. The seed's llm-decode policy (registeredRole: decode) matches through either.
#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

using Status = ApplyResult::Status;

class DecodePod : public CoreTest {
 protected:
  void SetUp() override {
    applied(NodeInfoEvent{node_info()});
    applied(ClaimAllocated{gpu_claim()});
    applied(ClaimAllocated{cpu_claim(CpuSet::range(0, 3))});
    applied(PodBound{decode_pod()});
    applied(DraPolicyUpsert{decode_policy()});
    applied(TaskSeen{pod_task(4107, 7001, "python3")});
  }
};

TEST_F(DecodePod, ARegisteredRoleMatchesTheSeedsPolicyAndTheLineageSaysSo) {
  EXPECT_EQ(entry(4107), nullptr) << "no role, no match";
  applied(TaskRoleSet{{4107, 7001}, "decode"});
  ASSERT_NE(entry(4107), nullptr);
  EXPECT_EQ(entry(4107)->value.exec_class, ExecClass::LatencyCritical);
  auto l = core.explain(4107);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->role, "decode");
  EXPECT_EQ(l->role_source, "registered role decode");
  // Preview of the same policy lists the thread as matched with the value it writes.
  auto pr = core.preview(decode_policy());
  ASSERT_EQ(pr.matched.size(), 1u);
  EXPECT_EQ(pr.matched[0].key.tid, 4107u);
  EXPECT_TRUE(pr.matched[0].intended);
}

TEST_F(DecodePod, AnEmptyRoleUnregisters) {
  applied(TaskRoleSet{{4107, 7001}, "decode"});
  applied(TaskRoleSet{{4107, 7001}, ""});
  EXPECT_EQ(entry(4107), nullptr);
  refused(TaskRoleSet{{4107, 7001}, ""}, Status::Ignored);
}

TEST_F(DecodePod, ARoleForATaskThatIsNotLiveIsIgnored) {
  auto r = refused(TaskRoleSet{{4107, 6999}, "decode"}, Status::Ignored);  // an older start
  EXPECT_NE(r.message.find("INV-2"), std::string::npos) << r.message;
  refused(TaskRoleSet{{4999, 7001}, "decode"}, Status::Ignored);  // no such tid
}

TEST_F(DecodePod, AReObservationOfTheSameTaskKeepsItsRole) {
  applied(TaskRoleSet{{4107, 7001}, "decode"});
  // The host plane rescans: the same (tid, start) without a role (it never observes one).
  Task again = pod_task(4107, 7001, "python3");
  again.title = "python3 serve";
  applied(TaskSeen{again});
  ASSERT_NE(entry(4107), nullptr);
  EXPECT_EQ(core.explain(4107)->role_source, "registered role decode");
}

TEST_F(DecodePod, ATaskThatReusesTheTidDoesNotInheritTheRole) {
  applied(TaskRoleSet{{4107, 7001}, "decode"});
  ASSERT_NE(entry(4107), nullptr);
  applied(TaskSeen{pod_task(4107, 7500, "python3")});  // INV-2: a new task with the same tid
  EXPECT_EQ(entry(4107), nullptr) << "the role belonged to (4107, 7001)";
  auto plan = core.plan();
  ASSERT_EQ(plan.ops.size(), 0u) << "nothing was synced yet, so nothing is owed";
}

TEST_F(DecodePod, TheRoleLeavesWithTheTask) {
  applied(TaskRoleSet{{4107, 7001}, "decode"});
  applied(TaskExited{{4107, 7001}});
  applied(TaskSeen{pod_task(4107, 7001, "python3")});  // cannot happen on a real host; the role is gone anyway
  EXPECT_EQ(entry(4107), nullptr);
}

TEST_F(DecodePod, BadRolesAreInvalidNamingTheField) {
  EXPECT_EQ(refused(TaskRoleSet{{4107, 7001}, "two words"}, Status::Invalid).field, "role");
  EXPECT_EQ(refused(TaskRoleSet{{4107, 7001}, std::string(64, 'r')}, Status::Invalid).field, "role");
  EXPECT_EQ(refused(TaskRoleSet{{0, 7001}, "decode"}, Status::Invalid).field, "tid");
  Pod bad = decode_pod();
  bad.task_roles = {{"decode", "(unclosed"}};
  EXPECT_EQ(refused(PodBound{bad}, Status::Invalid).field, "pod.taskRoles[decode]");
  bad.task_roles = {{"de code", "^decode"}};
  EXPECT_EQ(refused(PodBound{bad}, Status::Invalid).field, "pod.taskRoles");
}

// Issue 42: a role is printable ASCII. A byte above 0x7f (not UTF-8 on its own) was accepted and
// aborted the daemon when the role was written to disk; a DRA selector naming a role with
// whitespace could never match and was accepted.
TEST_F(DecodePod, ARoleIsPrintableAsciiAndADraSelectorNamesOnlySuchARole) {
  auto r = refused(TaskRoleSet{{4107, 7001}, "dec\xff" "ode"}, Status::Invalid);
  EXPECT_EQ(r.field, "role");
  EXPECT_NE(r.message.find("ASCII"), std::string::npos) << r.message;
  EXPECT_EQ(refused(TaskRoleSet{{4107, 7001}, "d\xc3\xa9" "code"}, Status::Invalid).field, "role") << "UTF-8 too";
  Pod bad = decode_pod();
  bad.task_roles = {{"d\xe9" "code", "^decode"}};
  EXPECT_EQ(refused(PodBound{bad}, Status::Invalid).field, "pod.taskRoles");
  auto dra = decode_policy(2);
  for (const std::string& role : std::vector<std::string>{"a b", "a\tb", "\xff", std::string(64, 'r')}) {
    dra.task_roles[0].registered_role = role;
    EXPECT_EQ(refused(DraPolicyUpsert{dra}, Status::Invalid).field, "spec.taskRoles[0].selector.registeredRole") << role;
  }
  dra.task_roles[0].registered_role = "decode-1.v2_x";
  applied(DraPolicyUpsert{dra});
}

TEST_F(DecodePod, ThePodAnnotationGivesRolesByCommAndARegisteredRoleComesFirst) {
  Pod annotated = decode_pod();
  annotated.task_roles = {{"decode", "^decode"}, {"prefill", "^prefill"}};
  applied(PodBound{annotated});
  applied(TaskSeen{pod_task(4108, 7002, "decode-loop")});
  applied(TaskSeen{pod_task(4109, 7003, "prefill-loop")});
  ASSERT_NE(entry(4108), nullptr);
  EXPECT_EQ(core.explain(4108)->role_source, "pod annotation role decode");
  EXPECT_EQ(entry(4109), nullptr) << "the policy has no prefill role";
  // A thread that registered a role keeps it, whatever its comm says.
  applied(TaskRoleSet{{4108, 7002}, "prefill"});
  EXPECT_EQ(entry(4108), nullptr);
  // The annotation leaves with the pod's next version.
  applied(TaskRoleSet{{4108, 7002}, ""});
  ASSERT_NE(entry(4108), nullptr);
  applied(PodBound{decode_pod()});
  EXPECT_EQ(entry(4108), nullptr);
}

}  // namespace
}  // namespace c2c::testing
