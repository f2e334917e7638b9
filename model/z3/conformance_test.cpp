// The real core's steps conform to the Z3 model's transition relation, and a step the model does
// not allow (a post-state that does not follow from the event) is rejected.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conformance.hpp"

namespace c2c::z3m {
namespace {

const std::string kNode = "node-a";
const std::string kPod = "pod-1";
const std::string kPodCgroup = "/kubepods.slice/kubepods-pod1.slice";

NodeInfo node_info() {
  NodeInfo n;
  n.name = kNode;
  n.cpus = CpuSet::range(0, 15);
  return n;
}

Claim cpu_claim(int64_t generation, CpuSet cpus) {
  Claim c;
  c.uid = "claim-cpu";
  c.generation = generation;
  c.node = kNode;
  AllocatedDevice d;
  d.request = "cpu";
  d.driver = "dra.cpu";
  d.pool = kNode;
  d.device = "cpu0";
  d.cpus = cpus;
  c.devices = {d};
  c.reserved_for = {kPod};
  return c;
}

Pod pod() {
  Pod p;
  p.uid = kPod;
  p.namespace_ = "ns";
  p.name = "worker-0";
  p.labels = {{"role", "decode"}};
  p.claims = {{"cpu", "claim-cpu"}};
  p.cgroup = kPodCgroup;
  p.cpuset = CpuSet::range(0, 7);
  return p;
}

DraExecutionPolicy dra_policy(int64_t generation) {
  DraExecutionPolicy p;
  p.name = "decode";
  p.generation = generation;
  p.match_labels = {{"role", "decode"}};
  p.resource_claims = {"cpu"};
  p.task_roles = {TaskRole{"loop", "", "^decode", ExecClass::LatencyCritical}};
  p.max_boost = 2'000'000'000ull;
  return p;
}

NodeSchedulingPolicy node_policy(int64_t generation) {
  NodeSchedulingPolicy p;
  p.name = "engine";
  p.generation = generation;
  p.node_names = {kNode};
  p.command_regex = "^engine$";
  p.priority = 0;
  return p;
}

Task task(uint32_t tid, uint64_t start, std::string comm, std::string cgroup) {
  Task t;
  t.key = {tid, start};
  t.tgid = tid;
  t.comm = std::move(comm);
  t.cgroup = std::move(cgroup);
  return t;
}

// Applies each event and checks the step; returns how many keys were checked in total.
// `with_entry` counts the steps after which the desired table held an entry.
size_t run(Core& core, const std::vector<Event>& events, size_t* with_entry = nullptr) {
  size_t checked = 0;
  for (const Event& e : events) {
    Core pre = core;
    ApplyResult r = core.apply(e);
    EXPECT_NE(r.status, ApplyResult::Status::Invalid) << event_kind(e) << ": " << r.field << " " << r.message;
    ConformanceResult c = check_conformance(pre, e, core);
    for (const auto& f : c.failures) ADD_FAILURE() << f;
    checked += c.keys_checked;
    if (with_entry && !core.desired().empty()) ++*with_entry;
  }
  return checked;
}

TEST(Conformance, DraLifecycleWithTidReuseDeallocAndRestartConforms) {
  Core core;
  size_t with_entry = 0;
  size_t checked = run(core, {
      NodeInfoEvent{node_info()},
      DraPolicyUpsert{dra_policy(1)},
      ClaimAllocated{cpu_claim(1, CpuSet::range(2, 5))},
      PodBound{pod()},
      TaskSeen{task(200, 10, "decode_main", kPodCgroup + "/c1.scope")},
      TaskSeen{task(201, 11, "tokenizer", kPodCgroup + "/c1.scope")},
      BpfSynced{},
      TimeAdvance{1'500'000'000},   // past the lease's half-life: renewed with a new generation
      BpfSynced{},
      TaskSeen{task(200, 99, "decode_next", kPodCgroup + "/c1.scope")},  // TID reuse
      ClaimUpdated{cpu_claim(2, CpuSet::range(3, 4))},
      ClaimAllocated{cpu_claim(1, CpuSet::range(2, 5))},  // older generation: ignored (INV-3)
      BpfSynced{},
      ClaimDeallocated{"claim-cpu", 2},
      BpfSynced{},
      ClaimAllocated{cpu_claim(3, CpuSet::range(2, 3))},
      DaemonRestart{0},
      BpfObserved{{}},
      ClaimAllocated{cpu_claim(3, CpuSet::range(2, 3))},
      PodBound{pod()},
      TaskSeen{task(200, 99, "decode_next", kPodCgroup + "/c1.scope")},
      SyncComplete{},
      BpfSynced{},
      TaskExited{{200, 99}},
      BpfSynced{},
  }, &with_entry);
  EXPECT_GT(checked, 20u) << "the trace must exercise keys, not skip them";
  EXPECT_GE(with_entry, 8u) << "the DRA policy must derive entries along the trace";
}

TEST(Conformance, NodePolicyAndPolicyGenerationsConform) {
  Core core;
  size_t with_entry = 0;
  size_t checked = run(core, {
      NodeInfoEvent{node_info()},
      TaskSeen{task(300, 5, "engine", "/system.slice/e.service")},
      NodePolicyUpsert{node_policy(1)},
      BpfSynced{},
      NodePolicyUpsert{node_policy(3)},
      NodePolicyUpsert{node_policy(2)},  // older: ignored
      PolicyDelete{PolicyKind::Node, "engine", 3},
      BpfSynced{},
  }, &with_entry);
  EXPECT_GT(checked, 5u);
  EXPECT_GE(with_entry, 3u);
}

TEST(Conformance, RejectsAPostStateThatDoesNotFollowFromTheEvent) {
  Core core;
  run(core, {
      NodeInfoEvent{node_info()},
      TaskSeen{task(300, 5, "engine", "/system.slice/e.service")},
      NodePolicyUpsert{node_policy(1)},
  });
  Core pre = core;
  Core post = core;
  // The policy's deletion removes the entry...
  ASSERT_NE(post.apply(PolicyDelete{PolicyKind::Node, "engine", 1}).status, ApplyResult::Status::Invalid);
  ASSERT_TRUE(post.desired().empty());
  // ...so that post-state cannot be explained as a time advance (which never removes entries).
  ConformanceResult c = check_conformance(pre, TimeAdvance{5}, post);
  EXPECT_FALSE(c.ok);
  ASSERT_FALSE(c.failures.empty());
  EXPECT_NE(c.failures[0].find("does not allow"), std::string::npos) << c.failures[0];
  // And it is a valid step of the event that really happened.
  EXPECT_TRUE(check_conformance(pre, PolicyDelete{PolicyKind::Node, "engine", 1}, post).ok);
}

}  // namespace
}  // namespace c2c::z3m
