// Every file of shared/fixtures/dra either decodes (to bindings asserted field by field where it
// holds allocated claims) or is refused/skipped with its reason. A new fixture fails the table
// until someone states what it must decode to.
#include <map>

#include <gtest/gtest.h>

#include "k8s/bindings.hpp"
#include "k8s/decode.hpp"
#include "k8s_fixture_path.hpp"

namespace c2c::k8s {
namespace {

struct Expect {
  size_t claims = 0, slices = 0, pods = 0, classes = 0, refused = 0, skipped = 0;
  std::string reason = "";  // substring of every refusal (or of the skip reason when nothing is refused)
  std::string field = "";   // field named by every refusal
};

const std::map<std::string, Expect>& table() {
  static const std::map<std::string, Expect> t = {
      {"SOURCES.md", {.skipped = 1, .reason = "not a Kubernetes object file"}},
      {"cgroup-path-examples.md", {.skipped = 1, .reason = "not a Kubernetes object file"}},
      {"apitestdata-core-v1-Pod-allfields-k8s-1.34.yaml",
       {.refused = 1, .reason = "exactly one of resourceClaimName and resourceClaimTemplateName", .field = "spec.resourceClaims[0]"}},
      {"apitestdata-v1-DeviceClass-allfields-k8s-1.34.yaml", {.classes = 1}},
      {"apitestdata-v1-ResourceClaim-allfields-k8s-1.34.yaml",
       {.refused = 1, .reason = "exactly one of exactly and firstAvailable may be set, both are", .field = "spec.devices.requests[0]"}},
      {"apitestdata-v1-ResourceClaimTemplate-allfields-k8s-1.34.yaml", {.skipped = 1, .reason = "a template"}},
      {"apitestdata-v1-ResourceSlice-allfields-k8s-1.34.json",
       {.refused = 1, .reason = "got nodeName, nodeSelector, allNodes, perDeviceNodeSelection", .field = "spec"}},
      {"apitestdata-v1-ResourceSlice-allfields-k8s-1.34.yaml",
       {.refused = 1, .reason = "got nodeName, nodeSelector, allNodes, perDeviceNodeSelection", .field = "spec"}},
      {"apitestdata-v1-ResourceSlice-allfields-master-2026-07.yaml",
       {.refused = 1, .reason = "got nodeName, nodeSelector, allNodes, perDeviceNodeSelection", .field = "spec"}},
      {"apitestdata-v1beta1-ResourceSlice-allfields-basic-k8s-1.34.yaml",
       {.refused = 1, .reason = "got nodeName, nodeSelector, allNodes, perDeviceNodeSelection", .field = "spec"}},
      {"bundle-v1-claim-pod-dra-driver-cpu-grouped.yaml", {.claims = 1, .pods = 1}},
      {"bundle-v1-claims-pod-two-containers-dra-driver-cpu-individual.yaml", {.claims = 2, .pods = 1}},
      {"bundle-v1-consumable-capacity-claims-pods-dra-example-driver.yaml",
       {.claims = 2, .pods = 2, .skipped = 1, .reason = "Namespace"}},
      {"bundle-v1-firstavailable-rct-pods-dra-example-driver.yaml", {.pods = 2, .skipped = 3}},
      {"bundle-v1-rct-multi-request-container-request-refs-nvidia-gpu-test4.yaml", {.skipped = 3}},
      {"bundle-v1-rct-pods-nvidia-gpu-test1.yaml", {.pods = 2, .skipped = 2}},
      {"bundle-v1-rct-two-pods-dra-example-driver.yaml", {.pods = 2, .skipped = 2}},
      {"deviceclass-helm-template-dra-example-driver.yaml.tmpl", {.skipped = 1, .reason = "not a Kubernetes object file"}},
      {"deviceclass-helm-template-nvidia-deviceclass-gpu.yaml.tmpl", {.skipped = 1, .reason = "not a Kubernetes object file"}},
      {"deviceclass-helm-template-nvidia-deviceclass-mig.yaml.tmpl", {.skipped = 1, .reason = "not a Kubernetes object file"}},
      {"deviceclass-helm-template-nvidia-deviceclass-vfio-gpu.yaml.tmpl", {.skipped = 1, .reason = "not a Kubernetes object file"}},
      {"deviceclass-v1-dra-driver-cpu.yaml", {.classes = 1}},
      {"deviceclass-v1-nvidia-gpu-mig-vfio-RENDERED.yaml", {.classes = 3}},
      {"k8s-docs-v1-deviceclass-claim-pod-tutorial.yaml", {.claims = 1, .pods = 1, .classes = 1}},
      {"k8s-docs-v1-job-template-and-shared-claim.yaml", {.skipped = 1, .reason = "kind Job (batch/v1)"}},
      {"resourceclaim-v1-allocated-consumedcapacity-opaque-cpuset-dra-driver-cpu.yaml", {.claims = 1}},
      {"resourceclaim-v1-allocated-reserved-k8s-tutorial.yaml", {.claims = 1}},
      {"resourceclaims-v1-spec-only-dra-driver-cpu-selectors-constraints.yaml", {.claims = 4}},
      {"resourceslice-v1-nodename-dra-driver-cpu-grouped-numa.yaml", {.slices = 1}},
      {"resourceslice-v1-nodename-dra-example-driver-gpu-list.yaml", {.slices = 1}},
      {"resourceslice-v1-sharedcounters-partitions-kep4815.yaml",
       {.slices = 1, .refused = 1, .reason = "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection must be set, got none", .field = "spec"}},
      {"resourceslice-v1alpha3-nodeselector-basic-nvidia-imex.yaml",
       {.refused = 2, .reason = "resource.k8s.io/v1alpha3 is refused", .field = "apiVersion"}},
  };
  return t;
}

TEST(K8sFixtures, EveryFileDecodesOrIsRefusedWithItsReason) {
  C2C_REQUIRE_FIXTURES(dir);
  size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    auto it = table().find(name);
    if (it == table().end()) {
      ADD_FAILURE() << "fixture " << name << " has no expected outcome in the table";
      continue;
    }
    ++seen;
    const Expect& e = it->second;
    Decoded d = decode_path(entry.path());
    EXPECT_EQ(d.claims.size(), e.claims);
    EXPECT_EQ(d.slices.size(), e.slices);
    EXPECT_EQ(d.pods.size(), e.pods);
    EXPECT_EQ(d.classes.size(), e.classes);
    EXPECT_EQ(d.refused.size(), e.refused);
    EXPECT_EQ(d.skipped.size(), e.skipped);
    for (const auto& r : d.refused) {
      EXPECT_NE(r.message.find(e.reason), std::string::npos) << r.to_string();
      EXPECT_EQ(r.field, e.field) << r.to_string();
      EXPECT_FALSE(r.object.empty()) << r.to_string();
    }
    if (e.refused == 0 && !e.reason.empty()) {
      for (const auto& s : d.skipped) {
        EXPECT_NE(s.to_string().find(e.reason), std::string::npos) << s.to_string();
      }
    }
  }
  EXPECT_EQ(seen, table().size()) << "a fixture listed in the table is missing from " << dir;
}

TEST(K8sFixtures, ExampleDriverSliceListDecodesEveryDevice) {
  C2C_REQUIRE_FIXTURES(dir);
  Decoded d = decode_path(dir / "resourceslice-v1-nodename-dra-example-driver-gpu-list.yaml");
  ASSERT_EQ(d.slices.size(), 1u);
  const ResourceSlice& s = d.slices[0];
  EXPECT_EQ(s.origin.source, "resourceslice-v1-nodename-dra-example-driver-gpu-list.yaml#0.items[0]");
  EXPECT_EQ(s.driver, "gpu.example.com");
  EXPECT_EQ(s.selection, NodeSelection::NodeName);
  EXPECT_EQ(s.node_name, "dra-example-driver-cluster-worker");
  EXPECT_EQ(s.pool.generation, 0);
  EXPECT_EQ(s.pool.resource_slice_count, 1);
  EXPECT_EQ(s.meta.generation, 1);  // metadata.generation is not the pool generation
  ASSERT_EQ(s.devices.size(), 8u);
  const Device& g7 = s.devices[7];
  EXPECT_EQ(g7.name, "gpu-7");
  EXPECT_EQ(g7.attribute("gpu.example.com/index")->ints, std::vector<int64_t>{7});
  EXPECT_EQ(g7.attribute("gpu.example.com/driverVersion")->kind, DeviceAttribute::Kind::Version);
  EXPECT_EQ(g7.attribute("gpu.example.com/driverVersion")->strings, std::vector<std::string>{"1.0.0"});
  EXPECT_EQ(g7.attribute("gpu.example.com/uuid")->strings,
            std::vector<std::string>{"gpu-657bd2e7-f5c2-a7f2-fbaa-0d1cdc32f81b"});
  EXPECT_EQ(g7.capacity.at("gpu.example.com/memory"), "80Gi");
}

TEST(K8sFixtures, SharedCountersPoolIsIncompleteWithoutItsRefusedCounterSlice) {
  C2C_REQUIRE_FIXTURES(dir);
  Decoded d = decode_path(dir / "resourceslice-v1-sharedcounters-partitions-kep4815.yaml");
  Inventory inv = Inventory::build(d.slices);
  const PoolState* p = inv.pool("resource-driver.example.com", "my-pool");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->complete());
  EXPECT_EQ(p->devices.size(), 5u);
  const InventoryDevice* part = inv.device("resource-driver.example.com", "my-pool", "gpu-0-partition-2");
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(part->node_name, "my-node");
  EXPECT_EQ(part->device.consumes_counters.at(0).counter_set, "gpu-0-counter-set");
  EXPECT_EQ(part->device.consumes_counters.at(0).counters.at("memory"), "10Gi");
}

