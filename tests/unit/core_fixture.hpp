// Small builders for core unit tests: one line per event, values that read like the seeds.
#pragma once

#include <gtest/gtest.h>

#include "core/core.hpp"

namespace c2c::testing {

inline const std::string kNode = "gpu-node-1";
inline const std::string kPod = "c4dadf20-392a-474d-a47b-ab82080c8bd7";
inline const std::string kPodCgroup = "/kubepods.slice/kubepods-podc4dadf20_392a_474d_a47b_ab82080c8bd7.slice";
inline const std::string kGpuClaim = "claim-gpu";
inline const std::string kCpuClaim = "claim-cpu";

inline NodeInfo node_info() {
  NodeInfo n;
  n.name = kNode;
  n.cpus = CpuSet::range(0, 15);
  n.numa_cpus = {{0, CpuSet::range(0, 7)}, {1, CpuSet::range(8, 15)}};
  n.pcie_root_cpus = {{"pci0000:00", CpuSet::range(0, 3)}};
  return n;
}

inline NodeSchedulingPolicy engine_policy(int64_t generation = 1, int32_t priority = 1) {
  NodeSchedulingPolicy p;
  p.name = "vllm-enginecore";
  p.generation = generation;
  p.node_names = {kNode};
  p.command_regex = "^EngineCore(_DP[0-9]+)?$";
  p.priority = priority;
  p.execution_time = 2'000'000;
  return p;
}

// engine_policy under another name and comm regex (several node policies on one node).
inline NodeSchedulingPolicy comm_policy(const std::string& name, int64_t generation, const std::string& regex,
                                        int32_t priority) {
  NodeSchedulingPolicy p = engine_policy(generation, priority);
  p.name = name;
  p.command_regex = regex;
  return p;
}

inline DraExecutionPolicy decode_policy(int64_t generation = 1) {
  DraExecutionPolicy p;
  p.name = "llm-decode";
  p.generation = generation;
  p.match_labels = {{"llm-d.ai/role", "decode"}};
  p.resource_claims = {"gpu", "cpu"};
  p.prefer_same_numa = true;
  p.task_roles = {TaskRole{"decode", "decode", "", ExecClass::LatencyCritical}};
  p.max_boost = 30'000'000'000ull;
  return p;
}

inline Claim gpu_claim(int64_t generation = 1) {
  Claim c;
  c.uid = kGpuClaim;
  c.generation = generation;
  c.node = kNode;
  AllocatedDevice d;
  d.request = "gpu";
  d.driver = "gpu.nvidia.com";
  d.pool = kNode;
  d.device = "gpu-0";
  d.numa_nodes = {0};
  d.pcie_root = "pci0000:00";
  c.devices = {d};
  c.reserved_for = {kPod};
  return c;
}

inline Claim cpu_claim(CpuSet cpus, int64_t generation = 1) {
  Claim c;
  c.uid = kCpuClaim;
  c.generation = generation;
  c.node = kNode;
  AllocatedDevice d;
  d.request = "cpu";
  d.driver = "dra.cpu";
  d.pool = kNode;
  d.device = "cpudevnuma000";
  d.cpus = cpus;
  c.devices = {d};
  c.reserved_for = {kPod};
  return c;
}

inline Pod decode_pod(std::optional<CpuSet> cpuset = CpuSet::range(0, 7)) {
  Pod p;
  p.uid = kPod;
  p.namespace_ = "llm";
  p.name = "decode-0";
  p.labels = {{"llm-d.ai/role", "decode"}};
  p.claims = {{"gpu", kGpuClaim}, {"cpu", kCpuClaim}};
  p.cgroup = kPodCgroup;
  p.cpuset = cpuset;
  return p;
}

inline Task task(uint32_t tid, uint32_t tgid, uint64_t start, std::string comm, std::string cgroup = "/system.slice/vllm.service",
                 std::string role = "") {
  Task t;
  t.key = {tid, start};
  t.tgid = tgid;
  t.comm = std::move(comm);
  t.cgroup = std::move(cgroup);
  t.role = std::move(role);
  return t;
}

inline Task pod_task(uint32_t tid, uint64_t start, std::string comm, std::string role = "") {
  return task(tid, 4101, start, std::move(comm), kPodCgroup + "/cri-containerd-413715dc.scope", std::move(role));
}

// Applies an event and expects it to be Applied, with no invariant violated before or after.
class CoreTest : public ::testing::Test {
 protected:
  Core core;

  ApplyResult apply(const Event& e) {
    const StepContext before = core.step_context(e);
    ApplyResult r = core.apply(e);
    for (const auto& v : core.check_step(before, r)) ADD_FAILURE() << v.invariant << ": " << v.message;
    for (const auto& v : core.check()) ADD_FAILURE() << v.invariant << ": " << v.message;
    return r;
  }
  void applied(const Event& e) {
    auto r = apply(e);
    ASSERT_EQ(r.status, ApplyResult::Status::Applied) << event_kind(e) << ": " << r.field << " " << r.message;
  }
  // Asserts the event is refused (Ignored or Invalid) and that the state did not change at all.
  ApplyResult refused(const Event& e, ApplyResult::Status expected) {
    const std::string before = core.digest();
    ApplyResult r = apply(e);
    EXPECT_EQ(r.status, expected) << r.message;
    EXPECT_EQ(core.digest(), before) << "a refused " << event_kind(e) << " changed the state";
    return r;
  }
  const DesiredEntry* entry(uint32_t tid) const {
    auto it = core.desired().find(tid);
    return it == core.desired().end() ? nullptr : &it->second;
  }
  void sync() { applied(BpfSynced{}); }
};

// A vLLM-like process under two node policies: the seed's EngineCore policy matches a thread by
// its own comm, "python-leader" (priority 0) the thread-group leader, so the leader's other
// threads inherit it (TGID strategy).
class LeaderAndEngine : public CoreTest {
 protected:
  NodeSchedulingPolicy leader_policy = [] {
    auto p = engine_policy();
    p.name = "python-leader";
    p.command_regex = "^python3\\.12$";
    p.priority = 0;
    return p;
  }();
  void SetUp() override {
    applied(NodeInfoEvent{node_info()});
    applied(NodePolicyUpsert{leader_policy});
    applied(NodePolicyUpsert{engine_policy()});
    applied(TaskSeen{task(3785998, 3785998, 10, "python3.12")});
    applied(TaskSeen{task(3786004, 3785998, 11, "EngineCore_DP0")});
  }
};

}  // namespace c2c::testing
