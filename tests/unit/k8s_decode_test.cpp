// Decoding of resource.k8s.io objects: YAML typing, Lists, multi-document input, version
// conversion, refusals naming the field, and every field of the API's all-fields fixtures.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "k8s/decode.hpp"
#include "codec/yaml_json.hpp"
#include "k8s_fixture_path.hpp"

namespace c2c::k8s {
namespace {

using nlohmann::json;

json load_first(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  auto docs = codec::parse_documents(ss.str());
  for (auto& d : docs)
    if (!d.is_null()) return d;
  return nullptr;
}

TEST(K8sYaml, PlainScalarsAreTypedQuotedStayStrings) {
  auto docs = codec::yaml_to_json("a: 4\nb: \"4\"\nc: 80Gi\nd: 1.0.0\ne: true\nf: ~\ng: 1.5\nh: '0'\ni: -7\nj: 0x10\n");
  ASSERT_EQ(docs.size(), 1u);
  const json& d = docs[0];
  EXPECT_TRUE(d["a"].is_number_integer());
  EXPECT_EQ(d["a"].get<int64_t>(), 4);
  EXPECT_EQ(d["b"], "4");
  EXPECT_EQ(d["c"], "80Gi");
  EXPECT_EQ(d["d"], "1.0.0");
  EXPECT_EQ(d["e"], true);
  EXPECT_TRUE(d["f"].is_null());
  EXPECT_TRUE(d["g"].is_number_float());
  EXPECT_EQ(d["h"], "0");
  EXPECT_EQ(d["i"].get<int64_t>(), -7);
  EXPECT_EQ(d["j"].get<int64_t>(), 16);
}

TEST(K8sYaml, SyntaxErrorNamesTheLine) {
  Decoded d = decode_text("apiVersion: v1\nkind: [unclosed\n", "bad.yaml");
  ASSERT_EQ(d.refused.size(), 1u);
  EXPECT_NE(d.refused[0].message.find("line"), std::string::npos) << d.refused[0].message;
}

// Issue #12 item 6: manifests refuse duplicate keys in YAML and in JSON alike.
TEST(K8sYaml, DuplicateKeysAreRefusedInYamlAndJson) {
  Decoded d = decode_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n", "dup.yaml");
  ASSERT_EQ(d.refused.size(), 1u);
  EXPECT_NE(d.refused[0].message.find("duplicate key 'name'"), std::string::npos) << d.refused[0].message;
  EXPECT_NE(d.refused[0].message.find("line 5"), std::string::npos) << d.refused[0].message;
  Decoded j = decode_text(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"}})", "dup.json");
  ASSERT_EQ(j.refused.size(), 1u);
  EXPECT_NE(j.refused[0].message.find("metadata.name"), std::string::npos) << j.refused[0].message;
}

TEST(K8sYaml, JsonAndFlowStyleYamlBothParse) {
  EXPECT_EQ(codec::parse_documents(R"({"kind":"Pod","spec":{"a":[1,2]}})")[0]["spec"]["a"][1], 2);
  // Bare keys are not JSON but are YAML flow style (kubernetes/website's Job example).
  EXPECT_EQ(codec::parse_documents("{kind: \"Job\", spec: {n: 3}}")[0]["spec"]["n"], 3);
}

constexpr const char* kClaimV1 = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1, namespace: ns, uid: u1, generation: 3, resourceVersion: "42"}
spec:
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - {name: big, deviceClassName: gpu.example.com, count: 2}
      - {name: small, deviceClassName: gpu.example.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu/small, driver: gpu.example.com, pool: node-a, device: gpu-1, shareID: s-1}
  reservedFor:
  - {resource: pods, name: p, uid: pu}
)";

