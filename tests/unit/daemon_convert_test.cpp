// proto <-> model conversions (src/api/convert.*): round trips, and every refusal names its
// proto field path.
#include <gtest/gtest.h>

#include "api/convert.hpp"

namespace c2c::api {
namespace {

NodeSchedulingPolicy seed_node_policy() {
  NodeSchedulingPolicy p;
  p.name = "vllm-enginecore";
  p.generation = 3;
  p.node_names = {"node-a"};
  p.node_selectors = {{"gpu", "true"}};
  p.dra_selectors = {DraSelector{"gpu.nvidia.com", "pool-0", ""}};
  p.command_regex = "^EngineCore(_DP[0-9]+)?$";
  p.priority = 1;
  p.execution_time = 2'000'000;
  p.boost_inherit_depth = 2;  // spec.boost.inherit.depth (issue 43 item 3)
  return p;
}

DraExecutionPolicy seed_dra_policy() {
  DraExecutionPolicy p;
  p.name = "vllm-decode";
  p.generation = 7;
  p.match_labels = {{"app", "vllm"}};
  p.resource_claims = {"gpu", "rdma"};
  p.prefer_same_numa = true;
  p.task_roles = {TaskRole{"engine", "", "^EngineCore", ExecClass::LatencyCritical},
                  TaskRole{"nccl", "nccl-progress", "", ExecClass::CommunicationProgress}};
  p.task_roles[1].boost_inherit_depth = 1;
  p.require_preview = true;
  p.max_boost = 5'000'000'000ull;
  return p;
}

TEST(DaemonConvert, NodePolicyRoundTrips) {
  auto p = seed_node_policy();
  auto back = from_proto(to_proto(p), "policy.node");
  ASSERT_TRUE(back.ok()) << back.error.field << ": " << back.error.message;
  EXPECT_EQ(*back.value, p);
}

TEST(DaemonConvert, DraPolicyRoundTripsThroughTheOneof) {
  AnyPolicy p = seed_dra_policy();
  auto back = from_proto(to_proto(p), "policy");
  ASSERT_TRUE(back.ok()) << back.error.field << ": " << back.error.message;
  EXPECT_EQ(std::get<DraExecutionPolicy>(*back.value), std::get<DraExecutionPolicy>(p));
  EXPECT_EQ(kind_of(*back.value), PolicyKind::Dra);
  EXPECT_EQ(name_of(*back.value), "vllm-decode");
  EXPECT_EQ(generation_of(*back.value), 7);
}

TEST(DaemonConvert, UnsetOneofNamesTheKind) {
  pb::Policy empty;
  auto r = from_proto(empty, "policy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.field, "policy.kind");
}

struct NodeCase {
  const char* expected_field;
  void (*mutate)(pb::NodeSchedulingPolicy&);
};

TEST(DaemonConvert, EveryNodePolicyErrorNamesItsProtoField) {
  const NodeCase cases[] = {
      {"policy.node.command_regex", [](pb::NodeSchedulingPolicy& p) { p.set_command_regex("(unclosed"); }},
      {"policy.node.command_regex", [](pb::NodeSchedulingPolicy& p) { p.set_command_regex(""); }},
      {"policy.node.command_regex", [](pb::NodeSchedulingPolicy& p) { p.set_command_regex(std::string(2000, 'a')); }},
      {"policy.node.name", [](pb::NodeSchedulingPolicy& p) { p.set_name("Not_A_Name"); }},
      {"policy.node.name", [](pb::NodeSchedulingPolicy& p) { p.set_name(std::string(300, 'a')); }},
      {"policy.node.generation", [](pb::NodeSchedulingPolicy& p) { p.set_generation(-1); }},
      {"policy.node.priority", [](pb::NodeSchedulingPolicy& p) { p.set_priority(5000); }},
      {"policy.node.execution_time_ns", [](pb::NodeSchedulingPolicy& p) { p.set_execution_time_ns(5); }},
      {"policy.node.node_names[1]", [](pb::NodeSchedulingPolicy& p) { p.add_node_names(""); }},
      {"policy.node.dra_selectors[0].driver", [](pb::NodeSchedulingPolicy& p) { p.mutable_dra_selectors(0)->set_driver(""); }},
      {"policy.node.node_names", [](pb::NodeSchedulingPolicy& p) {
         p.clear_node_names();
         p.clear_node_selectors();
         p.clear_dra_selectors();
       }},
      {"policy.node.name", [](pb::NodeSchedulingPolicy& p) { p.set_name(std::string("a\0b", 3)); }},
      {"policy.node.boost.inherit.depth", [](pb::NodeSchedulingPolicy& p) { p.mutable_boost()->mutable_inherit()->set_depth(3); }},
      {"policy.node.boost.inherit.depth", [](pb::NodeSchedulingPolicy& p) { p.mutable_boost()->mutable_inherit()->set_depth(0); }},
      {"policy.node.boost.inherit", [](pb::NodeSchedulingPolicy& p) { p.set_priority(0); }},
  };
  for (const auto& c : cases) {
    pb::Policy p;
    *p.mutable_node() = to_proto(seed_node_policy());
    c.mutate(*p.mutable_node());
    auto r = from_proto(p, "policy");
    ASSERT_FALSE(r.ok()) << c.expected_field;
    EXPECT_EQ(r.error.field, c.expected_field) << r.error.message;
    EXPECT_FALSE(r.error.message.empty());
  }
}

struct DraCase {
  const char* expected_field;
  void (*mutate)(pb::DRAExecutionPolicy&);
};

TEST(DaemonConvert, EveryDraPolicyErrorNamesItsProtoField) {
  const DraCase cases[] = {
      {"policy.dra.task_roles[0].command_regex", [](pb::DRAExecutionPolicy& p) { p.mutable_task_roles(0)->set_command_regex("(["); }},
      {"policy.dra.task_roles[1].execution_class", [](pb::DRAExecutionPolicy& p) { p.mutable_task_roles(1)->set_execution_class("turbo"); }},
      {"policy.dra.task_roles[0].name", [](pb::DRAExecutionPolicy& p) { p.mutable_task_roles(0)->set_name(""); }},
      {"policy.dra.task_roles[0].command_regex", [](pb::DRAExecutionPolicy& p) {
         p.mutable_task_roles(0)->set_command_regex("");
         p.mutable_task_roles(0)->set_registered_role("");
       }},
      {"policy.dra.task_roles", [](pb::DRAExecutionPolicy& p) { p.clear_task_roles(); }},
      {"policy.dra.resource_claims", [](pb::DRAExecutionPolicy& p) { p.clear_resource_claims(); }},
      {"policy.dra.resource_claims[0]", [](pb::DRAExecutionPolicy& p) { p.set_resource_claims(0, ""); }},
      {"policy.dra.max_boost_duration", [](pb::DRAExecutionPolicy& p) { p.set_max_boost_duration("forever"); }},
      {"policy.dra.max_boost_duration", [](pb::DRAExecutionPolicy& p) { p.set_max_boost_duration("2h"); }},
      {"policy.dra.fallback", [](pb::DRAExecutionPolicy& p) { p.set_fallback("cfs"); }},
      {"policy.dra.match_labels[app]", [](pb::DRAExecutionPolicy& p) { (*p.mutable_match_labels())["app"] = std::string(100, 'x'); }},
      {"policy.dra.name", [](pb::DRAExecutionPolicy& p) { p.set_name(""); }},
      {"policy.dra.task_roles[1].boost.inherit.depth", [](pb::DRAExecutionPolicy& p) {
         p.mutable_task_roles(1)->mutable_boost()->mutable_inherit()->set_depth(5);
       }},
      {"policy.dra.task_roles[1].boost.inherit", [](pb::DRAExecutionPolicy& p) {
         p.mutable_task_roles(1)->set_execution_class("throughput");
       }},
  };
  for (const auto& c : cases) {
    pb::Policy p;
    *p.mutable_dra() = to_proto(seed_dra_policy());
    c.mutate(*p.mutable_dra());
    auto r = from_proto(p, "policy");
    ASSERT_FALSE(r.ok()) << c.expected_field;
    EXPECT_EQ(r.error.field, c.expected_field) << r.error.message;
  }
}

Claim seed_claim() {
  Claim c;
  c.uid = "claim-gpu";
  c.generation = 2;
  c.node = "node-a";
  AllocatedDevice d;
  d.request = "gpu";
  d.driver = "gpu.nvidia.com";
  d.pool = "node-a";
  d.device = "gpu-0";
  d.numa_nodes = {0};
  d.pcie_root = "pci0000:00";
  d.pci_bus_id = "0000:3b:00.0";
  d.cpus = CpuSet::range(0, 3);
  c.devices.push_back(d);
  d.device = "gpu-1";
  d.share_id = "share-1";
  d.cpus.reset();
  c.devices.push_back(d);
  c.reserved_for = {"pod-1", "pod-2"};
  return c;
}

TEST(DaemonConvert, BindingsRoundTripToTheSameClaim) {
  auto c = seed_claim();
  auto rows = bindings_from_claim(c);
  EXPECT_EQ(rows.size(), 4u);  // 2 devices x 2 pods
  google::protobuf::RepeatedPtrField<pb::ClaimDeviceBinding> field(rows.begin(), rows.end());
  auto back = claims_from_bindings(field, "bindings");
  ASSERT_TRUE(back.ok()) << back.error.field << ": " << back.error.message;
  ASSERT_EQ(back.value->size(), 1u);
  EXPECT_EQ(back.value->front(), c);
}

TEST(DaemonConvert, BindingErrorsNameTheIndexAndField) {
  auto rows = bindings_from_claim(seed_claim());
  struct Case {
    const char* field;
    void (*mutate)(pb::ClaimDeviceBinding&);
  } cases[] = {
      {"bindings[2].cpus", [](pb::ClaimDeviceBinding& b) { b.set_cpus("0-zz"); }},
      {"bindings[2].cpus", [](pb::ClaimDeviceBinding& b) { b.set_cpus("9999"); }},
      {"bindings[2].claim_uid", [](pb::ClaimDeviceBinding& b) { b.set_claim_uid(""); }},
      {"bindings[2].claim_generation", [](pb::ClaimDeviceBinding& b) { b.set_claim_generation(0); }},
      {"bindings[2].claim_generation", [](pb::ClaimDeviceBinding& b) { b.set_claim_generation(9); }},
      {"bindings[2].node_name", [](pb::ClaimDeviceBinding& b) { b.set_node_name("node-b"); }},
      {"bindings[2].numa_nodes[0]", [](pb::ClaimDeviceBinding& b) { b.set_numa_nodes(0, -1); }},
      {"bindings[2].driver", [](pb::ClaimDeviceBinding& b) { b.set_driver(""); }},
      {"bindings[2].pool", [](pb::ClaimDeviceBinding& b) { b.set_pool(std::string(400, 'p')); }},
  };
  for (const auto& c : cases) {
    google::protobuf::RepeatedPtrField<pb::ClaimDeviceBinding> field(rows.begin(), rows.end());
    c.mutate(field[2]);
    auto r = claims_from_bindings(field, "bindings");
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.error.field, c.field) << r.error.message;
  }
  google::protobuf::RepeatedPtrField<pb::ClaimDeviceBinding> none;
  EXPECT_EQ(claims_from_bindings(none, "bindings").error.field, "bindings");
  // A refusal by the core's claim validation names the binding's proto field, not the core's
  // ("claim.generation"): here the generation bound (2^53).
  google::protobuf::RepeatedPtrField<pb::ClaimDeviceBinding> big(rows.begin(), rows.end());
  for (auto& b : big) b.set_claim_generation((int64_t{1} << 53) + 1);
  auto r = claims_from_bindings(big, "bindings");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.field, "bindings[0].claim_generation") << r.error.message;
  EXPECT_EQ(binding_field_of("claim.devices[1].pool"), "pool");
  EXPECT_EQ(binding_field_of("claim.node"), "node_name");
}

TEST(DaemonConvert, PodRoundTripsAndNamesBadFields) {
  Pod p;
  p.uid = "pod-1";
  p.namespace_ = "ml";
  p.name = "vllm-0";
  p.labels = {{"app", "vllm"}};
  p.claims = {{"gpu", "claim-gpu"}};
  p.cgroup = "/kubepods.slice/pod1";
  p.cpuset = CpuSet::range(0, 7);
  auto back = from_proto(to_proto(p), "pods[0]");
  ASSERT_TRUE(back.ok()) << back.error.field;
  EXPECT_EQ(*back.value, p);

  auto bad = to_proto(p);
  bad.set_cgroup("relative/path");
  EXPECT_EQ(from_proto(bad, "pods[0]").error.field, "pods[0].cgroup");
  bad = to_proto(p);
  bad.set_cpus("3-1x");
  EXPECT_EQ(from_proto(bad, "pods[0]").error.field, "pods[0].cpus");
  bad = to_proto(p);
  bad.set_uid("");
  EXPECT_EQ(from_proto(bad, "pods[0]").error.field, "pods[0].uid");
  bad = to_proto(p);
  (*bad.mutable_claims())["gpu"] = "";
  EXPECT_EQ(from_proto(bad, "pods[0]").error.field, "pods[0].claims");
  // The proto's field path of the task roles, not the core's "taskRoles" (issue 42).
  bad = to_proto(p);
  (*bad.mutable_task_roles())["a b"] = "^x$";
  EXPECT_EQ(from_proto(bad, "pods[0]").error.field, "pods[0].task_roles");
  bad = to_proto(p);
  (*bad.mutable_task_roles())["decode"] = "((";
  EXPECT_EQ(from_proto(bad, "pods[3]").error.field, "pods[3].task_roles[decode]");
}

RuntimeValue sample_value() {
  RuntimeValue v;
  v.start = 955400;
  v.generation = 12;
  v.slice_ns = 2'000'000;
  v.boost_until = 1'000'000'000;
  v.max_boost = 30'000'000'000ull;
  v.allowed = CpuSet::range(0, 3);
  v.preferred = CpuSet::of({1, 2});
  v.tgid = 4000;
  v.exec_class = ExecClass::LatencyCritical;
  v.flags = kFlagBoost | kFlagCustomSlice | kFlagAllowedCpus;
  return v;
}

TEST(DaemonConvert, LineageAndEntryRoundTrip) {
  Lineage l;
  l.claims = {ClaimRef{"claim-gpu", 2}};
  l.pod_uid = "pod-1";
  l.cgroup = "/kubepods/pod1/c1";
  l.task = TaskKey{4001, 955400};
  l.tgid = 4000;
  l.comm = "EngineCore_DP0";
  l.policy_kind = PolicyKind::Dra;
  l.policy = "vllm-decode";
  l.policy_generation = 7;
  l.role = "engine";
  l.strategy = Strategy::Tgid;
  l.value = sample_value();
  auto back = from_proto(to_proto(l), "lineage");
  ASSERT_TRUE(back.ok()) << back.error.field;
  EXPECT_EQ(back.value->value, l.value);
  EXPECT_EQ(back.value->claims, l.claims);
  EXPECT_EQ(back.value->task, l.task);
  EXPECT_EQ(back.value->strategy, Strategy::Tgid);
  EXPECT_EQ(back.value->policy_kind, PolicyKind::Dra);
  EXPECT_EQ(back.value->comm, "EngineCore_DP0");

  auto bad = to_proto(l);
  bad.mutable_entry()->add_flags("warp-speed");
  EXPECT_EQ(from_proto(bad, "lineage").error.field, "lineage.entry.flags");
  bad = to_proto(l);
  bad.mutable_entry()->set_allowed_cpus("x");
  EXPECT_EQ(from_proto(bad, "lineage").error.field, "lineage.entry.allowed_cpus");
}

TEST(DaemonConvert, PreviewRoundTrips) {
  PreviewResult r;
  r.policy = "vllm-enginecore";
  r.kind = PolicyKind::Node;
  r.policy_generation = 4;
  r.node_generation = 99;
  MatchedTask m;
  m.key = TaskKey{10, 20};
  m.tgid = 9;
  m.comm = "EngineCore_DP1";
  m.intended = sample_value();
  r.matched.push_back(m);
  m.key.tid = 11;
  m.intended.reset();
  m.actual = sample_value();
  m.strategy = Strategy::Tgid;
  r.matched.push_back(m);
  r.conflicts.push_back(c2c::Conflict{TaskKey{11, 20}, "NodeSchedulingPolicy/a", {"NodeSchedulingPolicy/b"}, "priority"});
  r.warnings = {"matches 0 tasks"};
  auto back = from_proto(to_proto(r), "preview");
  ASSERT_TRUE(back.ok()) << back.error.field;
  EXPECT_EQ(back.value->policy, r.policy);
  EXPECT_EQ(back.value->kind, r.kind);
  EXPECT_EQ(back.value->policy_generation, 4);
  EXPECT_EQ(back.value->node_generation, 99u);
  ASSERT_EQ(back.value->matched.size(), 2u);
  EXPECT_EQ(back.value->matched[0].intended, r.matched[0].intended);
  EXPECT_FALSE(back.value->matched[1].intended.has_value());
  EXPECT_EQ(back.value->matched[1].actual, r.matched[1].actual);
  EXPECT_EQ(back.value->matched[1].strategy, Strategy::Tgid);
  ASSERT_EQ(back.value->conflicts.size(), 1u);
  EXPECT_EQ(back.value->conflicts[0].winner, "NodeSchedulingPolicy/a");
  EXPECT_EQ(back.value->conflicts[0].losers, r.conflicts[0].losers);
  EXPECT_EQ(back.value->warnings, r.warnings);
}

TEST(DaemonConvert, TaskRoundTripsAndRefusesTidZero) {
  Task t;
  t.key = TaskKey{42, 1000};
  t.tgid = 40;
  t.comm = "worker";
  t.cgroup = "/system.slice/x.service";
  auto back = from_proto(to_proto(t), "task");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value->key, t.key);
  EXPECT_EQ(back.value->comm, "worker");
  auto bad = to_proto(t);
  bad.set_tid(0);
  EXPECT_EQ(from_proto(bad, "task").error.field, "task.tid");
}