// The tutorial's allocated claim with the example driver's slices (a different cluster: pool
// "kind-worker" is not among them, so topology is unknown and said so).
TEST(K8sFixtures, TutorialClaimBindingFieldByField) {
  C2C_REQUIRE_FIXTURES(dir);
  Decoded d = decode_path(dir / "resourceclaim-v1-allocated-reserved-k8s-tutorial.yaml");
  d.append(decode_path(dir / "resourceslice-v1-nodename-dra-example-driver-gpu-list.yaml"));
  BindingOptions opt;
  opt.node = "kind-worker";
  BindingSet s = compute_bindings(d.claims, Inventory::build(d.slices), d.pods, opt);
  ASSERT_EQ(s.bindings.size(), 1u);
  const ClaimDeviceBinding& b = s.bindings[0];
  EXPECT_EQ(b.claim_uid, "d3e48dbf-40da-47c3-a7b9-f7d54d1051c3");
  EXPECT_EQ(b.claim_namespace, "dra-tutorial");
  EXPECT_EQ(b.claim_name, "some-gpu");
  EXPECT_EQ(b.claim_generation, 0);  // kubectl printed no metadata.generation
  EXPECT_EQ(b.pod_uid, "c4dadf20-392a-474d-a47b-ab82080c8bd7");
  EXPECT_EQ(b.pod_name, "pod0");
  EXPECT_EQ(b.node_name, "kind-worker");
  EXPECT_EQ(b.request, "some-gpu");
  EXPECT_EQ(b.driver, "gpu.example.com");
  EXPECT_EQ(b.pool, "kind-worker");
  EXPECT_EQ(b.device, "gpu-0");
  EXPECT_EQ(b.share_id, "");
  EXPECT_FALSE(b.admin_access);
  EXPECT_TRUE(b.numa_nodes.empty());
  EXPECT_TRUE(b.pcie_roots.empty());
  EXPECT_EQ(b.pci_bus_id, "");
  EXPECT_FALSE(b.cpus);
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_EQ(b.warnings[0], "device gpu.example.com/kind-worker/gpu-0 is in no known ResourceSlice: topology unknown");
  EXPECT_TRUE(s.warnings.empty());
  // Not for another node.
  opt.node = "dra-example-driver-cluster-worker";
  EXPECT_TRUE(compute_bindings(d.claims, Inventory::build(d.slices), d.pods, opt).bindings.empty());
}

