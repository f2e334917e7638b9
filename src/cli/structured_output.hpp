// Machine-readable output of the daemon's replies: JSON (api/proto_json.hpp, shared with
// claim2core-rest) and JSON to YAML.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "api/proto_json.hpp"

namespace c2c::cli {

enum class OutputFormat { Table, Json, Yaml };
OutputFormat output_format_from_string(const std::string& s);  // "table" | "json" | "yaml"

using api::proto_to_json;
// A YAML document (block style; strings that would read back as numbers, booleans or null are quoted).
std::string json_to_yaml(const nlohmann::json& j);

}  // namespace c2c::cli
