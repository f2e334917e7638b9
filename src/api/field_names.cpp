#include "api/field_names.hpp"

#include <cctype>
#include <utility>

#include "api/convert.hpp"

namespace c2c::api {
namespace {

std::string snake(const std::string& camel) {
  std::string out;
  for (char c : camel) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

// The manifest's names (the core's validation) -> the proto's, segment by segment: the prefixes the
// proto flattens (metadata, spec, spec.workloadSelector, spec.safety) dropped, a role's selector
// flattened into its role, nodeSelectors.matchExpressions as node_selector_expressions, names in
// snake_case (map keys and indices kept as they are).
FieldPath proto_path_of(const FieldPath& manifest) {
  FieldPath p = manifest;
  if (p.size() > 2 && (p.starts_with({"spec", "workloadSelector"}) || p.starts_with({"spec", "safety"})))
    p = p.drop_front(2);
  else if (p.size() > 1 && (p.starts_with({"metadata"}) || p.starts_with({"spec"})))
    p = p.drop_front(1);
  auto& seg = p.segments();
  for (size_t i = 1; i + 1 < seg.size(); ++i)  // taskRoles[i].selector.commandRegex: flat in the proto
    if (seg[i].name == "selector" && !seg[i].index && !seg[i].key &&
        (seg[i + 1].name == "commandRegex" || seg[i + 1].name == "registeredRole" || seg[i + 1].name == "processRegex"))
      seg.erase(seg.begin() + static_cast<std::ptrdiff_t>(i));
  if (seg.size() > 1 && seg.back().name == "selector") seg.back().name = "commandRegex";  // a role's selector as a whole
  if (seg.size() == 1 && seg[0].name == "executionTime" && !seg[0].index && !seg[0].key) seg[0].name = "executionTimeNs";
  if (seg.size() > 1 && seg[0].name == "nodeSelectors" && !seg[0].index && !seg[0].key && seg[1].name == "matchExpressions") {
    seg[1].name = "nodeSelectorExpressions";
    seg.erase(seg.begin());
  }
  for (auto& x : seg) x.name = snake(x.name);
  return p;
}

std::string proto_field_of(const std::string& f) { return proto_path_of(FieldPath::parse(f)).str(); }

FieldPath binding_path_of(const FieldPath& core) {
  FieldPath p = core;
  while (p.size() > 1 && p.starts_with({"claim"}) && !p.segments()[0].index && !p.segments()[0].key) p = p.drop_front(1);
  if (p.size() > 1 && p.starts_with({"devices"}) && p.segments()[0].index) p = p.drop_front(1);  // a binding is one device
  // The core's device names as ClaimDeviceBinding's fields (the rest are spelt alike).
  static const std::pair<const char*, const char*> kNames[] = {{"generation", "claim_generation"}, {"uid", "claim_uid"},
                                                               {"node", "node_name"},           {"numaNodes", "numa_nodes"},
                                                               {"shareID", "share_id"},         {"pcieRoot", "pcie_root"},
                                                               {"pciBusID", "pci_bus_id"}};
  if (p.size() == 1)
    for (const auto& [from, to] : kNames)
      if (p.segments()[0].name == from) p.segments()[0].name = to;
  return p;
}

std::string binding_field_of(std::string f) { return binding_path_of(FieldPath::parse(f)).str(); }

FieldPath pod_path_of(const FieldPath& core) {
  FieldPath p = core;
  if (p.size() > 1 && p.starts_with({"pod"})) p = p.drop_front(1);
  if (!p.empty()) {
    auto& name = p.segments()[0].name;
    if (name == "taskRoles") name = "task_roles";
    else if (name == "cpuset") name = "cpus";
  }
  return p;
}

std::string pod_field_of(const std::string& core_field) { return pod_path_of(FieldPath::parse(core_field)).str(); }

}  // namespace c2c::api
