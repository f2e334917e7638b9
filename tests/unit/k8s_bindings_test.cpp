// Bindings: allocation x inventory x pods, field by field, and their conversion to core entities.
#include <gtest/gtest.h>

#include "k8s/bindings.hpp"
#include "k8s/decode.hpp"
#include "source_dir.hpp"

namespace c2c::k8s {
namespace {

Decoded parse(const std::string& yaml) {
  Decoded d = decode_text(yaml, "test");
  for (const auto& r : d.refused) ADD_FAILURE() << r.to_string();
  return d;
}

BindingSet bind_all(const Decoded& d, const std::string& node = "",
                std::optional<std::map<std::string, std::string>> labels = std::nullopt) {
  BindingOptions o;
  o.node = node;
  o.node_labels = std::move(labels);
  return compute_bindings(d.claims, Inventory::build(d.slices), d.pods, o);
}

bool has(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}

constexpr const char* kGpuSlice = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: kind-worker-gpu-abcde}
spec:
  driver: gpu.example.com
  nodeName: kind-worker
  pool: {name: kind-worker, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      numaNodeID: {int: 1}
      resource.kubernetes.io/pcieRoot: {string: pci0000:40}
      resource.kubernetes.io/pciBusID: {string: "0000:41:00.0"}
  - name: gpu-1
    attributes:
      numaNodeID: {int: 0}
---
)";

constexpr const char* kTutorialClaim = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: some-gpu, namespace: dra-tutorial, uid: d3e48dbf, generation: 2}
status:
  allocation:
    devices:
      results:
      - {device: gpu-0, driver: gpu.example.com, pool: kind-worker, request: some-gpu}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [kind-worker]}
  reservedFor:
  - {name: pod0, resource: pods, uid: c4dadf20}
---
)";

TEST(K8sBindings, GpuDeviceGetsSliceTopology) {
  BindingSet s = bind_all(parse(std::string(kGpuSlice) + kTutorialClaim), "kind-worker");
  ASSERT_EQ(s.bindings.size(), 1u);
  const ClaimDeviceBinding& b = s.bindings[0];
  EXPECT_EQ(b.claim_uid, "d3e48dbf");
  EXPECT_EQ(b.claim_generation, 2);
  EXPECT_EQ(b.claim_namespace, "dra-tutorial");
  EXPECT_EQ(b.claim_name, "some-gpu");
  EXPECT_EQ(b.pod_uid, "c4dadf20");
  EXPECT_EQ(b.pod_name, "pod0");
  EXPECT_EQ(b.node_name, "kind-worker");
  EXPECT_EQ(b.request, "some-gpu");
  EXPECT_EQ(b.driver, "gpu.example.com");
  EXPECT_EQ(b.pool, "kind-worker");
  EXPECT_EQ(b.device, "gpu-0");
  EXPECT_EQ(b.share_id, "");
  EXPECT_EQ(b.numa_nodes, std::vector<int>{1});  // the example driver's own numaNodeID
  EXPECT_EQ(b.pcie_root(), "pci0000:40");
  EXPECT_EQ(b.pci_bus_id, "0000:41:00.0");
  EXPECT_FALSE(b.cpus);
  EXPECT_TRUE(b.warnings.empty()) << b.warnings[0];
}

TEST(K8sBindings, AllocationForAnotherNodeIsWarnedAndSkipped) {
  BindingSet s = bind_all(parse(std::string(kGpuSlice) + kTutorialClaim), "node-b");
  EXPECT_TRUE(s.bindings.empty());
  EXPECT_TRUE(has(s.warnings, "allocation is for another node (kind-worker), not node-b"));
}

TEST(K8sBindings, LabelSelectorsAreEvaluatedOnlyWithLabels) {
  Decoded d = parse(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: imex, namespace: n, uid: u}
status:
  allocation:
    devices:
      results: [{request: r, driver: gpu.nvidia.com, pool: p, device: imex-channel-0}]
    nodeSelector:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: nvidia.com/gpu.cliqueid, operator: In, values: ["1"]}
  reservedFor: [{resource: pods, name: p, uid: pu}]
)");
  BindingSet unknown = bind_all(d, "n1");
  ASSERT_EQ(unknown.bindings.size(), 1u);
  EXPECT_TRUE(has(unknown.warnings, "depends on node labels that are unknown"));
  EXPECT_EQ(bind_all(d, "n1", std::map<std::string, std::string>{{"nvidia.com/gpu.cliqueid", "1"}}).bindings.size(), 1u);
  EXPECT_TRUE(bind_all(d, "n1", std::map<std::string, std::string>{{"nvidia.com/gpu.cliqueid", "2"}}).bindings.empty());
}