TEST(K8sDecode, FirstAvailableAndSubrequestResult) {
  Decoded d = decode_text(kClaimV1, "t");
  ASSERT_TRUE(d.refused.empty()) << d.refused[0].to_string();
  ASSERT_EQ(d.claims.size(), 1u);
  const ResourceClaim& c = d.claims[0];
  EXPECT_EQ(c.meta.uid, "u1");
  EXPECT_EQ(c.meta.generation, 3);
  EXPECT_EQ(c.meta.resource_version, "42");
  ASSERT_EQ(c.requests.size(), 1u);
  EXPECT_FALSE(c.requests[0].exactly);
  ASSERT_EQ(c.requests[0].first_available.size(), 2u);
  EXPECT_EQ(c.requests[0].first_available[0].count, 2);
  EXPECT_EQ(c.requests[0].first_available[1].count, 1);  // default
  EXPECT_EQ(c.requests[0].first_available[1].allocation_mode, "ExactCount");
  ASSERT_TRUE(c.allocation);
  EXPECT_EQ(c.allocation->results[0].request, "gpu/small");
  EXPECT_EQ(c.allocation->results[0].share_id, "s-1");
  EXPECT_FALSE(c.allocation->node_selector);  // nil: usable on every node
  ASSERT_EQ(c.reserved_for.size(), 1u);
  EXPECT_TRUE(c.reserved_for[0].is_pod());
}

TEST(K8sDecode, V1beta2IsReadAsV1) {
  std::string text = kClaimV1;
  text.replace(text.find("resource.k8s.io/v1"), 18, "resource.k8s.io/v1beta2");
  Decoded d = decode_text(text, "t");
  ASSERT_EQ(d.claims.size(), 1u);
  EXPECT_EQ(d.claims[0].origin.api_version, "resource.k8s.io/v1beta2");
  EXPECT_EQ(d.claims[0].allocation->results[0].device, "gpu-1");
}

TEST(K8sDecode, V1beta1ClaimRequestsAreConvertedToExactly) {
  Decoded d = decode_text(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c, namespace: n, uid: u}
spec:
  devices:
    requests:
    - {name: r, deviceClassName: dra.cpu, count: 4, allocationMode: ExactCount}
)", "t");
  ASSERT_EQ(d.claims.size(), 1u) << (d.refused.empty() ? "" : d.refused[0].to_string());
  ASSERT_TRUE(d.claims[0].requests[0].exactly);
  EXPECT_EQ(d.claims[0].requests[0].exactly->device_class_name, "dra.cpu");
  EXPECT_EQ(d.claims[0].requests[0].exactly->count, 4);
}

TEST(K8sDecode, V1beta1SliceUnwrapsBasicAndTreatsEmptyNodeNameAsUnset) {
  Decoded d = decode_text(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: ""
  allNodes: true
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic:
      attributes:
        index: {int: 0}
      capacity:
        memory: {value: 80Gi}
)", "t");
  ASSERT_EQ(d.slices.size(), 1u) << (d.refused.empty() ? "" : d.refused[0].to_string());
  const ResourceSlice& s = d.slices[0];
  EXPECT_EQ(s.selection, NodeSelection::AllNodes);
  ASSERT_EQ(s.devices.size(), 1u);
  ASSERT_NE(s.devices[0].attribute("gpu.example.com/index"), nullptr);
  EXPECT_EQ(s.devices[0].attribute("gpu.example.com/index")->ints, std::vector<int64_t>{0});
  EXPECT_EQ(s.devices[0].capacity.at("gpu.example.com/memory"), "80Gi");
}

TEST(K8sDecode, V1RefusesEmptyNodeNameAndFalseAllNodes) {
  Decoded d = decode_text(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d.example.com, nodeName: "", allNodes: true, pool: {name: p, resourceSliceCount: 1}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s2}
spec: {driver: d.example.com, nodeName: n, allNodes: false, pool: {name: p, resourceSliceCount: 1}}
)", "t");
  ASSERT_EQ(d.refused.size(), 2u);
  EXPECT_EQ(d.refused[0].field, "spec.nodeName");
  EXPECT_EQ(d.refused[1].field, "spec.allNodes");
  EXPECT_TRUE(d.slices.empty());
}