TEST(K8sFixtures, CpuDriverOpaqueCpusetClaimBindingFieldByField) {
  C2C_REQUIRE_FIXTURES(dir);
  Decoded d = decode_path(dir / "resourceclaim-v1-allocated-consumedcapacity-opaque-cpuset-dra-driver-cpu.yaml");
  d.append(decode_path(dir / "resourceslice-v1-nodename-dra-driver-cpu-grouped-numa.yaml"));
  BindingSet s = compute_bindings(d.claims, Inventory::build(d.slices), d.pods, {});
  ASSERT_EQ(s.bindings.size(), 1u);
  const ClaimDeviceBinding& b = s.bindings[0];
  EXPECT_EQ(b.claim_uid, "claim-uid-123456");
  EXPECT_EQ(b.claim_namespace, "default");
  EXPECT_EQ(b.claim_name, "exclusive-cores-claim");
  EXPECT_EQ(b.pod_uid, "");
  EXPECT_EQ(b.node_name, "");  // no nodeSelector, device in no slice
  EXPECT_EQ(b.request, "cpu-request-1");
  EXPECT_EQ(b.driver, "dra.cpu");
  EXPECT_EQ(b.pool, "test-node");
  EXPECT_EQ(b.device, "cpudevmachine");
  EXPECT_EQ(b.cpus, CpuSet::range(2, 5));
  EXPECT_EQ(b.cpus_source, "opaque cpuConfig.cpuset");
  EXPECT_TRUE(b.numa_nodes.empty());
  EXPECT_EQ(b.warnings, (std::vector<std::string>{
                            "device dra.cpu/test-node/cpudevmachine is in no known ResourceSlice: topology unknown",
                            "claim is reserved for no pod"}));
  EXPECT_EQ(s.warnings, std::vector<std::string>{"claim default/exclusive-cores-claim: allocated but reserved for no pod"});
  CoreEntities core = to_core(s, d.claims, d.pods);
  ASSERT_EQ(core.claims.size(), 1u);
  EXPECT_EQ(core.claims[0].devices.at(0).cpus, CpuSet::range(2, 5));
  EXPECT_TRUE(core.pods.empty());
}

