// Decoded Kubernetes objects, resource.k8s.io/v1 semantics (older versions are converted on decode,
// see api_version.hpp). Only what a node needs is kept; unknown fields are ignored, and every field
// that the API marks optional is optional here too (empty string / nullopt / empty vector).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace c2c::k8s {

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::map<std::string, std::string> labels;
  bool deleting = false;  // metadata.deletionTimestamp is set
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;  // on node labels
  std::vector<NodeSelectorRequirement> match_fields;       // on node fields (metadata.name)
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;  // ORed
};

// Where an object came from, for error messages: "<file>#<document>[items index]" or a watch.
struct Origin {
  std::string source;
  std::string api_version;  // as written in the object, before conversion
};

}  // namespace c2c::k8s
