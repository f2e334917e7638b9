// Kubernetes label selectors (metav1.LabelSelector) over a node's labels: matchLabels plus
// matchExpressions with In, NotIn, Exists and DoesNotExist, validated the way the API server
// validates them (spec/state-machine.md, "Node labels and selectors"). Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace c2c {

enum class LabelOperator : uint8_t { In = 0, NotIn = 1, Exists = 2, DoesNotExist = 3 };
const char* to_string(LabelOperator op);
std::optional<LabelOperator> label_operator_from_string(const std::string& s);

// One matchExpressions entry.
struct LabelRequirement {
  std::string key;
  LabelOperator op = LabelOperator::In;
  std::vector<std::string> values;
  bool operator==(const LabelRequirement&) const = default;
};

using Labels = std::map<std::string, std::string>;

// Whether one requirement holds on these labels (Kubernetes semantics: NotIn and DoesNotExist hold
// when the key is absent).
bool requirement_matches(const LabelRequirement& r, const Labels& labels);

// The first requirement of the selector that the labels fail, described for an operator
// ("nodeSelectors.matchExpressions[1]: gpu NotIn [a100], but the node has gpu=a100"); nullopt when
// every requirement holds (an empty selector selects everything). `field` prefixes the paths; the
// matchLabels part is reported under `field` itself (the simple map form and matchLabels are one
// map in the model).
std::optional<std::string> first_unmet(const std::string& field, const Labels& match_labels,
                                       const std::vector<LabelRequirement>& expressions, const Labels& labels);

// Label syntax as the API server checks it (apimachinery validation.IsQualifiedName and
// IsValidLabelValue). Each returns nullopt when valid, else why not.
std::optional<std::string> label_key_error(const std::string& key);
std::optional<std::string> label_value_error(const std::string& value);

struct LabelFieldError {
  std::string field;
  std::string message;
};
// A label map (node labels, matchLabels): every key a qualified name, every value a label value.
std::optional<LabelFieldError> validate_labels(const std::string& field, const Labels& labels);
// A whole selector, as ValidateLabelSelector does: matchLabels as above (under `field`); each expression's key a
// qualified name; In/NotIn with at least one value, Exists/DoesNotExist with none; the values
// label values. Errors name the field, e.g. "nodeSelectors.matchExpressions[1].values".
std::optional<LabelFieldError> validate_selector(const std::string& field, const Labels& match_labels,
                                                 const std::vector<LabelRequirement>& expressions);

}  // namespace c2c
