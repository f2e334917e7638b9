#include "rest/policy_body.hpp"

#include <cctype>
#include <limits>
#include <map>

namespace c2c::rest {
namespace {

constexpr size_t kIdLen = 24;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class T>
Decoded<T> fail(std::string field, std::string message) {
  return Decoded<T>{std::nullopt, BodyError{std::move(field), std::move(message)}};
}

// The body's members by lower-cased key (Go's encoding/json matches keys case-insensitively);
// null members are dropped (Go leaves the field at its zero value). A key given twice in
// different case is refused: Go would silently take the last, which hides a typo.
Decoded<std::map<std::string, json>> members(const json& obj, const std::string& path) {
  if (!obj.is_object()) return fail<std::map<std::string, json>>(path, "must be a JSON object");
  std::map<std::string, json> out;
  std::map<std::string, std::string> spelled;
  for (const auto& [k, v] : obj.items()) {
    std::string lk = lower(k);
    if (auto it = spelled.find(lk); it != spelled.end())
      return fail<std::map<std::string, json>>(path + (path.empty() ? "" : ".") + k,
                                               "given twice (also as '" + it->second + "')");
    spelled[lk] = k;
    if (!v.is_null()) out[lk] = v;
  }
  return Decoded<std::map<std::string, json>>{std::move(out), {}};
}

// The top-level members, or the error: "the body must be a JSON object", or the key given twice.
Decoded<std::map<std::string, json>> top_members(const json& body) {
  auto m = members(body, "");
  if (!m.ok() && m.error.field.empty()) m.error.message = "the body " + m.error.message;
  return m;
}

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

const json* find(const std::map<std::string, json>& m, const std::string& key) {
  auto it = m.find(lower(key));
  return it == m.end() ? nullptr : &it->second;
}

std::optional<BodyError> get_string(const std::map<std::string, json>& m, const std::string& path,
                                    const std::string& key, std::string& out) {
  const json* v = find(m, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) return BodyError{join(path, key), "must be a string"};
  out = v->get<std::string>();
  return std::nullopt;
}

// A list of {key, value} string pairs (nodeSelectors, a DRA selector's attributes).
std::optional<BodyError> get_pairs(const json& v, const std::string& f,
                                   std::vector<std::pair<std::string, std::string>>& out) {
  if (!v.is_array()) return BodyError{f, "must be a list of {\"key\", \"value\"} objects"};
  for (size_t i = 0; i < v.size(); ++i) {
    std::string fi = f + "[" + std::to_string(i) + "]";
    auto m = members(v[i], fi);
    if (!m.ok()) return m.error;
    std::string key, value;
    if (auto e = get_string(*m.value, fi, "key", key)) return e;
    if (auto e = get_string(*m.value, fi, "value", value)) return e;
    if (key.empty()) return BodyError{fi + ".key", "must not be empty"};
    out.emplace_back(key, value);
  }
  return std::nullopt;
}

// A JSON integer in [lo, hi]; 2e6 or 1.5 are refused as Go's int decoding refuses them.
template <class T>
std::optional<BodyError> get_integer(const std::map<std::string, json>& m, const std::string& key, T& out) {
  const json* v = find(m, key);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) {
    auto u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return BodyError{key, "out of range"};
    out = static_cast<T>(u);
  } else if (v->is_number_integer()) {
    auto i = v->get<int64_t>();
    if (i < 0 && !std::numeric_limits<T>::is_signed) return BodyError{key, "must not be negative"};
    if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
      return BodyError{key, "out of range"};
    out = static_cast<T>(i);
  } else {
    return BodyError{key, "must be an integer"};
  }
  return std::nullopt;
}

// The original's DRA selector is {deviceClass, attributes:[{key,value}]}; this node matches
// claims by driver, pool and device (spec/state-machine.md), so deviceClass is the driver and
// the attributes "pool" and "device" narrow it. Any other attribute would be silently ignored:
// it is refused instead.
std::optional<BodyError> get_dra(const json& v, std::vector<DraSelector>& out) {
  if (!v.is_array()) return BodyError{"draSelectors", "must be a list of {\"deviceClass\", \"attributes\"} objects"};
  for (size_t i = 0; i < v.size(); ++i) {
    std::string f = "draSelectors[" + std::to_string(i) + "]";
    auto m = members(v[i], f);
    if (!m.ok()) return m.error;
    DraSelector d;
    if (auto e = get_string(*m.value, f, "deviceClass", d.driver)) return e;
    if (d.driver.empty()) return BodyError{f + ".deviceClass", "must not be empty"};
    std::vector<std::pair<std::string, std::string>> attrs;
    if (const json* a = find(*m.value, "attributes"))
      if (auto e = get_pairs(*a, f + ".attributes", attrs)) return e;
    for (size_t j = 0; j < attrs.size(); ++j) {
      const auto& [k, val] = attrs[j];
      if (k == "pool") d.pool = val;
      else if (k == "device") d.device = val;
      else
        return BodyError{f + ".attributes[" + std::to_string(j) + "].key",
                         "only 'pool' and 'device' are matched on this node, got '" + k + "'"};
    }
    out.push_back(std::move(d));
  }
  return std::nullopt;
}

}  // namespace

