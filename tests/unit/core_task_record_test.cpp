// The compact task record (issue #13 item 2): a task's values are interned and its cgroup entry
// keeps the pod its path resolves to. Threads seen before their pod is bound must join it when it
// is bound and leave it when it is removed (the per-cgroup pod is reset whenever pod bindings
// change), and what a task reads back (tasks(), explain()) is what was observed.
#include <algorithm>

#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

class PodBoundAfterItsThreads : public CoreTest {
 protected:
  void SetUp() override {
    applied(NodeInfoEvent{node_info()});
    applied(ClaimAllocated{gpu_claim()});
    applied(ClaimAllocated{cpu_claim(CpuSet::range(0, 3))});
    applied(DraPolicyUpsert{decode_policy()});
    // Two threads of one container, seen while no pod owns their cgroup.
    applied(TaskSeen{pod_task(4107, 7001, "python3", "decode")});
    applied(TaskSeen{pod_task(4108, 7002, "python3", "decode")});
  }
};

TEST_F(PodBoundAfterItsThreads, BindingThePodGivesEveryThreadOfTheCgroupItsEntry) {
  EXPECT_EQ(entry(4107), nullptr) << "no pod owns the cgroup yet";
  EXPECT_EQ(entry(4108), nullptr);
  applied(PodBound{decode_pod()});
  for (uint32_t tid : {4107u, 4108u}) {
    ASSERT_NE(entry(tid), nullptr) << tid;
    auto l = core.explain(tid);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->pod_uid, kPod);
    EXPECT_EQ(l->cgroup, kPodCgroup + "/cri-containerd-413715dc.scope");
    EXPECT_EQ(l->comm, "python3");
  }
  // A thread that joins the cgroup afterwards resolves to the bound pod too.
  applied(TaskSeen{pod_task(4109, 7003, "python3", "decode")});
  ASSERT_NE(entry(4109), nullptr);
  EXPECT_EQ(core.explain(4109)->pod_uid, kPod);
}

TEST_F(PodBoundAfterItsThreads, RemovingThePodTakesTheEntriesOfItsCgroup) {
  applied(PodBound{decode_pod()});
  ASSERT_NE(entry(4107), nullptr);
  applied(PodRemoved{kPod});
  EXPECT_EQ(entry(4107), nullptr);
  EXPECT_EQ(entry(4108), nullptr);
  // Nor does a thread that joins the cgroup later get one.
  applied(TaskSeen{pod_task(4109, 7003, "python3", "decode")});
  EXPECT_EQ(entry(4109), nullptr);
  // Bound again: the cgroup resolves to it again.
  applied(PodBound{decode_pod()});
  EXPECT_NE(entry(4109), nullptr);
}

TEST_F(CoreTest, TasksReadBackAsObservedWhenTheyShareValues) {
  applied(NodeInfoEvent{node_info()});
  Task a = task(500, 500, 1, "worker", "/system.slice/a.service");
  a.cpuset = CpuSet::range(0, 1);
  a.title = "VLLM::EngineCore_DP0";
  Task b = task(501, 500, 2, "worker", "/system.slice/a.service", "decode");
  b.cpuset = CpuSet::range(0, 1);
  b.title = "VLLM::EngineCore_DP0";
  applied(TaskSeen{a});
  applied(TaskSeen{b});
  applied(TaskRenamed{{500, 1}, "leader"});
  a.comm = "leader";
  EXPECT_EQ(core.tasks(), (std::vector<Task>{a, b}));
  // The last holder of a value leaving must not disturb the others' values.
  applied(TaskExited{{500, 1}});
  EXPECT_EQ(core.tasks(), (std::vector<Task>{b}));
  applied(TaskExited{{501, 2}});
  EXPECT_TRUE(core.tasks().empty());
  applied(TaskSeen{a});
  EXPECT_EQ(core.tasks(), (std::vector<Task>{a}));
}

// A task's cgroup id (Task::cgroup_id) spares the core the path's hash lookup, but the path decides:
// an id that arrives with another path (a renamed cgroup, a wrong observer) must not put the task
// in the cgroup the id was first seen with, nor in its pod.
TEST_F(PodBoundAfterItsThreads, ACgroupIdThatComesWithAnotherPathDoesNotMoveTheTask) {
  auto listed = [&](uint32_t tid) {
    auto all = core.tasks();
    auto it = std::find_if(all.begin(), all.end(), [&](const Task& t) { return t.key.tid == tid; });
    return it == all.end() ? Task{} : *it;
  };
  applied(PodBound{decode_pod()});
  Task in_pod = pod_task(4109, 7003, "python3", "decode");
  in_pod.cgroup_id = 77;
  applied(TaskSeen{in_pod});
  ASSERT_NE(entry(4109), nullptr);
  // The same id with a host path: the task is on the host, outside the pod.
  Task elsewhere = task(4110, 4110, 7004, "python3", "/system.slice/other.service", "decode");
  elsewhere.cgroup_id = 77;
  applied(TaskSeen{elsewhere});
  EXPECT_EQ(listed(4110).cgroup, "/system.slice/other.service");
  EXPECT_EQ(entry(4110), nullptr) << "no pod, no DRA entry";
  // And the id with its own path again: the pod's cgroup and its entry; tasks() reads the id back.
  Task again = pod_task(4111, 7005, "python3", "decode");
  again.cgroup_id = 77;
  applied(TaskSeen{again});
  ASSERT_NE(entry(4111), nullptr);
  EXPECT_EQ(core.explain(4111)->pod_uid, kPod);
  EXPECT_EQ(listed(4111), again);
}

