// The controller's level acts on the entries (issue 46, spec/state-machine.md §10 "Levels"): a
// raised level changes the desired entries of the threads the controller acts on, within the
// task's allowed CPUs (INV-6), and every return to level 0 (lower, no signal, expiry) gives the
// static policy's entry back exactly.
#include <gtest/gtest.h>

#include "core/core.hpp"

namespace c2c {
namespace {

constexpr Nanos kMs = 1'000'000, kS = 1'000'000'000;

NodeSchedulingPolicy controlled_workers() {
  NodeSchedulingPolicy p;
  p.name = "workers";
  p.generation = 1;
  p.node_names = {"node-a"};
  p.command_regex = "^worker$";
  p.priority = 0;  // slice-only: level 0 writes class normal, no boost
  ControllerSpec c;
  c.target_ns = 2 * kMs;
  c.boost = true;
  c.slice = ControllerSlice{4 * kMs, 2 * kMs, 2 * kMs};  // levels 2 and 3: 4 ms, 2 ms
  c.preferred_cpus = CpuSet::range(6, 11);                // level 4: cut to each entry's allowed CPUs
  c.window = kS;
  c.cooldown = kS;
  c.hysteresis = kMs / 2;
  c.max_raised = 10 * kS;
  c.windows_without_signal = 3;
  p.controller = c;
  return p;
}

Task task(uint32_t tid, const std::string& comm, std::optional<CpuSet> cpuset = std::nullopt) {
  Task t;
  t.key = {tid, 1000 + tid};
  t.tgid = tid;
  t.comm = comm;
  t.cgroup = "/system.slice/w.service";
  t.cpuset = cpuset;
  return t;
}

class ControllerEntries : public ::testing::Test {
 protected:
  void SetUp() override {
    NodeInfo n;
    n.name = "node-a";
    n.cpus = CpuSet::range(0, 7);
    ok(NodeInfoEvent{n});
    ok(NodePolicyUpsert{controlled_workers()});
    ok(TaskSeen{task(200, "worker")});
    ok(TaskSeen{task(201, "worker", CpuSet::range(0, 3))});  // preferredCPUs 6-11 leave it nothing
    ok(TaskSeen{task(300, "other")});
    NodeSchedulingPolicy other = controlled_workers();
    other.name = "others";
    other.command_regex = "^other$";
    other.controller.reset();
    other.priority = 1;
    ok(NodePolicyUpsert{other});
    static200 = value(200);
    static201 = value(201);
    static300 = value(300);
  }
  ApplyResult ok(const Event& e) {
    ApplyResult r = core.apply(e);
    EXPECT_EQ(r.status, ApplyResult::Status::Applied) << r.field << ": " << r.message;
    EXPECT_TRUE(core.check().empty()) << core.check().front().invariant << " " << core.check().front().message;
    return r;
  }
  RuntimeValue value(uint32_t tid) const {
    auto it = core.desired().find(tid);
    EXPECT_NE(it, core.desired().end()) << "tid " << tid;
    return it == core.desired().end() ? RuntimeValue{} : it->second.value;
  }
  // The value without the fields that move with time and generations.
  static RuntimeValue timeless(RuntimeValue v) {
    v.generation = 0;
    v.boost_until = 0;
    return v;
  }
  uint32_t level() const { return core.controllers().at(0).state.level; }
  ApplyResult window(Nanos at, std::optional<Nanos> signal) {
    ok(TimeAdvance{at});
    return ok(ControllerWindow{PolicyKind::Node, "workers", signal});
  }
  Core core;
  RuntimeValue static200, static201, static300;
};

TEST_F(ControllerEntries, EachRaisedLevelChangesTheEntriesWithinTheAllowedCpusAndTheWayDownRestoresThem) {
  ASSERT_EQ(static200.exec_class, ExecClass::Normal);
  ASSERT_FALSE(static200.flags & kFlagBoost);
  ASSERT_EQ(static200.allowed, CpuSet::range(0, 7));
  ASSERT_EQ(static201.allowed, CpuSet::range(0, 3));

  // Level 1: boost on (latency-critical, the node's lease bound), nothing else.
  ApplyResult r = window(1 * kS, 5 * kMs);
  ASSERT_EQ(level(), 1u);
  EXPECT_EQ(r.changed_tids, (std::vector<uint32_t>{200, 201})) << "only the controlled policy's threads";
  RuntimeValue v = value(200);
  EXPECT_TRUE(v.flags & kFlagBoost);
  EXPECT_EQ(v.exec_class, ExecClass::LatencyCritical);
  EXPECT_EQ(v.max_boost, NodeInfo{}.default_max_boost);
  EXPECT_EQ(v.boost_until, 1 * kS + v.max_boost);
  EXPECT_EQ(v.slice_ns, static200.slice_ns);
  EXPECT_EQ(timeless(value(300)), timeless(static300)) << "another policy's thread is not touched";
  // The plan writes exactly that value (the mirror reads the plan, not the level).
  bool saw = false;
  for (const auto& op : core.plan().ops)
    if (op.tid == 200) {
      saw = true;
      EXPECT_EQ(op.value, v);
    }
  EXPECT_TRUE(saw);

  // Level 2 and 3: the slice walks from 4 ms to 2 ms, keeping the boost.
  window(2 * kS, 5 * kMs);
  ASSERT_EQ(level(), 2u);
  EXPECT_EQ(value(200).slice_ns, 4 * kMs);
  EXPECT_TRUE(value(200).flags & kFlagCustomSlice);
  EXPECT_TRUE(value(200).flags & kFlagBoost);
  EXPECT_EQ(value(200).boost_until, 1 * kS + v.max_boost) << "a kept boost keeps its lease";
  window(3 * kS, 5 * kMs);
  ASSERT_EQ(level(), 3u);
  EXPECT_EQ(value(200).slice_ns, 2 * kMs);

  // Level 4: preferred CPUs 6-11 cut to the entry's allowed 0-7 (INV-6); for the thread whose
  // allowed CPUs are 0-3 the cut leaves nothing and its preferred CPUs stay as they were.
  window(4 * kS, 5 * kMs);
  ASSERT_EQ(level(), 4u);
  EXPECT_EQ(value(200).preferred, CpuSet::range(6, 7));
  EXPECT_TRUE(value(200).flags & kFlagPreferredCpus);
  EXPECT_EQ(value(200).allowed, CpuSet::range(0, 7)) << "a level never widens allowed";
  EXPECT_EQ(value(201).preferred, static201.preferred);
  EXPECT_TRUE(value(201).preferred.subset_of(value(201).allowed));
  EXPECT_FALSE(value(201).flags & kFlagPreferredCpus);
  EXPECT_EQ(value(201).slice_ns, 2 * kMs);

  // Lower: level 3 again drops the CPUs and keeps the rest.
  window(5 * kS, 1 * kMs);
  ASSERT_EQ(level(), 3u);
  EXPECT_EQ(value(200).preferred, static200.preferred);
  EXPECT_FALSE(value(200).flags & kFlagPreferredCpus);
  EXPECT_EQ(value(200).slice_ns, 2 * kMs);

  // No signal for 3 windows (a tick at 8 s): back to level 0, the static entry exactly (CTL-5).
  ok(TimeAdvance{8 * kS});
  ASSERT_EQ(level(), 0u);
  EXPECT_EQ(timeless(value(200)), timeless(static200));
  EXPECT_EQ(value(200).boost_until, 0u);
  EXPECT_EQ(timeless(value(201)), timeless(static201));
}

TEST_F(ControllerEntries, ExpiryAndANewGenerationReturnTheEntriesToTheStaticPolicy) {
  // Raised, then kept raised by a high signal until maxRaised (10 s) ends it (CTL-4).
  for (Nanos t = 1; t <= 10; ++t) window(t * kS, 5 * kMs);
  EXPECT_EQ(level(), 4u);
  ok(TimeAdvance{11 * kS});
  ASSERT_EQ(level(), 0u);
  EXPECT_EQ(timeless(value(200)), timeless(static200));

  // A new generation of the policy starts its controller at level 0: the entries follow.
  window(12 * kS, 5 * kMs);
  ASSERT_EQ(level(), 1u);
  ASSERT_TRUE(value(200).flags & kFlagBoost);
  NodeSchedulingPolicy p = controlled_workers();
  p.generation = 2;
  ok(NodePolicyUpsert{p});
  ASSERT_EQ(level(), 0u);
  EXPECT_EQ(timeless(value(200)), timeless(static200));
}

// A DRA policy's controller acts on its own role's threads only (spec.controller.role).
TEST(ControllerEntriesDra, OnlyTheControlledRoleChanges) {
  Core core;
  auto ok = [&](const Event& e) {
    ApplyResult r = core.apply(e);
    ASSERT_EQ(r.status, ApplyResult::Status::Applied) << r.field << ": " << r.message;
    ASSERT_TRUE(core.check().empty()) << core.check().front().message;
  };
  NodeInfo n;
  n.name = "node-a";
  n.cpus = CpuSet::range(0, 7);
  ok(NodeInfoEvent{n});
  Claim c;
  c.uid = "claim-cpu";
  c.generation = 1;
  c.node = "node-a";
  AllocatedDevice d;
  d.request = "cpu";
  d.driver = "cpu.example.com";
  d.pool = "node-a";
  d.device = "cpus";
  d.cpus = CpuSet::range(2, 5);
  c.devices = {d};
  c.reserved_for = {"pod-1"};
  ok(ClaimAllocated{c});
  Pod pod;
  pod.uid = "pod-1";
  pod.name = "p";
  pod.namespace_ = "ns";
  pod.labels = {{"app", "llm"}};
  pod.claims = {{"cpu", "claim-cpu"}};
  pod.cgroup = "/kubepods/pod-1";
  ok(PodBound{pod});
  DraExecutionPolicy p;
  p.name = "llm";
  p.generation = 1;
  p.match_labels = {{"app", "llm"}};
  p.resource_claims = {"cpu"};
  p.respect_allocated_cpuset = true;
  p.max_boost = 5 * kS;
  p.task_roles = {TaskRole{"workers", "", "^worker$", ExecClass::Throughput},
                  TaskRole{"io", "", "^io$", ExecClass::Background}};
  ControllerSpec cs;
  cs.role = "workers";
  cs.target_ns = 2 * kMs;
  cs.boost = true;
  cs.preferred_cpus = CpuSet::range(4, 7);
  cs.window = kS;
  cs.cooldown = kS;
  cs.max_raised = 5 * kS;
  cs.windows_without_signal = 3;
  p.controller = cs;
  ok(DraPolicyUpsert{p});
  Task w = task(400, "worker");
  w.cgroup = "/kubepods/pod-1/c1";
  Task io = task(401, "io");
  io.cgroup = w.cgroup;
  ok(TaskSeen{w});
  ok(TaskSeen{io});
  const RuntimeValue io_static = core.desired().at(401).value;
  ok(TimeAdvance{kS});
  ok(ControllerWindow{PolicyKind::Dra, "llm", 9 * kMs});
  ok(TimeAdvance{2 * kS});
  ok(ControllerWindow{PolicyKind::Dra, "llm", 9 * kMs});
  const RuntimeValue v = core.desired().at(400).value;
  EXPECT_TRUE(v.flags & kFlagBoost);
  EXPECT_EQ(v.max_boost, 5 * kS) << "the DRA policy's own bound (INV-8)";
  EXPECT_EQ(v.allowed, CpuSet::range(2, 5)) << "the claim's CPUs stay the bound";
  EXPECT_EQ(v.preferred, CpuSet::range(4, 5)) << "4-7 cut to the allowed 2-5 (INV-6)";
  RuntimeValue io_now = core.desired().at(401).value;
  io_now.generation = 0;
  RuntimeValue io_before = io_static;
  io_before.generation = 0;
  EXPECT_EQ(io_now, io_before) << "the other role is not the controller's";
}

}  // namespace
}  // namespace c2c