TEST(K8sDecode, V1alpha3AndUnknownVersionsAreRefusedWithTheReason) {
  Decoded d = decode_text(R"(
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceSlice
metadata: {name: old}
spec: {driver: x, nodeName: n, pool: {name: p, resourceSliceCount: 1}}
---
apiVersion: resource.k8s.io/v9
kind: ResourceClaim
metadata: {name: future}
)", "t");
  ASSERT_EQ(d.refused.size(), 2u);
  EXPECT_EQ(d.refused[0].object, "ResourceSlice old");
  EXPECT_EQ(d.refused[0].field, "apiVersion");
  EXPECT_NE(d.refused[0].message.find("v1alpha3 is refused"), std::string::npos);
  EXPECT_NE(d.refused[1].message.find("unsupported apiVersion resource.k8s.io/v9"), std::string::npos);
}

TEST(K8sDecode, MalformedObjectIsRefusedAndTheRestOfTheBatchDecodes) {
  Decoded d = decode_text(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: good, namespace: n, uid: u1}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: n, uid: u2}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: c, count: four}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad2, namespace: n, uid: u3}
status:
  allocation:
    devices:
      results:
      - {request: r, driver: d, pool: p}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d.example.com, nodeName: n1, pool: {name: p, resourceSliceCount: 1}}
)", "batch.yaml");
  ASSERT_EQ(d.claims.size(), 1u);
  EXPECT_EQ(d.claims[0].meta.name, "good");
  ASSERT_EQ(d.slices.size(), 1u);
  ASSERT_EQ(d.refused.size(), 2u);
  EXPECT_EQ(d.refused[0].source, "batch.yaml#1");
  EXPECT_EQ(d.refused[0].object, "ResourceClaim n/bad");
  EXPECT_EQ(d.refused[0].field, "spec.devices.requests[0].exactly.count");
  EXPECT_NE(d.refused[0].to_string().find("must be an integer"), std::string::npos);
  EXPECT_EQ(d.refused[1].field, "status.allocation.devices.results[0].device");
}

TEST(K8sDecode, TypedListItemsWithoutKindAreDecoded) {
  Decoded d = decode_text(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimList","metadata":{"resourceVersion":"9"},
    "items":[{"metadata":{"name":"a","namespace":"n","uid":"ua"}},{"metadata":{"name":"b","namespace":"n","uid":"ub"}}]})",
                          "list.json");
  ASSERT_EQ(d.claims.size(), 2u);
  EXPECT_EQ(d.claims[1].origin.source, "list.json#0.items[1]");
}

TEST(K8sDecode, OtherKindsAreSkippedWithAReason) {
  Decoded d = decode_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", "t");
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_NE(d.skipped[0].message.find("not used for bindings"), std::string::npos);
}

TEST(K8sDecode, PodClaimsResolveThroughStatusForTemplates) {
  Decoded d = decode_text(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: n, uid: pu, labels: {app: x}}
spec:
  nodeName: node-a
  containers:
  - name: c0
    resources: {claims: [{name: gpu, request: r1}, {name: shared}]}
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: t}
  - {name: shared, resourceClaimName: shared-claim}
  - {name: pending, resourceClaimTemplateName: t2}
status:
  resourceClaimStatuses:
  - {name: gpu, resourceClaimName: p-gpu-x7k2}
)", "t");
  ASSERT_EQ(d.pods.size(), 1u);
  const Pod& p = d.pods[0];
  EXPECT_EQ(p.node_name, "node-a");
  EXPECT_EQ(p.meta.labels.at("app"), "x");
  EXPECT_EQ(p.claim_name_for("gpu"), "p-gpu-x7k2");
  EXPECT_EQ(p.claim_name_for("shared"), "shared-claim");
  EXPECT_EQ(p.claim_name_for("pending"), std::nullopt);
  ASSERT_EQ(p.container_claims.size(), 2u);
  EXPECT_EQ(p.container_claims[0].request, "r1");
}

