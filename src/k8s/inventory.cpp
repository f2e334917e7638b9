#include "k8s/inventory.hpp"

#include <algorithm>

namespace c2c::k8s {

Inventory Inventory::build(const std::vector<ResourceSlice>& slices) {
  Inventory inv;
  // Highest generation per pool first: older slices are being replaced and do not count.
  std::map<std::pair<std::string, std::string>, int64_t> top;
  for (const auto& s : slices) {
    auto key = std::make_pair(s.driver, s.pool.name);
    auto it = top.find(key);
    if (it == top.end() || s.pool.generation > it->second) top[key] = s.pool.generation;
  }
  for (const auto& s : slices) {
    auto key = std::make_pair(s.driver, s.pool.name);
    if (s.pool.generation != top[key]) continue;
    PoolState& p = inv.pools_[key];
    if (p.slices.empty()) {
      p.driver = s.driver;
      p.name = s.pool.name;
      p.generation = s.pool.generation;
      p.resource_slice_count = s.pool.resource_slice_count;
    } else if (p.resource_slice_count != s.pool.resource_slice_count) {
      inv.warnings_.push_back("pool " + s.driver + "/" + s.pool.name + ": slices disagree on resourceSliceCount (" +
                              std::to_string(p.resource_slice_count) + " vs " +
                              std::to_string(s.pool.resource_slice_count) + ")");
      p.resource_slice_count = std::max(p.resource_slice_count, s.pool.resource_slice_count);
    }
    p.slices.push_back(s.meta.name);
    for (const auto& d : s.devices) {
      std::string node = s.selection == NodeSelection::NodeName ? s.node_name : d.node_name;
      auto [it, inserted] = p.devices.try_emplace(d.name, InventoryDevice{d, s.meta.name, node});
      if (!inserted)
        inv.warnings_.push_back("pool " + s.driver + "/" + s.pool.name + ": device " + d.name + " is listed by slices " +
                                it->second.slice + " and " + s.meta.name);
    }
  }
  return inv;
}

const PoolState* Inventory::pool(const std::string& driver, const std::string& pool) const {
  auto it = pools_.find({driver, pool});
  return it == pools_.end() ? nullptr : &it->second;
}

const InventoryDevice* Inventory::device(const std::string& driver, const std::string& pool,
                                         const std::string& device) const {
  const PoolState* p = this->pool(driver, pool);
  if (!p) return nullptr;
  auto it = p->devices.find(device);
  return it == p->devices.end() ? nullptr : &it->second;
}

namespace {

std::vector<int> numa_values(const DeviceAttribute& a, const std::string& name, std::vector<std::string>& warnings) {
  std::vector<int> out;
  if (a.kind != DeviceAttribute::Kind::Int) {
    warnings.push_back("attribute " + name + " is not an integer: ignored");
    return out;
  }
  for (int64_t v : a.ints) {
    if (v < 0 || v > 1024) {
      warnings.push_back("attribute " + name + " = " + std::to_string(v) + " is not a NUMA node: ignored");
      continue;
    }
    out.push_back(static_cast<int>(v));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

DeviceTopology topology_of(const std::string& driver, const Device& d) {
  DeviceTopology t;
  // The standard name (KEP-6072) wins; drivers' own names are read when it is absent:
  // NVIDIA "numa", dra-example-driver "numaNodeID", others "numaNode".
  std::optional<std::vector<int>> driver_numa;
  std::string driver_name;
  for (const char* local : {"numa", "numaNode", "numaNodeID"}) {
    std::string q = driver + "/" + local;
    if (const DeviceAttribute* a = d.attribute(q)) {
      driver_numa = numa_values(*a, q, t.warnings);
      driver_name = q;
      break;
    }
  }
  if (const DeviceAttribute* a = d.attribute(kAttrNumaNode)) {
    t.numa_nodes = numa_values(*a, kAttrNumaNode, t.warnings);
    if (driver_numa && *driver_numa != t.numa_nodes)
      t.warnings.push_back(driver_name + " disagrees with " + kAttrNumaNode + ": using the latter");
  } else if (driver_numa) {
    t.numa_nodes = *driver_numa;
  }
  if (const DeviceAttribute* a = d.attribute(kAttrPcieRoot)) {
    if (a->kind == DeviceAttribute::Kind::String) t.pcie_roots = a->strings;
    else t.warnings.push_back(std::string(kAttrPcieRoot) + " is not a string: ignored");
  }
  if (const DeviceAttribute* a = d.attribute(kAttrPciBusId)) {
    if (a->kind == DeviceAttribute::Kind::String && a->strings.size() == 1) t.pci_bus_id = a->strings.front();
    else t.warnings.push_back(std::string(kAttrPciBusId) + " is not a single string: ignored");
  }
  if (const DeviceAttribute* a = d.attribute(kAttrCpuId)) {
    if (a->kind == DeviceAttribute::Kind::Int && a->ints.size() == 1 && a->ints.front() >= 0) t.cpu_id = a->ints.front();
    else t.warnings.push_back(std::string(kAttrCpuId) + " is not a single non-negative integer: ignored");
  }
  return t;
}

}  // namespace c2c::k8s
