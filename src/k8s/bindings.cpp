// compute_bindings: allocation (claims) joined with inventory (slices) and consumers (pods).
#include "k8s/bindings.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace c2c::k8s {

std::string ClaimDeviceBinding::key() const {
  return claim_uid + "|" + pod_uid + "|" + driver + "|" + pool + "|" + device + "|" + share_id + "|" + request;
}

namespace {

std::optional<bool> requirement_admits(const NodeSelectorRequirement& r, const std::optional<std::string>& value) {
  auto in = [&] { return value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end(); };
  if (r.op == "In") return in();
  if (r.op == "NotIn") return !in();
  if (r.op == "Exists") return value.has_value();
  if (r.op == "DoesNotExist") return !value.has_value();
  if (r.op == "Gt" || r.op == "Lt") {
    if (!value || r.values.size() != 1) return false;
    try {
      long long v = std::stoll(*value), bound = std::stoll(r.values.front());
      return r.op == "Gt" ? v > bound : v < bound;
    } catch (const std::exception&) {
      return false;
    }
  }
  return std::nullopt;  // unknown operator
}

}  // namespace

std::optional<bool> selector_admits(const std::optional<NodeSelector>& sel, const std::string& node,
                                    const std::optional<std::map<std::string, std::string>>& labels) {
  if (!sel) return true;  // usable on every node
  bool unknown = false;
  for (const auto& term : sel->terms) {
    std::optional<bool> term_ok = true;
    for (const auto& f : term.match_fields) {
      auto ok = f.key == "metadata.name" ? requirement_admits(f, node) : std::nullopt;
      if (!ok) term_ok = std::nullopt;
      else if (!*ok) { term_ok = false; break; }
    }
    if (term_ok == false) continue;
    for (const auto& e : term.match_expressions) {
      if (!labels) { term_ok = std::nullopt; continue; }
      auto it = labels->find(e.key);
      auto ok = requirement_admits(e, it == labels->end() ? std::nullopt : std::optional<std::string>(it->second));
      if (!ok) term_ok = std::nullopt;
      else if (!*ok) { term_ok = false; break; }
    }
    if (term_ok == true) return true;
    if (!term_ok) unknown = true;
  }
  if (unknown) return std::nullopt;
  return false;
}

std::string allocation_node(const std::optional<NodeSelector>& sel) {
  if (!sel || sel->terms.size() != 1) return {};
  const auto& t = sel->terms.front();
  if (!t.match_expressions.empty() || t.match_fields.size() != 1) return {};
  const auto& f = t.match_fields.front();
  if (f.key != "metadata.name" || f.op != "In" || f.values.size() != 1) return {};
  return f.values.front();
}

std::optional<CpuSet> opaque_cpuset(const AllocationResult& alloc, const DeviceAllocationResult& result,
                                    std::string* error) {
  std::string main_request = result.request.substr(0, result.request.find('/'));
  std::optional<CpuSet> found;
  // Later entries win, as drivers apply configs in order (class configs come first).
  for (const auto& c : alloc.config) {
    if (c.driver != result.driver) continue;
    if (!c.requests.empty() &&
        std::find(c.requests.begin(), c.requests.end(), result.request) == c.requests.end() &&
        std::find(c.requests.begin(), c.requests.end(), main_request) == c.requests.end())
      continue;
    if (!c.parameters.is_object()) continue;
    auto cfg = c.parameters.find("cpuConfig");
    if (cfg == c.parameters.end() || !cfg->is_object()) continue;
    auto cs = cfg->find("cpuset");
    if (cs == cfg->end()) continue;
    if (!cs->is_string()) {
      if (error) *error = "opaque parameters.cpuConfig.cpuset is not a string";
      continue;
    }
    std::string err;
    auto parsed = CpuSet::parse(cs->get<std::string>(), &err);
    if (!parsed) {
      if (error) *error = "opaque parameters.cpuConfig.cpuset '" + cs->get<std::string>() + "': " + err;
      continue;
    }
    found = parsed;
  }
  return found;
}

