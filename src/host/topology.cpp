#include "host/topology.hpp"

#include <algorithm>
#include <system_error>

#include "host/cgroup.hpp"
#include "host/proc_stat.hpp"

namespace c2c::host {

namespace fs = std::filesystem;

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// Reads a cpulist file. Missing file: nullopt and *missing = true; malformed: nullopt + error.
std::optional<CpuSet> read_cpulist(const fs::path& p, ParseError* err, bool* missing = nullptr) {
  const auto text = read_file(p);
  if (!text) {
    if (missing != nullptr) *missing = true;
    set_error(err, p.string(), "cannot be read");
    return std::nullopt;
  }
  std::string why;
  auto set = CpuSet::parse(trimmed(*text), &why);
  if (!set) set_error(err, p.string(), "not a CPU list: " + why);
  return set;
}

// Numeric suffix of names like "node3" / "cpu12" / "index2".
std::optional<unsigned> suffix_number(const std::string& name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const auto v = parse_u64(std::string_view(name).substr(prefix.size()));
  if (!v || *v > 1'000'000) return std::nullopt;
  return static_cast<unsigned>(*v);
}

void add_group(std::vector<CpuSet>& groups, const CpuSet& g) {
  if (g.empty()) return;
  if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
}

}  // namespace

std::optional<Topology> read_topology(const fs::path& sysfs_root, ParseError* err) {
  Topology t;
  const fs::path cpu_dir = sysfs_root / "devices/system/cpu";
  auto online = read_cpulist(cpu_dir / "online", err);
  if (!online) return std::nullopt;
  t.online = *online;

  // NUMA nodes. A kernel without CONFIG_NUMA has no node directory: everything is node 0.
  const fs::path node_dir = sysfs_root / "devices/system/node";
  std::error_code ec;
  if (fs::is_directory(node_dir, ec)) {
    for (const auto& e : fs::directory_iterator(node_dir, ec)) {
      const auto n = suffix_number(e.path().filename().string(), "node");
      if (!n) continue;
      auto cpus = read_cpulist(e.path() / "cpulist", err);
      if (!cpus) return std::nullopt;
      t.numa_cpus[static_cast<int>(*n)] = *cpus & t.online;
    }
  }
  if (t.numa_cpus.empty()) t.numa_cpus[0] = t.online;

  for (unsigned cpu : t.online.cpus()) {
    const fs::path c = cpu_dir / ("cpu" + std::to_string(cpu));
    // SMT siblings: core_cpus_list on newer kernels, thread_siblings_list on older ones.
    bool missing = false;
    ParseError ignored;
    auto smt = read_cpulist(c / "topology/core_cpus_list", &ignored, &missing);
    if (!smt && missing) {
      missing = false;
      smt = read_cpulist(c / "topology/thread_siblings_list", &ignored, &missing);
    }
    if (!smt && !missing) {
      if (err) *err = ignored;
      return std::nullopt;
    }
    if (smt) add_group(t.smt_groups, *smt & t.online);

    // LLC: the shared_cpu_list of the highest-level data or unified cache.
    int best_level = -1;
    std::optional<CpuSet> llc;
    const fs::path cache = c / "cache";
    if (fs::is_directory(cache, ec)) {
      for (const auto& e : fs::directory_iterator(cache, ec)) {
        if (!suffix_number(e.path().filename().string(), "index")) continue;
        const auto type = read_file(e.path() / "type");
        if (type && trimmed(*type) == "Instruction") continue;
        const auto level_text = read_file(e.path() / "level");
        const auto level = level_text ? parse_u64(trimmed(*level_text)) : std::nullopt;
        if (!level) {
          set_error(err, (e.path() / "level").string(), "missing or not an integer");
          return std::nullopt;
        }
        if (static_cast<int>(*level) <= best_level) continue;
        auto shared = read_cpulist(e.path() / "shared_cpu_list", err);
        if (!shared) return std::nullopt;
        best_level = static_cast<int>(*level);
        llc = *shared & t.online;
      }
    }
    if (llc) add_group(t.llc_groups, *llc);
  }
  std::sort(t.smt_groups.begin(), t.smt_groups.end());
  std::sort(t.llc_groups.begin(), t.llc_groups.end());

  // PCI devices: /sys/bus/pci/devices/<bdf> links to /sys/devices/pci<domain>:<bus>/.../<bdf>.
  const fs::path pci_dir = sysfs_root / "bus/pci/devices";
  if (fs::is_directory(pci_dir, ec)) {
    for (const auto& e : fs::directory_iterator(pci_dir, ec)) {
      PciDevice d;
      d.bus_id = e.path().filename().string();
      const fs::path real = fs::canonical(e.path(), ec);
      if (ec) {
        set_error(err, e.path().string(), "cannot be resolved: " + ec.message());
        return std::nullopt;
      }
      for (const auto& part : real) {
        const std::string s = part.string();
        if (s.rfind("pci", 0) == 0 && s.find(':') != std::string::npos) {
          d.pcie_root = s;
          break;
        }
      }
      if (const auto numa = read_file(real / "numa_node")) {
        const std::string v = trimmed(*numa);
        if (v == "-1") {
          d.numa_node = -1;
        } else if (const auto n = parse_u64(v); n && *n < 4096) {
          d.numa_node = static_cast<int>(*n);
        } else {
          set_error(err, (real / "numa_node").string(), "not a NUMA node number: '" + v + "'");
          return std::nullopt;
        }
      }
      bool missing = false;
      ParseError local_err;
      d.local_cpus = read_cpulist(real / "local_cpulist", &local_err, &missing);
      if (!d.local_cpus && !missing) {
        if (err) *err = local_err;
        return std::nullopt;
      }
      if (d.local_cpus) *d.local_cpus = *d.local_cpus & t.online;
      t.pci.emplace(d.bus_id, std::move(d));
    }
  }
  for (const auto& [id, d] : t.pci) {
    if (d.pcie_root.empty()) continue;
    ParseError ignored;
    const auto cpus = cpus_local_to(t, DeviceLocation{id, "", {}}, &ignored);
    if (!cpus) continue;
    auto& acc = t.pcie_root_cpus[d.pcie_root];
    acc = acc | *cpus;
  }
  return t;
}

