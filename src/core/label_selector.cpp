#include "core/label_selector.hpp"

#include <algorithm>

#include "core/names.hpp"

namespace c2c {

const char* to_string(LabelOperator op) {
  switch (op) {
    case LabelOperator::In: return "In";
    case LabelOperator::NotIn: return "NotIn";
    case LabelOperator::Exists: return "Exists";
    case LabelOperator::DoesNotExist: return "DoesNotExist";
  }
  return "?";
}

std::optional<LabelOperator> label_operator_from_string(const std::string& s) {
  for (auto op : {LabelOperator::In, LabelOperator::NotIn, LabelOperator::Exists, LabelOperator::DoesNotExist})
    if (s == to_string(op)) return op;
  return std::nullopt;
}

bool requirement_matches(const LabelRequirement& r, const Labels& labels) {
  auto it = labels.find(r.key);
  const bool has = it != labels.end();
  auto listed = [&] { return std::find(r.values.begin(), r.values.end(), it->second) != r.values.end(); };
  switch (r.op) {
    case LabelOperator::In: return has && listed();
    case LabelOperator::NotIn: return !has || !listed();
    case LabelOperator::Exists: return has;
    case LabelOperator::DoesNotExist: return !has;
  }
  return false;
}

namespace {

std::string describe(const LabelRequirement& r) {
  std::string s = r.key + " " + to_string(r.op);
  if (r.op == LabelOperator::In || r.op == LabelOperator::NotIn) {
    s += " [";
    for (size_t i = 0; i < r.values.size(); ++i) s += (i ? ", " : "") + r.values[i];
    s += "]";
  }
  return s;
}

std::string has_label(const Labels& labels, const std::string& key) {
  auto it = labels.find(key);
  return it == labels.end() ? "the node has no label " + key : "the node has " + key + "=" + it->second;
}

// DNS-1123 subdomain (the optional prefix of a qualified name).
bool dns_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty() || !alnum(part.front()) || !alnum(part.back())) return false;
    for (char c : part)
      if (!alnum(c) && c != '-') return false;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return true;
}

// The label-value charset: [A-Za-z0-9] at both ends, '-', '_', '.' inside (qualified names too).
bool label_chars(const std::string& s) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace

std::optional<std::string> first_unmet(const std::string& field, const Labels& match_labels,
                                       const std::vector<LabelRequirement>& expressions, const Labels& labels) {
  for (const auto& [k, v] : match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v)
      return field + ": wants " + k + "=" + v + ", but " + has_label(labels, k);
  }
  for (size_t i = 0; i < expressions.size(); ++i) {
    const LabelRequirement& r = expressions[i];
    if (!requirement_matches(r, labels))
      return field + ".matchExpressions[" + std::to_string(i) + "]: " + describe(r) + ", but " + has_label(labels, r.key);
  }
  return std::nullopt;
}

std::optional<std::string> label_key_error(const std::string& key) {
  if (key.empty()) return "a label key must not be empty";
  std::string name = key;
  if (auto slash = key.find('/'); slash != std::string::npos) {
    const std::string prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (!dns_subdomain(prefix))
      return "label key '" + echo(key) + "': the prefix must be a DNS-1123 subdomain (lower case, '-' and '.', at most 253)";
  }
  if (name.empty() || name.size() > 63)
    return "label key '" + echo(key) + "': the name part must be 1 to 63 characters";
  if (!label_chars(name))
    return "label key '" + echo(key) + "': the name part must be alphanumeric with '-', '_' or '.' inside";
  return std::nullopt;
}

std::optional<std::string> label_value_error(const std::string& value) {
  if (value.empty()) return std::nullopt;  // an empty value is a valid label value
  if (value.size() > 63) return "label value '" + echo(value) + "' is longer than 63 characters";
  if (!label_chars(value))
    return "label value '" + echo(value) + "' must be alphanumeric with '-', '_' or '.' inside";
  return std::nullopt;
}

std::optional<LabelFieldError> validate_labels(const std::string& field, const Labels& labels) {
  for (const auto& [k, v] : labels) {
    if (auto e = label_key_error(k)) return LabelFieldError{field, *e};
    if (auto e = label_value_error(v)) return LabelFieldError{field + "[" + echo(k) + "]", *e};
  }
  return std::nullopt;
}

std::optional<LabelFieldError> validate_selector(const std::string& field, const Labels& match_labels,
                                                 const std::vector<LabelRequirement>& expressions) {
  if (auto e = validate_labels(field, match_labels)) return e;
  for (size_t i = 0; i < expressions.size(); ++i) {
    const LabelRequirement& r = expressions[i];
    const std::string f = field + ".matchExpressions[" + std::to_string(i) + "]";
    if (auto e = label_key_error(r.key)) return LabelFieldError{f + ".key", *e};
    const bool needs_values = r.op == LabelOperator::In || r.op == LabelOperator::NotIn;
    if (needs_values && r.values.empty())
      return LabelFieldError{f + ".values", std::string("must be non-empty when operator is ") + to_string(r.op)};
    if (!needs_values && !r.values.empty())
      return LabelFieldError{f + ".values", std::string("must be empty when operator is ") + to_string(r.op)};
    for (size_t j = 0; j < r.values.size(); ++j)
      if (auto e = label_value_error(r.values[j]))
        return LabelFieldError{f + ".values[" + std::to_string(j) + "]", *e};
  }
  return std::nullopt;
}

}  // namespace c2c