// Issue #14: the pod annotation claim2core.io/task-roles gives unmodified containers' threads a
// role by comm; a malformed one refuses the pod naming the annotation (the rest still decodes).
TEST(K8sDecode, PodTaskRolesAnnotationIsDecodedAndCheckedLikeTheCore) {
  Decoded d = decode_text(R"(
apiVersion: v1
kind: Pod
metadata:
  name: decode-0
  namespace: llm
  uid: pu
  annotations: {claim2core.io/task-roles: '{"decode": "^decode", "prefill": "^prefill-[0-9]+$"}'}
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: llm, uid: pv}
---
apiVersion: v1
kind: Pod
metadata:
  name: not-json
  namespace: llm
  uid: pw
  annotations: {claim2core.io/task-roles: 'decode=^decode'}
---
apiVersion: v1
kind: Pod
metadata:
  name: bad-regex
  namespace: llm
  uid: px
  annotations: {claim2core.io/task-roles: '{"decode": "(unclosed"}'}
---
apiVersion: v1
kind: Pod
metadata:
  name: bad-role
  namespace: llm
  uid: py
  annotations: {claim2core.io/task-roles: '{"two words": "^x"}'}
)", "pods.yaml");
  ASSERT_EQ(d.pods.size(), 2u);
  EXPECT_EQ(d.pods[0].task_roles, (std::map<std::string, std::string>{{"decode", "^decode"}, {"prefill", "^prefill-[0-9]+$"}}));
  EXPECT_TRUE(d.pods[1].task_roles.empty());
  ASSERT_EQ(d.refused.size(), 3u);
  for (const auto& r : d.refused) EXPECT_EQ(r.field, "metadata.annotations[claim2core.io/task-roles]") << r.to_string();
  EXPECT_NE(d.refused[0].to_string().find("JSON object"), std::string::npos) << d.refused[0].to_string();
  EXPECT_NE(d.refused[1].to_string().find("pod.taskRoles[decode]"), std::string::npos) << d.refused[1].to_string();
  EXPECT_NE(d.refused[2].to_string().find("whitespace"), std::string::npos) << d.refused[2].to_string();
}

