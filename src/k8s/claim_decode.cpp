// ResourceClaim decoding (the allocation side). v1 and v1beta2 share one shape; v1beta1 puts the
// request fields directly on the request and is converted to `exactly` here.
#include "k8s/api_version.hpp"
#include "k8s/decode.hpp"
#include "k8s/json_fields.hpp"

namespace c2c::k8s {

using nlohmann::json;
using namespace fields;

namespace {

DeviceSubRequest sub_request(const json& j, const std::string& path, bool named) {
  DeviceSubRequest r;
  if (named) {
    r.name = string(j, "name", path);
    if (r.name.empty()) throw FieldError(join(path, "name"), "is required");
  }
  r.device_class_name = string(j, "deviceClassName", path);
  r.allocation_mode = string(j, "allocationMode", path);
  if (r.allocation_mode.empty()) r.allocation_mode = "ExactCount";
  r.count = integer(j, "count", path, 1);
  r.admin_access = boolean(j, "adminAccess", path);
  const json& sels = array(j, "selectors", path);
  for (size_t i = 0; i < sels.size(); ++i) {
    std::string p = index(join(path, "selectors"), i);
    r.selectors.push_back(string(object(sels[i], "cel", p), "expression", join(p, "cel")));
  }
  r.capacity_requests = string_map(object(j, "capacity", path), "requests", join(path, "capacity"), true);
  return r;
}

DeviceRequest request(const json& j, const std::string& path, ResourceApi api) {
  DeviceRequest r;
  r.name = string(j, "name", path);
  if (r.name.empty()) throw FieldError(join(path, "name"), "is required");
  const json& fa = array(j, "firstAvailable", path);
  for (size_t i = 0; i < fa.size(); ++i)
    r.first_available.push_back(sub_request(fa[i], index(join(path, "firstAvailable"), i), true));
  if (api == ResourceApi::V1beta1) {
    // v1beta1: the request itself holds deviceClassName & co. unless firstAvailable is used.
    if (r.first_available.empty()) r.exactly = sub_request(j, path, false);
    return r;
  }
  if (const json* ex = find(j, "exactly")) r.exactly = sub_request(*ex, join(path, "exactly"), false);
  if (r.exactly.has_value() == !r.first_available.empty())
    throw FieldError(path, r.exactly ? "exactly one of exactly and firstAvailable may be set, both are"
                                     : "exactly one of exactly and firstAvailable is required, none is set");
  return r;
}

std::vector<OpaqueDeviceConfig> configs(const json& parent, const std::string& path, bool allocation) {
  std::vector<OpaqueDeviceConfig> out;
  const json& a = array(parent, "config", path);
  for (size_t i = 0; i < a.size(); ++i) {
    std::string p = index(join(path, "config"), i);
    OpaqueDeviceConfig c;
    if (allocation) c.source = string(a[i], "source", p);
    c.requests = strings(a[i], "requests", p);
    const json& op = object(a[i], "opaque", p);
    c.driver = string(op, "driver", join(p, "opaque"));
    if (const json* params = find(op, "parameters")) c.parameters = *params;
    out.push_back(std::move(c));
  }
  return out;
}

AllocationResult allocation(const json& j, const std::string& path) {
  AllocationResult a;
  const json& devices = object(j, "devices", path);
  std::string dpath = join(path, "devices");
  const json& results = array(devices, "results", dpath);
  for (size_t i = 0; i < results.size(); ++i) {
    std::string p = index(join(dpath, "results"), i);
    const json& r = results[i];
    DeviceAllocationResult d;
    d.request = string(r, "request", p);
    d.driver = string(r, "driver", p);
    d.pool = string(r, "pool", p);
    d.device = string(r, "device", p);
    d.share_id = string(r, "shareID", p);
    d.admin_access = boolean(r, "adminAccess", p);
    d.binding_conditions = strings(r, "bindingConditions", p);
    d.binding_failure_conditions = strings(r, "bindingFailureConditions", p);
    d.consumed_capacity = string_map(r, "consumedCapacity", p, true);
    for (const char* required : {"request", "driver", "pool", "device"})
      if (string(r, required, p).empty()) throw FieldError(join(p, required), "is required");
    a.results.push_back(std::move(d));
  }
  a.config = configs(devices, dpath, true);
  if (const json* ns = find(j, "nodeSelector")) a.node_selector = node_selector(*ns, join(path, "nodeSelector"));
  a.allocation_timestamp = string(j, "allocationTimestamp", path);
  return a;
}

}  // namespace

ResourceClaim decode_resource_claim(const json& obj) {
  ResourceClaim c;
  c.origin.api_version = string(obj, "apiVersion", "");
  ResourceApi api = classify_resource_api(c.origin.api_version).api;
  c.meta = meta(obj);
  if (c.meta.name.empty()) throw FieldError("metadata.name", "is required");

  const json& devices = object(object(obj, "spec", ""), "devices", "spec");
  const json& reqs = array(devices, "requests", "spec.devices");
  for (size_t i = 0; i < reqs.size(); ++i) c.requests.push_back(request(reqs[i], index("spec.devices.requests", i), api));
  const json& cons = array(devices, "constraints", "spec.devices");
  for (size_t i = 0; i < cons.size(); ++i) {
    std::string p = index("spec.devices.constraints", i);
    c.constraints.push_back({strings(cons[i], "requests", p), string(cons[i], "matchAttribute", p),
                             string(cons[i], "distinctAttribute", p)});
  }
  c.config = configs(devices, "spec.devices", false);

  const json& status = object(obj, "status", "");
  if (const json* alloc = find(status, "allocation")) c.allocation = allocation(*alloc, "status.allocation");
  const json& rf = array(status, "reservedFor", "status");
  for (size_t i = 0; i < rf.size(); ++i) {
    std::string p = index("status.reservedFor", i);
    ConsumerReference r{string(rf[i], "apiGroup", p), string(rf[i], "resource", p), string(rf[i], "name", p),
                        string(rf[i], "uid", p)};
    if (r.uid.empty()) throw FieldError(join(p, "uid"), "is required");
    c.reserved_for.push_back(std::move(r));
  }
  const json& ds = array(status, "devices", "status");
  for (size_t i = 0; i < ds.size(); ++i) {
    std::string p = index("status.devices", i);
    AllocatedDeviceStatus d;
    d.driver = string(ds[i], "driver", p);
    d.pool = string(ds[i], "pool", p);
    d.device = string(ds[i], "device", p);
    d.share_id = string(ds[i], "shareID", p);
    const json& conds = array(ds[i], "conditions", p);
    for (size_t k = 0; k < conds.size(); ++k) {
      std::string cp = index(join(p, "conditions"), k);
      d.conditions[string(conds[k], "type", cp)] = string(conds[k], "status", cp);
    }
    const json& nd = object(ds[i], "networkData", p);
    d.interface_name = string(nd, "interfaceName", join(p, "networkData"));
    d.ips = strings(nd, "ips", join(p, "networkData"));
    d.hardware_address = string(nd, "hardwareAddress", join(p, "networkData"));
    c.devices.push_back(std::move(d));
  }
  return c;
}

}  // namespace c2c::k8s