TEST(DaemonConvert, ManifestFieldNamesBecomeProtoFieldNames) {
  EXPECT_EQ(proto_field_of("spec.taskRoles[2].selector.commandRegex"), "task_roles[2].command_regex");
  EXPECT_EQ(proto_field_of("spec.taskRoles[0].selector"), "task_roles[0].command_regex");
  EXPECT_EQ(proto_field_of("spec.safety.maxBoostDuration"), "max_boost_duration");
  EXPECT_EQ(proto_field_of("spec.workloadSelector.matchLabels[app]"), "match_labels[app]");
  EXPECT_EQ(proto_field_of("metadata.name"), "name");
  EXPECT_EQ(proto_field_of("draSelectors[1].driver"), "dra_selectors[1].driver");
  EXPECT_EQ(proto_field_of("executionTime"), "execution_time_ns");
}

// Issue #15: processRegex and the process title cross the wire (additive proto fields).
TEST(DaemonConvert, ProcessRegexAndTitleRoundTrip) {
  auto n = seed_node_policy();
  n.command_regex = "^VLLM::EngineCor$";
  n.process_regex = "^VLLM::EngineCore(_DP[0-9]+)?$";
  auto nb = from_proto(to_proto(n), "policy.node");
  ASSERT_TRUE(nb.ok()) << nb.error.field << ": " << nb.error.message;
  EXPECT_EQ(*nb.value, n);
  n.command_regex.clear();  // a title-only node policy
  nb = from_proto(to_proto(n), "policy.node");
  ASSERT_TRUE(nb.ok()) << nb.error.field << ": " << nb.error.message;
  EXPECT_EQ(nb.value->process_regex, n.process_regex);

  auto d = seed_dra_policy();
  d.task_roles[0].process_regex = "^VLLM::EngineCore_DP1$";
  auto db = from_proto(to_proto(d), "policy.dra");
  ASSERT_TRUE(db.ok()) << db.error.field << ": " << db.error.message;
  EXPECT_EQ(*db.value, d);

  Task t;
  t.key = TaskKey{42, 1000};
  t.tgid = 42;
  t.comm = "VLLM::EngineCor";
  t.title = "VLLM::EngineCore_DP0";
  auto tb = from_proto(to_proto(t), "task");
  ASSERT_TRUE(tb.ok());
  EXPECT_EQ(tb.value->title, "VLLM::EngineCore_DP0");
}