namespace {

std::string claim_ref(const ResourceClaim& c) {
  return c.meta.namespace_.empty() ? c.meta.name : c.meta.namespace_ + "/" + c.meta.name;
}

// Topology and CPUs of one allocated device (pod-independent).
ClaimDeviceBinding device_binding(const ResourceClaim& c, const DeviceAllocationResult& r, const Inventory& inv,
                                  std::string& device_node) {
  ClaimDeviceBinding b;
  b.claim_uid = c.meta.uid;
  b.claim_namespace = c.meta.namespace_;
  b.claim_name = c.meta.name;
  b.claim_generation = c.meta.generation;
  b.request = r.request;
  b.driver = r.driver;
  b.pool = r.pool;
  b.device = r.device;
  b.share_id = r.share_id;
  b.admin_access = r.admin_access;
  b.binding_conditions = r.binding_conditions;
  std::string dev_name = r.driver + "/" + r.pool + "/" + r.device;
  const PoolState* pool = inv.pool(r.driver, r.pool);
  const InventoryDevice* dev = inv.device(r.driver, r.pool, r.device);
  std::optional<int64_t> cpu_id;
  if (!dev) {
    b.warnings.push_back("device " + dev_name + " is in no known ResourceSlice" +
                         (pool && !pool->complete() ? " (its pool is incomplete)" : "") + ": topology unknown");
  } else {
    if (!pool->complete())
      b.warnings.push_back("pool " + r.driver + "/" + r.pool + " is incomplete (" + std::to_string(pool->slices.size()) +
                           " of " + std::to_string(pool->resource_slice_count) + " slices at generation " +
                           std::to_string(pool->generation) + ")");
    DeviceTopology t = topology_of(r.driver, dev->device);
    b.numa_nodes = t.numa_nodes;
    b.pcie_roots = t.pcie_roots;
    b.pci_bus_id = t.pci_bus_id;
    cpu_id = t.cpu_id;
    for (auto& w : t.warnings) b.warnings.push_back("device " + dev_name + ": " + w);
    device_node = dev->node_name;
  }
  std::string err;
  std::optional<CpuSet> opaque = c.allocation ? opaque_cpuset(*c.allocation, r, &err) : std::nullopt;
  if (!err.empty()) b.warnings.push_back("device " + dev_name + ": " + err);
  if (cpu_id) {
    // dra-driver-cpu individual mode: one device is one CPU.
    if (*cpu_id >= static_cast<int64_t>(kMaxCpus)) {
      b.warnings.push_back("device " + dev_name + ": dra.cpu/cpuID " + std::to_string(*cpu_id) + " is beyond " +
                           std::to_string(kMaxCpus) + " CPUs");
    } else {
      b.cpus = CpuSet::of({static_cast<unsigned>(*cpu_id)});
      b.cpus_source = kAttrCpuId;
      if (opaque && !b.cpus->subset_of(*opaque))
        b.warnings.push_back("device " + dev_name + ": opaque cpuset " + opaque->to_string() + " does not contain cpuID " +
                             std::to_string(*cpu_id) + ": using cpuID");
    }
  } else if (opaque) {
    b.cpus = opaque;
    b.cpus_source = "opaque cpuConfig.cpuset";
  } else if (r.driver == "dra.cpu") {
    b.warnings.push_back("device " + dev_name +
                         ": CPUs unknown (grouped mode: the driver picks them at NodePrepareResources and passes "
                         "DRA_CPUSET_<claimUID> to the container; no cpuConfig.cpuset in the allocation)");
  }
  return b;
}

}  // namespace

