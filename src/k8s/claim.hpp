// ResourceClaim: the allocation side (status.allocation is the truth, not the slices).
#pragma once

#include "k8s/objects.hpp"

namespace c2c::k8s {

// exactly{} or one entry of firstAvailable[] (the latter has a name).
struct DeviceSubRequest {
  std::string name;               // firstAvailable only
  std::string device_class_name;  // a class name, not a driver name
  std::string allocation_mode;    // ExactCount (default) or All
  int64_t count = 1;
  bool admin_access = false;
  std::vector<std::string> selectors;  // CEL expressions
  std::map<std::string, std::string> capacity_requests;  // quantity strings
};

struct DeviceRequest {
  std::string name;
  std::optional<DeviceSubRequest> exactly;
  std::vector<DeviceSubRequest> first_available;
};

struct DeviceConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;
  std::string distinct_attribute;
};

struct OpaqueDeviceConfig {
  std::string source;                 // allocation only: FromClass or FromClaim
  std::vector<std::string> requests;  // empty: applies to all requests
  std::string driver;
  nlohmann::json parameters;          // opaque, driver-defined
};

struct DeviceAllocationResult {
  std::string request;  // "<request>" or "<request>/<subrequest>" for firstAvailable
  std::string driver;
  std::string pool;
  std::string device;
  std::string share_id;  // set for shares of an allowMultipleAllocations device
  bool admin_access = false;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  std::map<std::string, std::string> consumed_capacity;
};

struct AllocationResult {
  std::vector<DeviceAllocationResult> results;
  std::vector<OpaqueDeviceConfig> config;
  std::optional<NodeSelector> node_selector;  // nullopt: usable on every node
  std::string allocation_timestamp;
};

struct ConsumerReference {
  std::string api_group;
  std::string resource;
  std::string name;
  std::string uid;
  bool is_pod() const { return api_group.empty() && resource == "pods"; }
};

struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::string share_id;
  std::map<std::string, std::string> conditions;  // type -> status
  std::string interface_name;
  std::vector<std::string> ips;
  std::string hardware_address;
};

struct ResourceClaim {
  Origin origin;
  ObjectMeta meta;
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<OpaqueDeviceConfig> config;
  std::optional<AllocationResult> allocation;
  std::vector<ConsumerReference> reserved_for;
  std::vector<AllocatedDeviceStatus> devices;  // status.devices
};

}  // namespace c2c::k8s
