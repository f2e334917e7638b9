// The compact task record (issue #13 item 2): a task's values are interned and its cgroup entry
// keeps the pod its path resolves to. Threads seen before their pod is bound must join it when it
// is bound and leave it when it is removed (the per-cgroup pod is reset whenever pod bindings
// change), and what a task reads back (tasks(), explain()) is what was observed.
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

}  // namespace
}  // namespace c2c::testing