TEST(K8sBindings, OnlyTheHighestPoolGenerationCountsAndMissingSlicesAreWarned) {
  Decoded d = parse(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: old}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-9, attributes: {numaNodeID: {int: 0}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: new-a}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 2, resourceSliceCount: 2}
  devices: [{name: gpu-0, attributes: {numaNodeID: {int: 0}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: n, uid: u}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: gpu.example.com, pool: n1, device: gpu-0}
      - {request: r, driver: gpu.example.com, pool: n1, device: gpu-9}
  reservedFor: [{resource: pods, name: p, uid: pu}]
)");
  Inventory inv = Inventory::build(d.slices);
  ASSERT_NE(inv.pool("gpu.example.com", "n1"), nullptr);
  EXPECT_EQ(inv.pool("gpu.example.com", "n1")->generation, 2);
  EXPECT_FALSE(inv.pool("gpu.example.com", "n1")->complete());
  EXPECT_EQ(inv.device("gpu.example.com", "n1", "gpu-9"), nullptr);  // only in the stale generation
  BindingSet s = bind_all(d);
  ASSERT_EQ(s.bindings.size(), 2u);
  EXPECT_EQ(s.bindings[0].device, "gpu-0");
  EXPECT_EQ(s.bindings[0].numa_nodes, std::vector<int>{0});
  EXPECT_TRUE(has(s.bindings[0].warnings, "pool gpu.example.com/n1 is incomplete (1 of 2 slices at generation 2)"));
  EXPECT_EQ(s.bindings[1].device, "gpu-9");
  EXPECT_TRUE(s.bindings[1].numa_nodes.empty());
  EXPECT_TRUE(has(s.bindings[1].warnings, "is in no known ResourceSlice (its pool is incomplete)"));
}

constexpr const char* kCpuIndividual = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: cpus}
spec:
  driver: dra.cpu
  nodeName: w1
  pool: {name: w1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: cpudev002, attributes: {dra.cpu/cpuID: {int: 2}, resource.kubernetes.io/numaNode: {int: 0}, dra.cpu/coreID: {int: 2}}}
  - {name: cpudev066, attributes: {dra.cpu/cpuID: {int: 66}, resource.kubernetes.io/numaNode: {int: 1}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: cpu-request-4-cpus, namespace: default, uid: cu, generation: 1}
status:
  allocation:
    devices:
      results:
      - {request: req-dummy, driver: dra.cpu, pool: w1, device: cpudev002}
      - {request: req-dummy, driver: dra.cpu, pool: w1, device: cpudev066}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [w1]}]}]
  reservedFor: [{resource: pods, name: my-app-with-dra-cpu, uid: pu}]
---
apiVersion: v1
kind: Pod
metadata: {name: my-app-with-dra-cpu, namespace: default, uid: pu, labels: {app: dra}}
spec:
  nodeName: w1
  containers: [{name: container1, resources: {claims: [{name: container1-claim}]}}]
  resourceClaims: [{name: container1-claim, resourceClaimName: cpu-request-4-cpus}]
)";

TEST(K8sBindings, CpuDriverIndividualModeGivesEachDeviceItsCpuId) {
  BindingSet s = bind_all(parse(kCpuIndividual), "w1");
  ASSERT_EQ(s.bindings.size(), 2u);
  EXPECT_EQ(s.bindings[0].device, "cpudev002");
  EXPECT_EQ(s.bindings[0].cpus, CpuSet::of({2}));
  EXPECT_EQ(s.bindings[0].cpus_source, "dra.cpu/cpuID");
  EXPECT_EQ(s.bindings[0].numa_nodes, std::vector<int>{0});
  EXPECT_EQ(s.bindings[1].cpus, CpuSet::of({66}));
  EXPECT_EQ(s.bindings[1].numa_nodes, std::vector<int>{1});
  EXPECT_EQ(s.bindings[1].node_name, "w1");
  EXPECT_TRUE(s.warnings.empty()) << s.warnings[0];
}

