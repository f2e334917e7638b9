// The device inventory of ResourceSlices, read the way the scheduler reads pools (GatherPools):
// per (driver, pool) only the slices of the highest pool.generation count, and the pool is
// incomplete while fewer than resourceSliceCount of them are known.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "k8s/slice.hpp"

namespace c2c::k8s {

struct InventoryDevice {
  Device device;
  std::string slice;     // metadata.name of the slice that lists it
  std::string node_name; // the slice's or the device's nodeName ("" for selector/allNodes forms)
};

struct PoolState {
  std::string driver;
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
  std::vector<std::string> slices;  // names of the slices at `generation`
  std::map<std::string, InventoryDevice> devices;
  bool complete() const { return static_cast<int64_t>(slices.size()) == resource_slice_count; }
};

class Inventory {
 public:
  static Inventory build(const std::vector<ResourceSlice>& slices);
  const PoolState* pool(const std::string& driver, const std::string& pool) const;
  const InventoryDevice* device(const std::string& driver, const std::string& pool, const std::string& device) const;
  const std::map<std::pair<std::string, std::string>, PoolState>& pools() const { return pools_; }
  // Inconsistencies found while building (duplicate device names, mixed slice counts).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::map<std::pair<std::string, std::string>, PoolState> pools_;
  std::vector<std::string> warnings_;
};

// What a node needs from a device's attributes.
struct DeviceTopology {
  std::vector<int> numa_nodes;
  std::vector<std::string> pcie_roots;
  std::string pci_bus_id;
  std::optional<int64_t> cpu_id;  // dra.cpu/cpuID (dra-driver-cpu individual mode)
  std::vector<std::string> warnings;
};

inline constexpr const char* kAttrNumaNode = "resource.kubernetes.io/numaNode";
inline constexpr const char* kAttrPcieRoot = "resource.kubernetes.io/pcieRoot";
inline constexpr const char* kAttrPciBusId = "resource.kubernetes.io/pciBusID";
inline constexpr const char* kAttrCpuId = "dra.cpu/cpuID";

DeviceTopology topology_of(const std::string& driver, const Device& d);

}  // namespace c2c::k8s