TEST(DaemonConvert, BadProcessRegexNamesItsProtoField) {
  auto n = to_proto(seed_node_policy());
  n.set_process_regex("(unclosed");
  EXPECT_EQ(from_proto(n, "policy.node").error.field, "policy.node.process_regex");
  n.set_process_regex(std::string(2000, 'a'));
  EXPECT_EQ(from_proto(n, "policy.node").error.field, "policy.node.process_regex");
  auto d = to_proto(seed_dra_policy());
  d.mutable_task_roles(0)->set_process_regex("([");
  EXPECT_EQ(from_proto(d, "policy.dra").error.field, "policy.dra.task_roles[0].process_regex");
  EXPECT_EQ(proto_field_of("spec.taskRoles[1].selector.processRegex"), "task_roles[1].process_regex");
}

}  // namespace
}  // namespace c2c::api

namespace c2c::api {
namespace {

// spec.controller crosses the node API whole (issue 46): what `claim2core apply` sends is what
// the daemon stores; a bad duration or target names its proto field.
TEST(DaemonConvert, ControllerRoundTripsAndNamesItsFields) {
  ControllerSpec c;
  c.target = ControllerTarget::StepP99;
  c.target_ns = 50'000'000;
  c.slice = ControllerSlice{8'000'000, 2'000'000, 2'000'000};
  c.preferred_cpus = CpuSet::range(4, 7);
  c.cooldown = 5'000'000'000;
  c.hysteresis = 5'000'000;
  c.max_raised = 30'000'000'000;
  c.window = 1'000'000'000;
  c.windows_without_signal = 4;
  auto node = seed_node_policy();
  node.controller = c;
  auto back = from_proto(to_proto(node), "policy.node");
  ASSERT_TRUE(back.ok()) << back.error.field << ": " << back.error.message;
  EXPECT_EQ(*back.value, node);
  auto dra = seed_dra_policy();
  c.role = "nccl";  // communication-progress boosts already: slice and CPUs only
  c.max_raised = 5'000'000'000;
  dra.controller = c;
  auto dback = from_proto(to_proto(dra), "policy.dra");
  ASSERT_TRUE(dback.ok()) << dback.error.field << ": " << dback.error.message;
  EXPECT_EQ(*dback.value, dra);

  auto pb = to_proto(node);
  pb.mutable_controller()->set_cooldown("soon");
  EXPECT_EQ(from_proto(pb, "policy.node").error.field, "policy.node.controller.cooldown");
  pb = to_proto(node);
  pb.mutable_controller()->mutable_target()->set_run_delay_p99("2ms");
  EXPECT_EQ(from_proto(pb, "policy.node").error.field, "policy.node.controller.target");
  pb = to_proto(node);
  pb.mutable_controller()->set_cooldown("100ms");  // below one window: the core's rule
  EXPECT_EQ(from_proto(pb, "policy.node").error.field, "policy.node.controller.cooldown");
}

}  // namespace
}  // namespace c2c::api
