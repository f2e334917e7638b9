// CPU, NUMA, cache and PCI topology from sysfs. Every reader takes the sysfs root as a parameter
// so that unit tests run against a fake tree.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cpuset.hpp"
#include "core/model.hpp"
#include "host/parse_error.hpp"

namespace c2c::host {

struct PciDevice {
  std::string bus_id;              // "0000:01:00.0"
  int numa_node = -1;              // -1: the kernel reports no locality
  std::string pcie_root;           // "pci0000:00", from the resolved sysfs path
  std::optional<CpuSet> local_cpus;  // local_cpulist, when present
  bool operator==(const PciDevice&) const = default;
};

struct Topology {
  CpuSet online;
  std::map<int, CpuSet> numa_cpus;           // NUMA node -> online CPUs
  std::vector<CpuSet> llc_groups;            // CPUs sharing the highest-level cache (empty if unknown)
  std::vector<CpuSet> smt_groups;            // hardware-thread siblings
  std::map<std::string, PciDevice> pci;      // by bus id
  std::map<std::string, CpuSet> pcie_root_cpus;  // root -> CPUs local to the devices under it
  bool operator==(const Topology&) const = default;
};

// `sysfs_root` is "/sys" on a real host. Missing optional parts (caches, PCI) leave those fields
// empty; a missing or malformed required file (cpu/online) is an error naming the file.
std::optional<Topology> read_topology(const std::filesystem::path& sysfs_root, ParseError* err = nullptr);

// The node description the core consumes.
c2c::NodeInfo to_node_info(const Topology& t, const std::string& node_name);

// Where a device sits: any of PCI bus id, PCIe root and NUMA nodes (most specific wins).
struct DeviceLocation {
  std::string pci_bus_id;
  std::string pcie_root;
  std::vector<int> numa_nodes;
};

// The online CPUs local to a device (ClaimDeviceBinding -> preferred CPUs). Order: the PCI
// device's local_cpulist (or its NUMA node), the PCIe root's CPUs, the union of the NUMA nodes'
// CPUs. nullopt with *err naming the field when nothing is known about the device.
std::optional<CpuSet> cpus_local_to(const Topology& t, const DeviceLocation& where, ParseError* err = nullptr);
// Same for an allocated device; CPUs a CPU driver allocated with the device come first.
std::optional<CpuSet> cpus_local_to(const Topology& t, const c2c::AllocatedDevice& dev, ParseError* err = nullptr);

}  // namespace c2c::host
