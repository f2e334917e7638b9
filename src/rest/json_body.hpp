// A REST request body as JSON, read by a parser with its own limits (issue 42): pure, no I/O.
//
// Why jsoncpp (libjsoncpp-dev) and not nlohmann::json, which the rest of the gateway uses for
// the parsed tree: nlohmann's parser has no depth limit, and its tree is copied and destroyed
// recursively, so a 200 KB body nested 100,000 deep overflowed the stack (SIGSEGV in the copy
// of the tree in policy_body's members()). jsoncpp's CharReader refuses, *in the library*, a
// document nested deeper than `stackLimit`, a key given twice in one object (`rejectDupKeys`,
// as the daemon's own parse_json_strict does), trailing bytes (`failIfExtra`), comments,
// single quotes and NaN (`strictMode`). Of the other Debian 12 candidates, Boost.JSON
// (libboost-json1.81-dev, max_depth, UTF-8 checked) replaces the Boost 1.74 headers the tree
// builds with (and removes python3-matplotlib through pythran), and simdjson (max_depth, UTF-8
// checked) keeps duplicate keys and says nothing of where an error is.
//
// jsoncpp does not check that strings are UTF-8, so the body is first checked as a whole
// (RFC 8259 §8.1: JSON exchanged between systems is UTF-8) with iconv(3) from glibc, which
// refuses overlong forms, surrogates, code points above U+10FFFF and truncated sequences and says
// at which byte; strings are checked again after \u escapes are decoded (a lone "\udc00" decodes
// to bytes that are not UTF-8). Only then is the tree handed over as nlohmann::json, whose depth
// is now bounded by the same limit.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace c2c::rest {

using nlohmann::json;

// The default of --max-json-depth: the deepest REST body (draSelectors[i].attributes[j]) is 4.
inline constexpr size_t kDefaultMaxJsonDepth = 32;

// Why a body was refused; also the label of claim2core_rest_refusals_total{reason=...}.
enum class JsonRefusal { Empty, Syntax, Depth, DuplicateKey, Utf8 };
const char* refusal_reason(JsonRefusal r);

struct JsonError {
  JsonRefusal kind;
  std::string field;    // the key given twice, or the string holding a bad \u escape; else ""
  std::string message;  // names the limit, the key, or the byte offset
};

// The body as JSON (an object or an array at the top), or why not. Never throws.
std::variant<json, JsonError> parse_json_body(std::string_view body, size_t max_depth);

// The offset of the first byte of s that does not begin a valid UTF-8 sequence, or nullopt.
std::optional<size_t> first_invalid_utf8(std::string_view s);

}  // namespace c2c::rest
