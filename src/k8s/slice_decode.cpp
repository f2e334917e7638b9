// ResourceSlice decoding (the inventory side). v1beta1 wraps device fields in `basic` and writes
// nodeName/allNodes as plain values ("" / false meaning unset); both are converted here.
#include "k8s/api_version.hpp"
#include "k8s/decode.hpp"
#include "k8s/json_fields.hpp"

namespace c2c::k8s {

using nlohmann::json;
using namespace fields;

const char* to_string(NodeSelection s) {
  switch (s) {
    case NodeSelection::NodeName: return "nodeName";
    case NodeSelection::NodeSelector: return "nodeSelector";
    case NodeSelection::AllNodes: return "allNodes";
    case NodeSelection::PerDevice: return "perDeviceNodeSelection";
    case NodeSelection::None: return "none";
  }
  return "?";
}

std::string qualify(const std::string& driver, const std::string& name) {
  return name.find('/') == std::string::npos ? driver + "/" + name : name;
}

namespace {

DeviceAttribute attribute(const json& j, const std::string& path) {
  if (!j.is_object()) throw FieldError(path, "must be an object with one of int, bool, string, version");
  std::vector<DeviceAttribute> found;
  auto scalar = [&](const char* key, DeviceAttribute::Kind kind) {
    const json* v = find(j, key);
    if (!v) return;
    DeviceAttribute a;
    a.kind = kind;
    std::string p = join(path, key);
    if (kind == DeviceAttribute::Kind::Int) {
      if (!v->is_number_integer()) throw FieldError(p, "must be an integer");
      a.ints.push_back(v->get<int64_t>());
    } else if (kind == DeviceAttribute::Kind::Bool) {
      if (!v->is_boolean()) throw FieldError(p, "must be a boolean");
      a.bools.push_back(v->get<bool>());
    } else {
      if (!v->is_string()) throw FieldError(p, "must be a string");
      a.strings.push_back(v->get<std::string>());
    }
    found.push_back(std::move(a));
  };
  // List attributes (DRAListTypeAttributes, 1.36+).
  auto list = [&](const char* key, DeviceAttribute::Kind kind) {
    const json* v = find(j, key);
    if (!v) return;
    std::string p = join(path, key);
    if (!v->is_array()) throw FieldError(p, "must be a list");
    DeviceAttribute a;
    a.kind = kind;
    a.list = true;
    for (size_t i = 0; i < v->size(); ++i) {
      const json& e = (*v)[i];
      if (kind == DeviceAttribute::Kind::Int && e.is_number_integer()) a.ints.push_back(e.get<int64_t>());
      else if (kind == DeviceAttribute::Kind::Bool && e.is_boolean()) a.bools.push_back(e.get<bool>());
      else if ((kind == DeviceAttribute::Kind::String || kind == DeviceAttribute::Kind::Version) && e.is_string())
        a.strings.push_back(e.get<std::string>());
      else throw FieldError(index(p, i), "has the wrong type");
    }
    found.push_back(std::move(a));
  };
  scalar("int", DeviceAttribute::Kind::Int);
  scalar("bool", DeviceAttribute::Kind::Bool);
  scalar("string", DeviceAttribute::Kind::String);
  scalar("version", DeviceAttribute::Kind::Version);
  list("ints", DeviceAttribute::Kind::Int);
  list("bools", DeviceAttribute::Kind::Bool);
  list("strings", DeviceAttribute::Kind::String);
  list("versions", DeviceAttribute::Kind::Version);
  if (found.size() != 1)
    throw FieldError(path, "exactly one of int, bool, string, version (or a list form) must be set, " +
                               std::to_string(found.size()) + " are");
  return std::move(found.front());
}

std::map<std::string, std::string> counters(const json& parent, const char* key, const std::string& path) {
  std::map<std::string, std::string> out;
  const json& m = object(parent, key, path);
  for (auto it = m.begin(); it != m.end(); ++it) {
    std::string p = join(join(path, key), it.key());
    const json* v = find(*it, "value");
    if (!v || !v->is_string()) throw FieldError(join(p, "value"), "must be a quantity string");
    out[it.key()] = v->get<std::string>();
  }
  return out;
}

// The node-selection fields of a slice spec or of a device; returns which are set.
struct Selection {
  std::vector<NodeSelection> set;
  std::string node_name;
  std::optional<NodeSelector> node_selector;
};

Selection selection(const json& j, const std::string& path, ResourceApi api, bool slice_level) {
  Selection s;
  if (const json* nn = find(j, "nodeName")) {
    if (!nn->is_string()) throw FieldError(join(path, "nodeName"), "must be a string");
    s.node_name = nn->get<std::string>();
    if (!s.node_name.empty()) s.set.push_back(NodeSelection::NodeName);
    else if (api != ResourceApi::V1beta1) throw FieldError(join(path, "nodeName"), "must be unset or non-empty");
  }
  if (const json* sel = find(j, "nodeSelector")) {
    s.node_selector = node_selector(*sel, join(path, "nodeSelector"));
    if (slice_level && s.node_selector->terms.size() != 1)
      throw FieldError(join(path, "nodeSelector.nodeSelectorTerms"), "must have exactly one term");
    s.set.push_back(NodeSelection::NodeSelector);
  }
  auto flag = [&](const char* key, NodeSelection which) {
    if (auto b = opt_bool(j, key, path)) {
      if (*b) s.set.push_back(which);
      else if (api != ResourceApi::V1beta1) throw FieldError(join(path, key), "must be unset or true");
    }
  };
  flag("allNodes", NodeSelection::AllNodes);
  if (slice_level) flag("perDeviceNodeSelection", NodeSelection::PerDevice);
  return s;
}

std::string names(const std::vector<NodeSelection>& v) {
  std::string out;
  for (auto s : v) out += (out.empty() ? "" : ", ") + std::string(to_string(s));
  return out.empty() ? "none" : out;
}

Device device(const json& j, const std::string& path, const std::string& driver, ResourceApi api, bool per_device) {
  Device d;
  d.name = string(j, "name", path);
  if (d.name.empty()) throw FieldError(join(path, "name"), "is required");
  const json* body = &j;
  std::string bpath = path;
  if (api == ResourceApi::V1beta1) {
    body = &object(j, "basic", path);
    bpath = join(path, "basic");
  }
  const json& attrs = object(*body, "attributes", bpath);
  for (auto it = attrs.begin(); it != attrs.end(); ++it)
    d.attributes[qualify(driver, it.key())] = attribute(*it, join(join(bpath, "attributes"), it.key()));
  const json& cap = object(*body, "capacity", bpath);
  for (auto it = cap.begin(); it != cap.end(); ++it) {
    std::string p = join(join(bpath, "capacity"), it.key());
    const json* v = find(*it, "value");
    if (!v || !v->is_string()) throw FieldError(join(p, "value"), "must be a quantity string");
    d.capacity[qualify(driver, it.key())] = v->get<std::string>();
  }
  d.allow_multiple_allocations = boolean(*body, "allowMultipleAllocations", bpath);
  const json& cc = array(*body, "consumesCounters", bpath);
  for (size_t i = 0; i < cc.size(); ++i) {
    std::string p = index(join(bpath, "consumesCounters"), i);
    d.consumes_counters.push_back({string(cc[i], "counterSet", p), counters(cc[i], "counters", p)});
  }
  const json& taints = array(*body, "taints", bpath);
  for (size_t i = 0; i < taints.size(); ++i) {
    std::string p = index(join(bpath, "taints"), i);
    d.taints.push_back({string(taints[i], "key", p), string(taints[i], "value", p), string(taints[i], "effect", p)});
  }
  Selection s = selection(*body, bpath, api, false);
  if (per_device && s.set.size() != 1)
    throw FieldError(bpath, "under perDeviceNodeSelection exactly one of nodeName, nodeSelector, allNodes must be set, got " +
                                names(s.set));
  if (!per_device && !s.set.empty())
    throw FieldError(bpath, "per-device " + names(s.set) + " is only allowed with spec.perDeviceNodeSelection");
  if (per_device) {
    d.selection = s.set.front();
    d.node_name = s.node_name;
    d.node_selector = s.node_selector;
  }
  return d;
}

}  // namespace

ResourceSlice decode_resource_slice(const json& obj) {
  ResourceSlice s;
  s.origin.api_version = string(obj, "apiVersion", "");
  ResourceApi api = classify_resource_api(s.origin.api_version).api;
  s.meta = meta(obj);
  const json& spec = object(obj, "spec", "");
  s.driver = string(spec, "driver", "spec");
  if (s.driver.empty()) throw FieldError("spec.driver", "is required");
  const json& pool = object(spec, "pool", "spec");
  s.pool.name = string(pool, "name", "spec.pool");
  if (s.pool.name.empty()) throw FieldError("spec.pool.name", "is required");
  s.pool.generation = integer(pool, "generation", "spec.pool");
  s.pool.resource_slice_count = integer(pool, "resourceSliceCount", "spec.pool");
  if (s.pool.resource_slice_count < 1) throw FieldError("spec.pool.resourceSliceCount", "must be at least 1");

  Selection sel = selection(spec, "spec", api, true);
  if (sel.set.size() != 1)
    throw FieldError("spec", "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection must be set, got " +
                                 names(sel.set));
  s.selection = sel.set.front();
  s.node_name = sel.node_name;
  s.node_selector = sel.node_selector;

  const json& devs = array(spec, "devices", "spec");
  for (size_t i = 0; i < devs.size(); ++i)
    s.devices.push_back(device(devs[i], index("spec.devices", i), s.driver, api, s.selection == NodeSelection::PerDevice));
  const json& sc = array(spec, "sharedCounters", "spec");
  for (size_t i = 0; i < sc.size(); ++i) {
    std::string p = index("spec.sharedCounters", i);
    s.shared_counters.push_back({string(sc[i], "name", p), counters(sc[i], "counters", p)});
  }
  return s;
}

}  // namespace c2c::k8s
