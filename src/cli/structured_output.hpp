// Machine-readable output of the daemon's replies: JSON (each reply's `json`, made by the client
// library from the wire message: api/replies.hpp, shared with claim2core-rest) and JSON to YAML.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace c2c::cli {

enum class OutputFormat { Table, Json, Yaml };
OutputFormat output_format_from_string(const std::string& s);  // "table" | "json" | "yaml"

// A YAML document (block style; strings that would read back as numbers, booleans or null are quoted).
std::string json_to_yaml(const nlohmann::json& j);

}  // namespace c2c::cli
