// Typed access to optional JSON fields with the field path in every error (internal).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k8s/decode.hpp"
#include "k8s/objects.hpp"

namespace c2c::k8s::fields {

using nlohmann::json;

inline std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
inline std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// The member or nullptr when missing or null (absent and null mean the same in the API).
inline const json* find(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

inline const json& object(const json& obj, const char* key, const std::string& path) {
  static const json empty = json::object();
  const json* v = find(obj, key);
  if (!v) return empty;
  if (!v->is_object()) throw FieldError(join(path, key), "must be an object, got " + std::string(v->type_name()));
  return *v;
}

inline const json& array(const json& obj, const char* key, const std::string& path) {
  static const json empty = json::array();
  const json* v = find(obj, key);
  if (!v) return empty;
  if (!v->is_array()) throw FieldError(join(path, key), "must be a list, got " + std::string(v->type_name()));
  return *v;
}

inline std::string string(const json& obj, const char* key, const std::string& path) {
  const json* v = find(obj, key);
  if (!v) return {};
  if (!v->is_string()) throw FieldError(join(path, key), "must be a string, got " + std::string(v->type_name()));
  return v->get<std::string>();
}

inline std::optional<bool> opt_bool(const json& obj, const char* key, const std::string& path) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) throw FieldError(join(path, key), "must be a boolean, got " + std::string(v->type_name()));
  return v->get<bool>();
}

inline bool boolean(const json& obj, const char* key, const std::string& path) {
  return opt_bool(obj, key, path).value_or(false);
}

inline std::optional<int64_t> opt_int(const json& obj, const char* key, const std::string& path) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) throw FieldError(join(path, key), "must be an integer, got " + std::string(v->type_name()));
  return v->get<int64_t>();
}

inline int64_t integer(const json& obj, const char* key, const std::string& path, int64_t def = 0) {
  return opt_int(obj, key, path).value_or(def);
}

inline std::vector<std::string> strings(const json& obj, const char* key, const std::string& path) {
  std::vector<std::string> out;
  const json& a = array(obj, key, path);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) throw FieldError(index(join(path, key), i), "must be a string");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

// A map of strings; quantities may be written as plain numbers in YAML (`compute: 20`), which
// the API server would have stored as the string "20": accept integers and keep their text.
inline std::map<std::string, std::string> string_map(const json& obj, const char* key, const std::string& path,
                                                     bool numbers_as_text = false) {
  std::map<std::string, std::string> out;
  const json& m = object(obj, key, path);
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (it->is_string()) {
      out[it.key()] = it->get<std::string>();
    } else if (numbers_as_text && it->is_number()) {
      out[it.key()] = it->dump();
    } else {
      throw FieldError(join(join(path, key), it.key()), "must be a string");
    }
  }
  return out;
}

ObjectMeta meta(const json& obj);
NodeSelector node_selector(const json& sel, const std::string& path);

}  // namespace c2c::k8s::fields
