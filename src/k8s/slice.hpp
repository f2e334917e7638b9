// ResourceSlice: inventory only. It never says what is allocated; it gives topology to the
// devices that a claim's allocation names.
#pragma once

#include "k8s/objects.hpp"

namespace c2c::k8s {

// A device attribute: exactly one typed value, scalar or (1.36+) list.
struct DeviceAttribute {
  enum class Kind : uint8_t { Int, Bool, String, Version };
  Kind kind = Kind::String;
  bool list = false;
  std::vector<int64_t> ints;
  std::vector<bool> bools;
  std::vector<std::string> strings;  // String and Version
};

struct CounterConsumption {
  std::string counter_set;
  std::map<std::string, std::string> counters;  // name -> quantity
};

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;
};

enum class NodeSelection : uint8_t { NodeName, NodeSelector, AllNodes, PerDevice, None };
const char* to_string(NodeSelection s);

struct Device {
  std::string name;
  // Keys are fully qualified: an unqualified name is prefixed with "<driver>/".
  std::map<std::string, DeviceAttribute> attributes;
  std::map<std::string, std::string> capacity;  // qualified name -> quantity
  bool allow_multiple_allocations = false;
  std::vector<CounterConsumption> consumes_counters;
  std::vector<DeviceTaint> taints;
  // Per-device node selection (only under spec.perDeviceNodeSelection).
  NodeSelection selection = NodeSelection::None;
  std::string node_name;
  std::optional<NodeSelector> node_selector;

  const DeviceAttribute* attribute(const std::string& qualified) const {
    auto it = attributes.find(qualified);
    return it == attributes.end() ? nullptr : &it->second;
  }
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
};

struct CounterSet {
  std::string name;
  std::map<std::string, std::string> counters;
};

struct ResourceSlice {
  Origin origin;
  ObjectMeta meta;
  std::string driver;
  ResourcePool pool;
  NodeSelection selection = NodeSelection::None;
  std::string node_name;
  std::optional<NodeSelector> node_selector;
  std::vector<Device> devices;
  std::vector<CounterSet> shared_counters;
};

// "model" under driver "gpu.example.com" is "gpu.example.com/model"; qualified names stay.
std::string qualify(const std::string& driver, const std::string& name);

}  // namespace c2c::k8s