TEST(K8sBindings, ToCoreListsDevicesOncePerClaimAndResolvesPodClaimNames) {
  Decoded d = parse(kCpuIndividual);
  BindingSet s = bind_all(d, "w1");
  CoreEntities core = to_core(s, d.claims, d.pods);
  ASSERT_EQ(core.claims.size(), 1u);
  const c2c::Claim& c = core.claims[0];
  EXPECT_EQ(c.uid, "cu");
  EXPECT_EQ(c.generation, 1);
  EXPECT_EQ(c.node, "w1");
  EXPECT_EQ(c.reserved_for, std::vector<std::string>{"pu"});
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].driver, "dra.cpu");
  EXPECT_EQ(c.devices[0].cpus, CpuSet::of({2}));
  EXPECT_EQ(c.devices[1].numa_nodes, std::vector<int>{1});
  ASSERT_EQ(core.pods.size(), 1u);
  const c2c::Pod& p = core.pods[0];
  EXPECT_EQ(p.uid, "pu");
  EXPECT_EQ(p.namespace_, "default");
  EXPECT_EQ(p.name, "my-app-with-dra-cpu");
  EXPECT_EQ(p.labels.at("app"), "dra");
  EXPECT_EQ(p.claims.at("container1-claim"), "cu");
  EXPECT_EQ(p.cgroup, "");  // filled by the host plane
  EXPECT_TRUE(core.warnings.empty()) << core.warnings[0];
}

constexpr const char* kSharedGrouped = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: g, namespace: n, uid: gu}
status:
  allocation:
    devices:
      results:
      - {request: req-cpu-slice, driver: dra.cpu, pool: dra-driver-cpu-worker, device: cpudevnuma001, shareID: 7f1c}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [dra-driver-cpu-worker]}]}]
  reservedFor: [{resource: pods, name: a, uid: pa}, {resource: pods, name: b, uid: pb}, {apiGroup: scheduling.k8s.io, resource: podgroups, name: pg, uid: x}]
)";

TEST(K8sBindings, CpuDriverGroupedModeWithoutOpaqueCpusetIsUnknownWithWarning) {
  Decoded d = parse(kSharedGrouped);
  Decoded slices = decode_path(c2c::test::source_dir() + "/tests/fixtures/dra/resourceslice-v1-nodename-dra-driver-cpu-grouped-numa.yaml");
  if (slices.slices.empty()) { GTEST_SKIP() << "DRA fixtures not found"; }
  d.slices = slices.slices;
  BindingSet s = bind_all(d, "dra-driver-cpu-worker");
  ASSERT_EQ(s.bindings.size(), 2u);  // one per reserved pod; the PodGroup is not a pod
  for (const auto& b : s.bindings) {
    EXPECT_EQ(b.share_id, "7f1c");
    EXPECT_EQ(b.numa_nodes, std::vector<int>{1});
    EXPECT_EQ(b.pcie_roots, (std::vector<std::string>{"pci0000:40", "pci0000:50"}));
    EXPECT_EQ(b.pcie_root(), "");  // several roots: no single one
    EXPECT_FALSE(b.cpus);
    EXPECT_TRUE(has(b.warnings, "CPUs unknown (grouped mode"));
  }
  EXPECT_EQ(s.bindings[0].pod_uid, "pa");
  EXPECT_EQ(s.bindings[1].pod_uid, "pb");
  EXPECT_TRUE(has(s.warnings, "reserved for podgroups pg (not a pod): ignored"));
}

TEST(K8sBindings, OpaqueCpusetAppliesOnlyToItsDriverAndRequests) {
  Decoded d = parse(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: n, uid: u}
status:
  allocation:
    devices:
      results:
      - {request: a/sub, driver: dra.cpu, pool: p, device: d0}
      - {request: b, driver: dra.cpu, pool: p, device: d1}
      - {request: c, driver: dra.cpu, pool: p, device: d2}
      config:
      - {source: FromClaim, requests: [a], opaque: {driver: dra.cpu, parameters: {cpuConfig: {cpuset: "2-5"}}}}
      - {source: FromClaim, requests: [b], opaque: {driver: other.example.com, parameters: {cpuConfig: {cpuset: "7"}}}}
      - {source: FromClaim, requests: [c], opaque: {driver: dra.cpu, parameters: {cpuConfig: {cpuset: "9-x"}}}}
  reservedFor: [{resource: pods, name: p, uid: pu}]
)");
  BindingSet s = bind_all(d);
  ASSERT_EQ(s.bindings.size(), 3u);
  EXPECT_EQ(s.bindings[0].cpus, CpuSet::range(2, 5));  // main request "a" of "a/sub"
  EXPECT_EQ(s.bindings[0].cpus_source, "opaque cpuConfig.cpuset");
  EXPECT_FALSE(s.bindings[1].cpus);  // config is for another driver
  EXPECT_FALSE(s.bindings[2].cpus);
  EXPECT_TRUE(has(s.bindings[2].warnings, "opaque parameters.cpuConfig.cpuset '9-x'"));
}