// The API's all-fields ResourceClaim is deliberately invalid (exactly AND firstAvailable); with
// firstAvailable removed, every field the node reads decodes to the placeholder value.
TEST(K8sAllFields, ResourceClaimEveryField) {
  C2C_REQUIRE_FIXTURES(dir);
  json obj = load_first(dir / "apitestdata-v1-ResourceClaim-allfields-k8s-1.34.yaml");
  obj["spec"]["devices"]["requests"][0].erase("firstAvailable");
  ResourceClaim c = decode_resource_claim(obj);
  EXPECT_EQ(c.meta.name, "nameValue");
  EXPECT_EQ(c.meta.namespace_, "namespaceValue");
  EXPECT_EQ(c.meta.uid, "uidValue");
  EXPECT_EQ(c.meta.resource_version, "resourceVersionValue");
  EXPECT_EQ(c.meta.generation, 7);
  EXPECT_TRUE(c.meta.deleting);
  ASSERT_EQ(c.requests.size(), 1u);
  const DeviceSubRequest& ex = *c.requests[0].exactly;
  EXPECT_EQ(ex.device_class_name, "deviceClassNameValue");
  EXPECT_EQ(ex.allocation_mode, "allocationModeValue");
  EXPECT_EQ(ex.count, 4);
  EXPECT_TRUE(ex.admin_access);
  EXPECT_EQ(ex.selectors, std::vector<std::string>{"expressionValue"});
  EXPECT_EQ(ex.capacity_requests.at("requestsKey"), "0");
  ASSERT_EQ(c.constraints.size(), 1u);
  EXPECT_EQ(c.constraints[0].match_attribute, "matchAttributeValue");
  EXPECT_EQ(c.constraints[0].distinct_attribute, "distinctAttributeValue");
  ASSERT_EQ(c.config.size(), 1u);
  EXPECT_EQ(c.config[0].driver, "driverValue");
  EXPECT_EQ(c.config[0].parameters["spec"]["replicas"], 1);
  ASSERT_TRUE(c.allocation);
  const auto& r = c.allocation->results.at(0);
  EXPECT_EQ(r.request, "requestValue");
  EXPECT_EQ(r.driver, "driverValue");
  EXPECT_EQ(r.pool, "poolValue");
  EXPECT_EQ(r.device, "deviceValue");
  EXPECT_EQ(r.share_id, "shareIDValue");
  EXPECT_TRUE(r.admin_access);
  EXPECT_EQ(r.binding_conditions, std::vector<std::string>{"bindingConditionsValue"});
  EXPECT_EQ(r.binding_failure_conditions, std::vector<std::string>{"bindingFailureConditionsValue"});
  EXPECT_EQ(r.consumed_capacity.at("consumedCapacityKey"), "0");
  ASSERT_EQ(c.allocation->config.size(), 1u);
  EXPECT_EQ(c.allocation->config[0].source, "sourceValue");
  EXPECT_EQ(c.allocation->config[0].requests, std::vector<std::string>{"requestsValue"});
  ASSERT_TRUE(c.allocation->node_selector);
  const auto& term = c.allocation->node_selector->terms.at(0);
  EXPECT_EQ(term.match_expressions.at(0).key, "keyValue");
  EXPECT_EQ(term.match_fields.at(0).op, "operatorValue");
  EXPECT_EQ(term.match_fields.at(0).values, std::vector<std::string>{"valuesValue"});
  EXPECT_EQ(c.allocation->allocation_timestamp, "2005-01-01T01:01:01Z");
  ASSERT_EQ(c.reserved_for.size(), 1u);
  EXPECT_EQ(c.reserved_for[0].api_group, "apiGroupValue");
  EXPECT_EQ(c.reserved_for[0].resource, "resourceValue");
  EXPECT_FALSE(c.reserved_for[0].is_pod());
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].share_id, "shareIDValue");
  EXPECT_EQ(c.devices[0].conditions.at("typeValue"), "statusValue");
  EXPECT_EQ(c.devices[0].interface_name, "interfaceNameValue");
  EXPECT_EQ(c.devices[0].ips, std::vector<std::string>{"ipsValue"});
  EXPECT_EQ(c.devices[0].hardware_address, "hardwareAddressValue");
}

// All-fields slices set every node-selection form at once; keep perDeviceNodeSelection with
// allNodes per device and one attribute value, and the rest must decode.
json make_valid_allfields_slice(json obj, bool basic) {
  json& spec = obj["spec"];
  spec.erase("nodeName");
  spec.erase("nodeSelector");
  spec.erase("allNodes");
  json& dev = basic ? spec["devices"][0]["basic"] : spec["devices"][0];
  dev.erase("nodeName");
  dev.erase("nodeSelector");
  json& attr = dev["attributes"]["attributesKey"];
  attr = json{{"int", attr["int"]}};
  return obj;
}

void expect_allfields_slice(const ResourceSlice& s) {
  EXPECT_EQ(s.driver, "driverValue");
  EXPECT_EQ(s.pool.name, "nameValue");
  EXPECT_EQ(s.pool.generation, 2);
  EXPECT_EQ(s.pool.resource_slice_count, 3);
  EXPECT_EQ(s.selection, NodeSelection::PerDevice);
  ASSERT_EQ(s.devices.size(), 1u);
  const Device& d = s.devices[0];
  EXPECT_EQ(d.name, "nameValue");
  EXPECT_EQ(d.selection, NodeSelection::AllNodes);
  EXPECT_TRUE(d.allow_multiple_allocations);
  ASSERT_NE(d.attribute("driverValue/attributesKey"), nullptr);  // unqualified: driver's domain
  EXPECT_EQ(d.attribute("driverValue/attributesKey")->ints, std::vector<int64_t>{2});
  EXPECT_EQ(d.capacity.at("driverValue/capacityKey"), "0");
  ASSERT_EQ(d.consumes_counters.size(), 1u);
  EXPECT_EQ(d.consumes_counters[0].counter_set, "counterSetValue");
  EXPECT_EQ(d.consumes_counters[0].counters.at("countersKey"), "0");
  ASSERT_EQ(d.taints.size(), 1u);
  EXPECT_EQ(d.taints[0].effect, "effectValue");
  ASSERT_EQ(s.shared_counters.size(), 1u);
  EXPECT_EQ(s.shared_counters[0].counters.at("countersKey"), "0");
}