bool is_policy_id(const std::string& s) {
  if (s.size() != kIdLen) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::optional<std::string> normalize_policy_id(const std::string& s) {
  std::string l = lower(s);
  if (!is_policy_id(l)) return std::nullopt;
  return l;
}

bool is_valid_subject(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return s.front() != '-' && s.back() != '-';
}

std::string policy_name(const std::string& owner, const std::string& id) { return owner + "-" + id; }

std::optional<NameParts> parse_policy_name(const std::string& name) {
  if (name.size() < kIdLen + 2 || name[name.size() - kIdLen - 1] != '-') return std::nullopt;
  NameParts p{name.substr(0, name.size() - kIdLen - 1), name.substr(name.size() - kIdLen)};
  if (!is_policy_id(p.id) || !is_valid_subject(p.owner)) return std::nullopt;
  return p;
}

Decoded<NodeSchedulingPolicy> policy_from_body(const json& body, const std::string& name) {
  auto m = top_members(body);
  if (!m.ok()) return {std::nullopt, m.error};
  const auto& mm = *m.value;
  NodeSchedulingPolicy p;
  p.name = name;
  if (const json* v = find(mm, "nodeNames")) {
    if (!v->is_array()) return fail<NodeSchedulingPolicy>("nodeNames", "must be a list of strings");
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string())
        return fail<NodeSchedulingPolicy>("nodeNames[" + std::to_string(i) + "]", "must be a string");
      p.node_names.push_back((*v)[i].get<std::string>());
    }
  }
  if (const json* v = find(mm, "nodeSelectors")) {
    std::vector<std::pair<std::string, std::string>> pairs;
    if (auto e = get_pairs(*v, "nodeSelectors", pairs)) return {std::nullopt, *e};
    for (size_t i = 0; i < pairs.size(); ++i)
      if (!p.node_selectors.emplace(pairs[i].first, pairs[i].second).second)
        return fail<NodeSchedulingPolicy>("nodeSelectors[" + std::to_string(i) + "].key",
                                          "label '" + pairs[i].first + "' given twice");
  }
  if (const json* v = find(mm, "draSelectors"))
    if (auto e = get_dra(*v, p.dra_selectors)) return {std::nullopt, *e};
  if (auto e = get_string(mm, "", "commandRegex", p.command_regex)) return {std::nullopt, *e};
  if (auto e = get_integer(mm, "priority", p.priority)) return {std::nullopt, *e};
  if (auto e = get_integer(mm, "executionTime", p.execution_time)) return {std::nullopt, *e};
  if (auto e = ::c2c::validate(p)) return fail<NodeSchedulingPolicy>(e->field, e->message);
  return {std::move(p), {}};
}

Decoded<std::string> string_member(const json& body, const std::string& key) {
  auto m = top_members(body);
  if (!m.ok()) return {std::nullopt, m.error};
  std::string out;
  if (auto e = get_string(*m.value, "", key, out)) return {std::nullopt, *e};
  return {std::move(out), {}};
}

Decoded<std::string> policy_id_member(const json& body) {
  auto s = string_member(body, "policyId");
  if (!s.ok()) return s;
  if (s.value->empty()) return fail<std::string>("policyId", "Policy ID is required");
  auto id = normalize_policy_id(*s.value);
  if (!id) return fail<std::string>("policyId", "must be 24 hex digits, got '" + *s.value + "'");
  return {std::move(*id), {}};
}

Decoded<std::vector<std::string>> intent_ids_member(const json& body) {
  using R = std::vector<std::string>;
  auto m = top_members(body);
  if (!m.ok()) return {std::nullopt, m.error};
  const json* v = find(*m.value, "intentIds");
  if (!v || (v->is_array() && v->empty())) return fail<R>("intentIds", "At least one intent ID is required");
  if (!v->is_array()) return fail<R>("intentIds", "must be a list of strings");
  R out;
  for (size_t i = 0; i < v->size(); ++i) {
    std::string f = "intentIds[" + std::to_string(i) + "]";
    if (!(*v)[i].is_string()) return fail<R>(f, "must be a string");
    auto id = normalize_policy_id((*v)[i].get<std::string>());
    if (!id) return fail<R>(f, "must be 24 hex digits, got '" + (*v)[i].get<std::string>() + "'");
    out.push_back(*id);
  }
  return {std::move(out), {}};
}

json policy_to_body(const NodeSchedulingPolicy& p, const std::string& id) {
  json sel = json::array();
  for (const auto& [k, v] : p.node_selectors) sel.push_back({{"key", k}, {"value", v}});
  json dra = json::array();
  for (const auto& d : p.dra_selectors) {
    json attrs = json::array();
    if (!d.pool.empty()) attrs.push_back({{"key", "pool"}, {"value", d.pool}});
    if (!d.device.empty()) attrs.push_back({{"key", "device"}, {"value", d.device}});
    dra.push_back({{"deviceClass", d.driver}, {"attributes", attrs}});
  }
  return {{"id", id},
          {"name", p.name},
          {"generation", p.generation},
          {"nodeNames", json(p.node_names)},
          {"nodeSelectors", sel},
          {"draSelectors", dra},
          {"commandRegex", p.command_regex},
          {"priority", p.priority},
          {"executionTime", p.execution_time}};
}

}  // namespace c2c::rest
