// YAML and JSON text to JSON values: the one path every YAML input takes (policy manifests,
// kubectl output, kubeconfigs, the daemon's config), so that a document reads the same whether it
// was written as YAML or as JSON. Untrusted text goes through codec/bounded_yaml.hpp, which runs
// these in a bounded child process.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>
#include <vector>

namespace c2c::codec {

// YAML (one or many documents) to JSON values, with YAML 1.2 core-schema typing of plain scalars
// (quoted scalars stay strings: `value: "0"` is a quantity string, `count: 4` an integer).
// Throws std::runtime_error with the line on a YAML syntax error or a duplicate key.
std::vector<nlohmann::json> yaml_to_json(std::string_view text);

// Text to JSON documents: JSON when it parses as JSON (duplicate keys refused), else YAML.
std::vector<nlohmann::json> parse_documents(std::string_view text);

}  // namespace c2c::codec
