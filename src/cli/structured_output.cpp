#include "cli/structured_output.hpp"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace c2c::cli {

using nlohmann::json;

OutputFormat output_format_from_string(const std::string& s) {
  if (s == "table") return OutputFormat::Table;
  if (s == "json") return OutputFormat::Json;
  if (s == "yaml") return OutputFormat::Yaml;
  throw std::invalid_argument("output format must be table, json or yaml, got '" + s + "'");
}

namespace {

bool looks_typed(const std::string& s) {
  if (s.empty()) return true;
  static const char* const kWords[] = {"true", "True", "TRUE", "false", "False", "FALSE", "null",
                                       "Null", "NULL", "~",    "yes",  "no",   "on",    "off"};
  for (const char* w : kWords)
    if (s == w) return true;
  char c = s.front();
  return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

void emit(YAML::Emitter& out, const json& j) {
  switch (j.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, v] : j.items()) {
        out << YAML::Key;
        if (looks_typed(k)) out << YAML::DoubleQuoted;
        out << k << YAML::Value;
        emit(out, v);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      if (j.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& v : j) emit(out, v);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      if (looks_typed(s)) out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case json::value_t::boolean: out << (j.get<bool>() ? "true" : "false"); break;
    case json::value_t::number_integer: out << j.get<int64_t>(); break;
    case json::value_t::number_unsigned: out << j.get<uint64_t>(); break;
    case json::value_t::number_float: out << j.get<double>(); break;
    case json::value_t::null:
    case json::value_t::discarded:
    case json::value_t::binary: out << YAML::Null; break;
  }
}

}  // namespace

std::string json_to_yaml(const json& j) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, j);
  std::string s = out.c_str();
  if (s.empty() || s.back() != '\n') s += '\n';
  return s;
}

}  // namespace c2c::cli
