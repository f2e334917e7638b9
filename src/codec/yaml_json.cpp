// YAML to JSON: yaml-cpp parses, this file types the scalars (YAML 1.2 core schema) so that a
// document reads the same whether kubectl printed it as YAML or as JSON.
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "codec/yaml_json.hpp"

#include "codec/json_reader.hpp"

namespace c2c::codec {
namespace {

using nlohmann::json;

bool is_int(const std::string& s, int64_t& out) {
  std::string_view v = s;
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  if (v.empty()) return false;
  int base = 10;
  bool neg = false;
  std::string_view digits = v;
  if (digits.front() == '-') {
    neg = true;
    digits.remove_prefix(1);
  }
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'o')) {
    base = digits[1] == 'x' ? 16 : 8;
    digits.remove_prefix(2);
  }
  if (digits.empty()) return false;
  uint64_t mag = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), mag, base);
  if (ec != std::errc() || p != digits.data() + digits.size()) return false;
  if (neg) {
    if (mag > uint64_t{1} << 63) return false;
    out = mag == uint64_t{1} << 63 ? INT64_MIN : -static_cast<int64_t>(mag);
  } else {
    if (mag > static_cast<uint64_t>(INT64_MAX)) return false;
    out = static_cast<int64_t>(mag);
  }
  return true;
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool is_float(const std::string& s, double& out) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t before = digits();
  size_t after = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    after = digits();
  }
  if (before == 0 && after == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  if (i != s.size()) return false;
  try {
    out = std::stod(s);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

json scalar(const YAML::Node& n) {
  const std::string& v = n.Scalar();
  const std::string& tag = n.Tag();
  // "!" marks a quoted (non-plain) scalar; explicit !!str likewise stays a string.
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return v;
  if (v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL") return nullptr;
  if (v == "true" || v == "True" || v == "TRUE") return true;
  if (v == "false" || v == "False" || v == "FALSE") return false;
  int64_t i = 0;
  if (is_int(v, i)) return i;
  double d = 0;
  if (is_float(v, d)) return d;
  if (v == ".inf" || v == ".Inf" || v == "+.inf") return INFINITY;
  if (v == "-.inf" || v == "-.Inf") return -INFINITY;
  return v;
}

json convert(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar(n);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n) a.push_back(convert(item));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          throw std::runtime_error("line " + std::to_string(kv.first.Mark().line + 1) + ": non-scalar mapping key");
        // YAML forbids duplicate keys; yaml-cpp keeps both and the last would win silently.
        if (o.contains(kv.first.Scalar()))
          throw std::runtime_error("line " + std::to_string(kv.first.Mark().line + 1) + ": duplicate key '" +
                                   kv.first.Scalar() + "'");
        o[kv.first.Scalar()] = convert(kv.second);
      }
      return o;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<json> yaml_to_json(std::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    throw std::runtime_error("YAML syntax error at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  std::vector<json> out;
  out.reserve(docs.size());
  for (const auto& d : docs) out.push_back(convert(d));
  return out;
}

std::vector<json> parse_documents(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    try {
      return {parse_json_strict(text)};
    } catch (const DecodeError& e) {
      throw std::runtime_error(e.field + ": " + e.what());
    } catch (const json::exception&) {
      // Not strict JSON (e.g. YAML flow style with bare keys): fall through to YAML.
    }
  }
  return yaml_to_json(text);
}

}  // namespace c2c::codec
