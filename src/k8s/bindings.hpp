// Claim-device bindings: one per (claim, pod, device) of a claim's status.allocation, enriched
// with inventory topology and, for CPU drivers, the CPUs where the driver says them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cpuset.hpp"
#include "core/model.hpp"
#include "k8s/claim.hpp"
#include "k8s/inventory.hpp"
#include "k8s/pod.hpp"

namespace c2c::k8s {

struct ClaimDeviceBinding {
  std::string claim_uid;
  std::string claim_namespace;
  std::string claim_name;
  int64_t claim_generation = 0;
  std::string pod_uid;   // empty when the claim is reserved for no pod
  std::string pod_name;
  std::string node_name; // the pod's node, else the allocation's, else the device slice's
  std::string request;   // "<request>" or "<request>/<subrequest>"
  std::string driver;
  std::string pool;
  std::string device;
  std::string share_id;
  bool admin_access = false;
  std::vector<std::string> binding_conditions;
  std::vector<int> numa_nodes;
  std::vector<std::string> pcie_roots;
  std::string pci_bus_id;
  std::optional<CpuSet> cpus;  // nullopt: unknown
  std::string cpus_source;     // "dra.cpu/cpuID" or "opaque cpuConfig.cpuset" when known
  std::vector<std::string> warnings;

  // The single PCIe root, or empty when the device has none or several.
  std::string pcie_root() const { return pcie_roots.size() == 1 ? pcie_roots.front() : std::string(); }
  std::string key() const;  // claim|pod|driver|pool|device|shareID|request
  bool operator==(const ClaimDeviceBinding&) const = default;
};

struct BindingOptions {
  std::string node;  // empty: every node
  // Node labels for claims whose nodeSelector uses label expressions (nullopt: unknown).
  std::optional<std::map<std::string, std::string>> node_labels;
  // The pods given are all the pods on `node` (the observer's field-selected list): a reserved
  // pod that is not among them runs elsewhere (or is not bound yet) and gets no binding here.
  bool pods_complete = false;
};

struct BindingSet {
  std::vector<ClaimDeviceBinding> bindings;  // sorted by key()
  std::vector<std::string> warnings;         // claim- and pod-level findings
};

// Pure: the same inputs give the same output (the observer diffs successive results).
BindingSet compute_bindings(const std::vector<ResourceClaim>& claims, const Inventory& inventory,
                            const std::vector<Pod>& pods, const BindingOptions& options);

// Does an allocation's nodeSelector admit `node`? nullopt when it depends on unknown labels.
std::optional<bool> selector_admits(const std::optional<NodeSelector>& sel, const std::string& node,
                                    const std::optional<std::map<std::string, std::string>>& labels);
// The node named by the allocation's node-local form (matchFields metadata.name In [<node>]).
std::string allocation_node(const std::optional<NodeSelector>& sel);

// The CPUs an opaque FromClaim/FromClass config gives a result (parameters.cpuConfig.cpuset).
std::optional<CpuSet> opaque_cpuset(const AllocationResult& alloc, const DeviceAllocationResult& result,
                                    std::string* error);

// Bindings to the core's entities. Pod cgroups are not known from the API: left empty for the
// host plane to fill.
struct CoreEntities {
  std::vector<c2c::Claim> claims;
  std::vector<c2c::Pod> pods;
  std::vector<std::string> warnings;
};
CoreEntities to_core(const BindingSet& set, const std::vector<ResourceClaim>& claims, const std::vector<Pod>& pods);
// The core's view of a binding's device: its single PCIe root, or none when it has several.
c2c::AllocatedDevice to_core_device(const ClaimDeviceBinding& b);

// Output forms.
nlohmann::json to_json(const ClaimDeviceBinding& b);
std::string to_table(const std::vector<ClaimDeviceBinding>& bindings);

}  // namespace c2c::k8s