BindingSet compute_bindings(const std::vector<ResourceClaim>& claims, const Inventory& inventory,
                            const std::vector<Pod>& pods, const BindingOptions& opt) {
  BindingSet out;
  out.warnings = inventory.warnings();
  std::unordered_map<std::string, const Pod*> pods_by_uid;
  for (const auto& p : pods)
    if (!p.meta.uid.empty()) pods_by_uid[p.meta.uid] = &p;
  std::map<std::pair<std::string, std::string>, const ResourceClaim*> claims_by_name;
  for (const auto& c : claims) claims_by_name[{c.meta.namespace_, c.meta.name}] = &c;

  for (const auto& c : claims) {
    std::string ref = "claim " + claim_ref(c);
    if (!c.allocation) continue;  // nothing allocated: nothing to bind
    const AllocationResult& alloc = *c.allocation;
    std::string alloc_node = allocation_node(alloc.node_selector);
    if (!opt.node.empty()) {
      auto admits = selector_admits(alloc.node_selector, opt.node, opt.node_labels);
      if (admits == false) {
        out.warnings.push_back(ref + ": allocation is for another node" +
                               (alloc_node.empty() ? std::string() : " (" + alloc_node + ")") + ", not " + opt.node);
        continue;
      }
      if (!admits)
        out.warnings.push_back(ref + ": allocation nodeSelector depends on node labels that are unknown: assumed to admit " +
                               opt.node);
    }
    std::vector<const ConsumerReference*> reserved;
    for (const auto& r : c.reserved_for) {
      if (r.is_pod()) reserved.push_back(&r);
      else out.warnings.push_back(ref + ": reserved for " + r.resource + " " + r.name + " (not a pod): ignored");
    }
    if (reserved.empty()) out.warnings.push_back(ref + ": allocated but reserved for no pod");

    for (const auto& r : alloc.results) {
      std::string device_node;
      ClaimDeviceBinding base = device_binding(c, r, inventory, device_node);
      std::string fallback_node = !alloc_node.empty() ? alloc_node : device_node;
      if (reserved.empty()) {
        ClaimDeviceBinding b = base;
        b.node_name = !opt.node.empty() ? opt.node : fallback_node;
        b.warnings.push_back("claim is reserved for no pod");
        out.bindings.push_back(std::move(b));
        continue;
      }
      for (const ConsumerReference* pr : reserved) {
        ClaimDeviceBinding b = base;
        b.pod_uid = pr->uid;
        b.pod_name = pr->name;
        auto it = pods_by_uid.find(pr->uid);
        if (it != pods_by_uid.end() && !it->second->node_name.empty()) {
          const Pod& pod = *it->second;
          if (!opt.node.empty() && pod.node_name != opt.node) continue;  // that consumer runs elsewhere
          b.node_name = pod.node_name;
          if (!alloc_node.empty() && alloc_node != pod.node_name)
            b.warnings.push_back("pod runs on " + pod.node_name + " but the allocation is for " + alloc_node);
        } else if (opt.pods_complete && !opt.node.empty()) {
          continue;  // not (yet) on this node: the pod's ADDED/MODIFIED event will bring it
        } else {
          b.node_name = !opt.node.empty() ? opt.node : fallback_node;
        }
        out.bindings.push_back(std::move(b));
      }
    }
  }

  // Pods that use claims the API would not let them start with.
  for (const auto& p : pods) {
    if (!opt.node.empty() && !p.node_name.empty() && p.node_name != opt.node) continue;
    if (p.meta.uid.empty()) continue;  // a manifest, not a created pod: nothing can be reserved for it
    std::string pref = "pod " + (p.meta.namespace_.empty() ? p.meta.name : p.meta.namespace_ + "/" + p.meta.name);
    for (const auto& rc : p.resource_claims) {
      auto name = p.claim_name_for(rc.name);
      if (!name) {
        out.warnings.push_back(pref + ": claim " + rc.name + " from template " + rc.resource_claim_template_name +
                               " has no generated ResourceClaim in status.resourceClaimStatuses");
        continue;
      }
      auto it = claims_by_name.find({p.meta.namespace_, *name});
      if (it == claims_by_name.end()) continue;  // not in this batch
      const ResourceClaim& c = *it->second;
      if (!c.allocation) {
        out.warnings.push_back(pref + ": claim " + claim_ref(c) + " is not allocated");
        continue;
      }
      bool ok = std::any_of(c.reserved_for.begin(), c.reserved_for.end(),
                            [&](const ConsumerReference& r) { return r.is_pod() && r.uid == p.meta.uid; });
      if (!ok)
        out.warnings.push_back(pref + ": claim " + claim_ref(c) + " is not reserved for this pod (it will not start)");
    }
  }
  std::sort(out.bindings.begin(), out.bindings.end(),
            [](const ClaimDeviceBinding& a, const ClaimDeviceBinding& b) { return a.key() < b.key(); });
  return out;
}

c2c::AllocatedDevice to_core_device(const ClaimDeviceBinding& b) {
  c2c::AllocatedDevice d;
  d.request = b.request;
  d.driver = b.driver;
  d.pool = b.pool;
  d.device = b.device;
  d.share_id = b.share_id;
  d.numa_nodes = b.numa_nodes;
  d.pcie_root = b.pcie_root();
  d.pci_bus_id = b.pci_bus_id;
  d.cpus = b.cpus;
  return d;
}