c2c::NodeInfo to_node_info(const Topology& t, const std::string& node_name) {
  c2c::NodeInfo n;
  n.name = node_name;
  n.cpus = t.online;
  n.numa_cpus = t.numa_cpus;
  n.pcie_root_cpus = t.pcie_root_cpus;
  return n;
}

std::optional<CpuSet> cpus_local_to(const Topology& t, const DeviceLocation& where, ParseError* err) {
  if (!where.pci_bus_id.empty()) {
    const auto it = t.pci.find(where.pci_bus_id);
    if (it == t.pci.end()) {
      set_error(err, "pciBusID", "no PCI device '" + where.pci_bus_id + "' on this node");
      return std::nullopt;
    }
    const PciDevice& d = it->second;
    if (d.local_cpus && !d.local_cpus->empty()) return d.local_cpus;
    if (d.numa_node >= 0) {
      const auto n = t.numa_cpus.find(d.numa_node);
      if (n != t.numa_cpus.end()) return n->second;
    }
    return t.online;  // the kernel reports no locality: every CPU is as close as any other
  }
  if (!where.pcie_root.empty()) {
    const auto it = t.pcie_root_cpus.find(where.pcie_root);
    if (it == t.pcie_root_cpus.end()) {
      set_error(err, "pcieRoot", "no PCIe root '" + where.pcie_root + "' on this node");
      return std::nullopt;
    }
    return it->second;
  }
  if (!where.numa_nodes.empty()) {
    CpuSet acc;
    for (int n : where.numa_nodes) {
      const auto it = t.numa_cpus.find(n);
      if (it == t.numa_cpus.end()) {
        set_error(err, "numaNode", "no NUMA node " + std::to_string(n) + " on this node");
        return std::nullopt;
      }
      acc = acc | it->second;
    }
    return acc;
  }
  set_error(err, "device", "has no pciBusID, pcieRoot or NUMA node");
  return std::nullopt;
}

std::optional<CpuSet> cpus_local_to(const Topology& t, const c2c::AllocatedDevice& dev, ParseError* err) {
  if (dev.cpus && !dev.cpus->empty()) return *dev.cpus & t.online;
  return cpus_local_to(t, DeviceLocation{dev.pci_bus_id, dev.pcie_root, dev.numa_nodes}, err);
}

}  // namespace c2c::host