// A comm with many threads keeps a count, not its members (CoreImpl::kCommMembersKept): a policy
// for it must still find every one of them (by a pass over the tasks), and one for a rare comm
// its few, before and after the busy comm grew, shrank and came back.
TEST_F(CoreTest, PoliciesFindEveryThreadOfABusyCommAndOfARareOne) {
  applied(NodeInfoEvent{node_info()});
  constexpr uint32_t kBusy = 200;  // past the bound
  for (uint32_t i = 0; i < kBusy; ++i) applied(TaskSeen{task(1000 + i, 1000, 1 + i, "tokio-rt-w")});
  applied(TaskSeen{task(5000, 5000, 9, "decode_loop")});
  applied(NodePolicyUpsert{comm_policy("busy", 1, "^tokio-rt-w$", 1)});
  applied(NodePolicyUpsert{comm_policy("rare", 1, "^decode_loop$", 1)});
  EXPECT_EQ(core.desired_size(), kBusy + 1);
  for (uint32_t i = 0; i < kBusy; ++i) ASSERT_NE(entry(1000 + i), nullptr) << 1000 + i;
  ASSERT_NE(entry(5000), nullptr);
  // Most of the busy comm's threads leave, one is renamed to the rare comm: a new generation of
  // each policy still finds exactly the live ones.
  for (uint32_t i = 0; i < kBusy - 3; ++i) applied(TaskExited{{1000 + i, 1 + i}});
  applied(TaskRenamed{{1000 + kBusy - 1, kBusy}, "decode_loop"});
  applied(PolicyDelete{PolicyKind::Node, "busy", 0});
  applied(PolicyDelete{PolicyKind::Node, "rare", 0});
  EXPECT_EQ(core.desired_size(), 0u);
  applied(NodePolicyUpsert{comm_policy("busy", 2, "^tokio-rt-w$", 1)});
  EXPECT_EQ(core.desired_size(), 2u);
  applied(NodePolicyUpsert{comm_policy("rare", 2, "^decode_loop$", 1)});
  EXPECT_EQ(core.desired_size(), 4u);
  EXPECT_NE(entry(1000 + kBusy - 1), nullptr) << "the renamed thread, found under its new comm";
}

// The rescan sends only the tasks the core does not know as they are now (issue #13): the answer
// must be false for every observation the TaskSeen handler would act on, and true only for its
// no-ops, or a rescan would skip a change (or resend every task).
TEST_F(CoreTest, KnowsTaskAsIsTrueExactlyForTheObservationsATaskSeenWouldIgnore) {
  applied(NodeInfoEvent{node_info()});
  Task t = task(500, 500, 1, "worker", "/system.slice/a.service");
  t.cpuset = CpuSet::range(0, 1);
  t.title = "VLLM::EngineCore_DP0";
  EXPECT_FALSE(core.knows_task_as(t)) << "not seen yet";
  applied(TaskSeen{t});
  EXPECT_TRUE(core.knows_task_as(t));
  EXPECT_EQ(core.apply(TaskSeen{t}).status, ApplyResult::Status::Ignored) << "the same observation is a no-op";
  auto differs = [&](auto change, const char* what) {
    Task u = t;
    change(u);
    EXPECT_FALSE(core.knows_task_as(u)) << what;
  };
  differs([](Task& u) { u.comm = "other"; }, "comm");
  differs([](Task& u) { u.title = "VLLM::EngineCore_DP1"; }, "title");
  differs([](Task& u) { u.cgroup = "/system.slice/b.service"; }, "cgroup");
  differs([](Task& u) { u.cpuset = CpuSet::range(0, 0); }, "cpuset");
  differs([](Task& u) { u.cpuset.reset(); }, "no cpuset");
  differs([](Task& u) { u.key.start = 2; }, "a new task under the tid (INV-2)");
  differs([](Task& u) { u.tgid = 400; }, "tgid");
  differs([](Task& u) { u.role = "decode"; }, "a role the task does not have");
  applied(TaskRoleSet{t.key, "decode"});
  EXPECT_TRUE(core.knows_task_as(t)) << "an observation without a role keeps the registered one";
  // After a restart every task is seen again in the new epoch, changed or not (INV-7).
  applied(DaemonRestart{core.generation()});
  EXPECT_FALSE(core.knows_task_as(t)) << "seen before the restart";
  applied(TaskSeen{t});
  EXPECT_TRUE(core.knows_task_as(t));
  applied(TaskExited{t.key});
  EXPECT_FALSE(core.knows_task_as(t)) << "exited";
}

}  // namespace
}  // namespace c2c::testing
