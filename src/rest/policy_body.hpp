// The original system's flat REST body (gthulhu Manager, api/manager/rest) <-> the daemon's
// NodeSchedulingPolicy. Pure functions: no I/O, no clock, no randomness, so every rule here is
// unit-tested (tests/unit/rest_policy_body_test.cpp).
//
// Decoding follows Go's encoding/json as the original does (unknown keys ignored, key case
// ignored, null = absent) with the deliberate fixes of src/rest/README.md: a key given twice in
// different case is refused, a wrong type or an out-of-range number is refused naming the field,
// and the result is checked with the core's own c2c::validate() so the REST client sees the same
// rule the daemon would apply ("commandRegex: invalid RE2 regex ...").
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"

namespace c2c::rest {

using nlohmann::json;

// Policy IDs are 24 lowercase hex digits, like the original's Mongo ObjectIDs, so scripts that
// store or slice them keep working. A policy made through the gateway is named "<owner>-<id>" in
// the daemon: the owner (the token's subject) is what "self" and the ownership checks read.
bool is_policy_id(const std::string& s);
// Lower-cases a hex id; nullopt unless it is 24 hex digits.
std::optional<std::string> normalize_policy_id(const std::string& s);
// Token subjects are DNS-1123 labels (they become part of a DNS-1123 policy name).
bool is_valid_subject(const std::string& s);
std::string policy_name(const std::string& owner, const std::string& id);
struct NameParts {
  std::string owner;
  std::string id;
};
// nullopt for a name the gateway did not make (a policy applied with the CLI or a manifest).
std::optional<NameParts> parse_policy_name(const std::string& name);

// A refused body: the field path in the REST body's own names ("draSelectors[0].attributes[1].key").
struct BodyError {
  std::string field;
  std::string message;
  std::string text() const { return field.empty() ? message : field + ": " + message; }
};

template <class T>
struct Decoded {
  std::optional<T> value;
  BodyError error;
  bool ok() const { return value.has_value(); }
};

// The body of POST/PUT .../node-scheduling-policies and POST /api/v1/preview, as the core's
// policy named `name` (generation 0: the daemon gives the next one). The result has passed
// c2c::validate().
Decoded<NodeSchedulingPolicy> policy_from_body(const json& body, const std::string& name);
// A string member of the body found case-insensitively ("policyId"); absent or null -> "".
Decoded<std::string> string_member(const json& body, const std::string& key);
// PUT's and DELETE's "policyId": required, 24 hex digits (a non-hex id is a 400, not the
// original's 500).
Decoded<std::string> policy_id_member(const json& body);
// DELETE .../node-scheduling-intents: "intentIds", at least one, each 24 hex digits.
Decoded<std::vector<std::string>> intent_ids_member(const json& body);

// The policy as the original's GET .../policies/self shows it, with the deliberate fix that
// zeros and empty lists are sent rather than omitted, plus "name" and "generation".
json policy_to_body(const NodeSchedulingPolicy& p, const std::string& id);

}  // namespace c2c::rest
