// Machine-readable output of the daemon's replies: protobuf messages to JSON (lowerCamelCase
// names as in the proto's JSON mapping, but 64-bit integers stay numbers and every field is
// printed, so `jq .schedulerEnforcing` sees `false` rather than nothing), and JSON to YAML.
#pragma once

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include <string>

namespace c2c::cli {

enum class OutputFormat { Table, Json, Yaml };
OutputFormat output_format_from_string(const std::string& s);  // "table" | "json" | "yaml"

nlohmann::json proto_to_json(const google::protobuf::Message& m);
// A YAML document (block style; strings that would read back as numbers, booleans or null are quoted).
std::string json_to_yaml(const nlohmann::json& j);

}  // namespace c2c::cli