// The CPU driver's example claims are not allocated yet: they decode, but give no binding, and
// the pods are warned about instead of silently bound.
TEST(K8sFixtures, CpuDriverUnallocatedExamplesGiveNoBindings) {
  C2C_REQUIRE_FIXTURES(dir);
  Decoded d = decode_path(dir / "bundle-v1-claims-pod-two-containers-dra-driver-cpu-individual.yaml");
  ASSERT_EQ(d.claims.size(), 2u);
  EXPECT_EQ(d.claims[0].requests.at(0).exactly->count, 4);
  EXPECT_EQ(d.claims[1].requests.at(0).exactly->count, 6);
  ASSERT_EQ(d.pods.size(), 1u);
  EXPECT_EQ(d.pods[0].container_claims.size(), 2u);
  EXPECT_EQ(d.pods[0].claim_name_for("container2-claim"), "cpu-request-6-cpus");
  BindingSet s = compute_bindings(d.claims, Inventory::build(d.slices), d.pods, {});
  EXPECT_TRUE(s.bindings.empty());
  Decoded g = decode_path(dir / "bundle-v1-claim-pod-dra-driver-cpu-grouped.yaml");
  ASSERT_EQ(g.claims.size(), 1u);
  EXPECT_EQ(g.claims[0].requests.at(0).exactly->capacity_requests.at("dra.cpu/cpu"), "10");
}

TEST(K8sFixtures, GroupedCpuSliceTopology) {
  C2C_REQUIRE_FIXTURES(dir);
  Decoded d = decode_path(dir / "resourceslice-v1-nodename-dra-driver-cpu-grouped-numa.yaml");
  ASSERT_EQ(d.slices.size(), 1u);
  const Device& dev = d.slices[0].devices.at(1);
  EXPECT_TRUE(dev.allow_multiple_allocations);
  EXPECT_EQ(dev.capacity.at("dra.cpu/cpu"), "64");
  DeviceTopology t = topology_of("dra.cpu", dev);
  EXPECT_EQ(t.numa_nodes, std::vector<int>{1});
  EXPECT_EQ(t.pcie_roots, (std::vector<std::string>{"pci0000:40", "pci0000:50"}));
  EXPECT_FALSE(t.cpu_id);
  EXPECT_TRUE(t.warnings.empty());
}

}  // namespace
}  // namespace c2c::k8s