TEST(K8sBindings, StandardNumaAttributeWinsOverTheDriversOwn) {
  Decoded d = parse(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: n1, generation: 0, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {numa: {int: 1}}}
  - {name: gpu-1, attributes: {numa: {int: 1}, resource.kubernetes.io/numaNode: {int: 0}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: n, uid: u}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: gpu.nvidia.com, pool: n1, device: gpu-0}
      - {request: r, driver: gpu.nvidia.com, pool: n1, device: gpu-1}
  reservedFor: [{resource: pods, name: p, uid: pu}]
)");
  BindingSet s = bind_all(d);
  ASSERT_EQ(s.bindings.size(), 2u);
  EXPECT_EQ(s.bindings[0].numa_nodes, std::vector<int>{1});
  EXPECT_EQ(s.bindings[1].numa_nodes, std::vector<int>{0});
  EXPECT_TRUE(has(s.bindings[1].warnings, "gpu.nvidia.com/numa disagrees with resource.kubernetes.io/numaNode"));
  EXPECT_EQ(s.bindings[0].node_name, "n1");  // from the device's nodeName slice
}

TEST(K8sBindings, PodOnAnotherNodeIsNotBoundHereAndUnreservedPodsAreWarned) {
  Decoded d = parse(std::string(kGpuSlice) + kTutorialClaim + R"(
apiVersion: v1
kind: Pod
metadata: {name: pod0, namespace: dra-tutorial, uid: c4dadf20}
spec: {nodeName: other-node, resourceClaims: [{name: gpu, resourceClaimName: some-gpu}]}
---
apiVersion: v1
kind: Pod
metadata: {name: intruder, namespace: dra-tutorial, uid: zz}
spec: {nodeName: kind-worker, resourceClaims: [{name: gpu, resourceClaimName: some-gpu}]}
)");
  BindingSet s = bind_all(d, "kind-worker");
  EXPECT_TRUE(s.bindings.empty());
  EXPECT_TRUE(has(s.warnings, "pod dra-tutorial/intruder: claim dra-tutorial/some-gpu is not reserved for this pod"));
  BindingSet all = bind_all(d);
  ASSERT_EQ(all.bindings.size(), 1u);
  EXPECT_EQ(all.bindings[0].node_name, "other-node");
  EXPECT_TRUE(has(all.bindings[0].warnings, "pod runs on other-node but the allocation is for kind-worker"));
}

TEST(K8sBindings, UnallocatedClaimsGiveNoBindingsAndOutputIsDeterministic) {
  Decoded d = parse(std::string(kGpuSlice) + kTutorialClaim +
                    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: pending, namespace: n, uid: pq}\n");
  BindingSet a = bind_all(d);
  std::reverse(d.claims.begin(), d.claims.end());
  BindingSet b = bind_all(d);
  ASSERT_EQ(a.bindings.size(), 1u);
  EXPECT_EQ(a.bindings, b.bindings);
  nlohmann::json j = to_json(a.bindings[0]);
  EXPECT_EQ(j["claimUID"], "d3e48dbf");
  EXPECT_EQ(j["pcieRoot"], "pci0000:40");
  EXPECT_TRUE(j["cpus"].is_null());
  EXPECT_NE(to_table(a.bindings).find("gpu.example.com/kind-worker/gpu-0"), std::string::npos);
}

}  // namespace
}  // namespace c2c::k8s

namespace c2c::k8s {
namespace {

TEST(K8sBindings, WithTheNodesCompletePodListAReservedPodNotOnItGetsNoBinding) {
  Decoded d = parse(std::string(kGpuSlice) + kTutorialClaim);
  BindingOptions o;
  o.node = "kind-worker";
  o.pods_complete = true;
  EXPECT_TRUE(compute_bindings(d.claims, Inventory::build(d.slices), d.pods, o).bindings.empty());
  Decoded p = parse("apiVersion: v1\nkind: Pod\nmetadata: {name: pod0, namespace: dra-tutorial, uid: c4dadf20}\nspec: {nodeName: kind-worker}\n");
  d.pods = p.pods;
  BindingSet s = compute_bindings(d.claims, Inventory::build(d.slices), d.pods, o);
  ASSERT_EQ(s.bindings.size(), 1u);
  EXPECT_EQ(s.bindings[0].pod_uid, "c4dadf20");
}

}  // namespace
}  // namespace c2c::k8s