TEST(K8sAllFields, ResourceSliceV1YamlJsonAndV1beta1AgreeAfterConversion) {
  C2C_REQUIRE_FIXTURES(dir);
  ResourceSlice y = decode_resource_slice(
      make_valid_allfields_slice(load_first(dir / "apitestdata-v1-ResourceSlice-allfields-k8s-1.34.yaml"), false));
  ResourceSlice j = decode_resource_slice(
      make_valid_allfields_slice(load_first(dir / "apitestdata-v1-ResourceSlice-allfields-k8s-1.34.json"), false));
  ResourceSlice b = decode_resource_slice(make_valid_allfields_slice(
      load_first(dir / "apitestdata-v1beta1-ResourceSlice-allfields-basic-k8s-1.34.yaml"), true));
  expect_allfields_slice(y);
  expect_allfields_slice(j);
  expect_allfields_slice(b);
}

TEST(K8sAllFields, MasterListAttributes) {
  C2C_REQUIRE_FIXTURES(dir);
  json obj = load_first(dir / "apitestdata-v1-ResourceSlice-allfields-master-2026-07.yaml");
  obj = make_valid_allfields_slice(obj, false);
  obj["spec"]["devices"][0]["attributes"]["attributesKey"] = json{{"ints", {6}}};
  ResourceSlice s = decode_resource_slice(obj);  // unknown newer fields are ignored
  const DeviceAttribute* a = s.devices.at(0).attribute("driverValue/attributesKey");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->list);
  EXPECT_EQ(a->ints, std::vector<int64_t>{6});
}

TEST(K8sAllFields, AttributeWithSeveralValuesIsRefused) {
  C2C_REQUIRE_FIXTURES(dir);
  json obj = make_valid_allfields_slice(load_first(dir / "apitestdata-v1-ResourceSlice-allfields-k8s-1.34.yaml"), false);
  obj["spec"]["devices"][0]["attributes"]["attributesKey"] = json{{"int", 1}, {"string", "x"}};
  try {
    decode_resource_slice(obj);
    FAIL() << "decoded an attribute with two values";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field, "spec.devices[0].attributes.attributesKey");
  }
}

TEST(K8sAllFields, DeviceClassAndPod) {
  C2C_REQUIRE_FIXTURES(dir);
  DeviceClass c = decode_device_class(load_first(dir / "apitestdata-v1-DeviceClass-allfields-k8s-1.34.yaml"));
  EXPECT_EQ(c.meta.name, "nameValue");
  EXPECT_EQ(c.selectors, std::vector<std::string>{"expressionValue"});
  EXPECT_EQ(c.extended_resource_name, "extendedResourceNameValue");
  json pod = load_first(dir / "apitestdata-core-v1-Pod-allfields-k8s-1.34.yaml");
  pod["spec"]["resourceClaims"][0].erase("resourceClaimTemplateName");
  Pod p = decode_pod(pod);
  EXPECT_EQ(p.node_name, "nodeNameValue");
  EXPECT_EQ(p.claim_name_for("nameValue"), "resourceClaimNameValue");
  EXPECT_EQ(p.claim_statuses.at("nameValue"), "resourceClaimNameValue");
  ASSERT_FALSE(p.container_claims.empty());
  EXPECT_EQ(p.container_claims[0].name, "nameValue");
  EXPECT_EQ(p.container_claims[0].request, "requestValue");
}

}  // namespace
}  // namespace c2c::k8s