CoreEntities to_core(const BindingSet& set, const std::vector<ResourceClaim>& claims, const std::vector<Pod>& pods) {
  CoreEntities out;
  std::map<std::string, const ResourceClaim*> claims_by_uid;
  std::map<std::pair<std::string, std::string>, const ResourceClaim*> claims_by_name;
  for (const auto& c : claims) {
    claims_by_uid[c.meta.uid] = &c;
    claims_by_name[{c.meta.namespace_, c.meta.name}] = &c;
  }
  std::map<std::string, const Pod*> pods_by_uid;
  for (const auto& p : pods) pods_by_uid[p.meta.uid] = &p;

  std::map<std::string, c2c::Claim> core_claims;
  std::map<std::string, c2c::Pod> core_pods;
  std::set<std::string> seen_devices;
  for (const auto& b : set.bindings) {
    if (b.claim_uid.empty()) {
      out.warnings.push_back("claim " + b.claim_namespace + "/" + b.claim_name + " has no uid: not given to the core");
      continue;
    }
    c2c::Claim& cc = core_claims[b.claim_uid];
    if (cc.uid.empty()) {
      cc.uid = b.claim_uid;
      cc.generation = b.claim_generation;
      cc.node = b.node_name;
      if (auto it = claims_by_uid.find(b.claim_uid); it != claims_by_uid.end())
        for (const auto& r : it->second->reserved_for)
          if (r.is_pod()) cc.reserved_for.push_back(r.uid);
    }
    // A device is shared by all the claim's pods: list it once per claim.
    std::string dkey = b.claim_uid + "|" + b.driver + "|" + b.pool + "|" + b.device + "|" + b.share_id + "|" + b.request;
    if (seen_devices.insert(dkey).second) {
      if (b.pcie_roots.size() > 1)
        out.warnings.push_back("claim " + b.claim_uid + " device " + b.device + " has " +
                               std::to_string(b.pcie_roots.size()) + " PCIe roots: the core gets none");
      cc.devices.push_back(to_core_device(b));
    }
    if (b.pod_uid.empty() || core_pods.count(b.pod_uid)) continue;
    c2c::Pod cp;
    cp.uid = b.pod_uid;
    cp.name = b.pod_name;
    cp.namespace_ = b.claim_namespace;  // reservedFor pods share the claim's namespace
    if (auto it = pods_by_uid.find(b.pod_uid); it != pods_by_uid.end()) {
      const Pod& p = *it->second;
      cp.namespace_ = p.meta.namespace_;
      cp.name = p.meta.name;
      cp.labels = p.meta.labels;
      cp.task_roles = p.task_roles;
      for (const auto& rc : p.resource_claims) {
        auto name = p.claim_name_for(rc.name);
        if (!name) continue;
        auto c = claims_by_name.find({p.meta.namespace_, *name});
        if (c != claims_by_name.end() && !c->second->meta.uid.empty()) cp.claims[rc.name] = c->second->meta.uid;
        else out.warnings.push_back("pod " + p.meta.name + ": claim " + rc.name + " (" + *name + ") is unknown");
      }
    } else {
      out.warnings.push_back("pod " + b.pod_uid + " is not known: its labels and claim names are empty");
    }
    core_pods[b.pod_uid] = std::move(cp);
  }
  for (auto& [_, c] : core_claims) out.claims.push_back(std::move(c));
  for (auto& [_, p] : core_pods) out.pods.push_back(std::move(p));
  return out;
}

nlohmann::json to_json(const ClaimDeviceBinding& b) {
  nlohmann::json j = {
      {"claimUID", b.claim_uid},       {"claimNamespace", b.claim_namespace}, {"claimName", b.claim_name},
      {"claimGeneration", b.claim_generation}, {"podUID", b.pod_uid},       {"podName", b.pod_name},
      {"nodeName", b.node_name},       {"request", b.request},                {"driver", b.driver},
      {"pool", b.pool},                {"device", b.device},                  {"shareID", b.share_id},
      {"adminAccess", b.admin_access}, {"bindingConditions", b.binding_conditions},
      {"numaNodes", b.numa_nodes},     {"pcieRoot", b.pcie_root()},           {"pcieRoots", b.pcie_roots},
      {"pciBusID", b.pci_bus_id},      {"warnings", b.warnings}};
  j["cpus"] = b.cpus ? nlohmann::json(b.cpus->to_string()) : nlohmann::json(nullptr);
  j["cpusSource"] = b.cpus_source;
  return j;
}

std::string to_table(const std::vector<ClaimDeviceBinding>& bindings) {
  std::vector<std::vector<std::string>> rows = {
      {"CLAIM", "POD", "NODE", "REQUEST", "DEVICE", "SHARE", "NUMA", "PCIEROOT", "PCIBUSID", "CPUS"}};
  for (const auto& b : bindings) {
    std::string numa;
    for (int n : b.numa_nodes) numa += (numa.empty() ? "" : ",") + std::to_string(n);
    std::string roots;
    for (const auto& r : b.pcie_roots) roots += (roots.empty() ? "" : ",") + r;
    rows.push_back({b.claim_namespace + "/" + b.claim_name, b.pod_name.empty() ? "-" : b.pod_name,
                    b.node_name.empty() ? "-" : b.node_name, b.request, b.driver + "/" + b.pool + "/" + b.device,
                    b.share_id.empty() ? "-" : b.share_id, numa.empty() ? "-" : numa, roots.empty() ? "-" : roots,
                    b.pci_bus_id.empty() ? "-" : b.pci_bus_id,
                    b.cpus ? b.cpus->to_string() : b.driver == "dra.cpu" ? std::string("?") : std::string("-")});
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  std::string out;
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) {
      out += r[i];
      if (i + 1 < r.size()) out += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out += "\n";
  }
  return out;
}

}  // namespace c2c::k8s
