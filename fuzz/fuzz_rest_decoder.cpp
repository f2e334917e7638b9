// fuzz_rest_decoder: bytes -> an HTTP request (method, path, query, headers, body) -> the REST
// gateway's decoder (src/rest/request_decoder.*, the functions Gateway calls). Input format, so
// that the corpus reads like requests:
//     METHOD SP PATH[?k=v&k=v...] LF
//     Name: value LF            (any number of header lines)
//     LF
//     body bytes...
// Properties:
//   * never a crash, never an exception (the decoder returns refusals);
//   * a refusal names a field (non-empty), has a message that is UTF-8 (it goes into a JSON reply),
//     a 4xx status and a reason from refusal_reasons() (the metric's labels);
//   * an accepted body is shallower than the limit, has no key twice (the daemon's own strict
//     parser, codec::parse_json_strict, agrees) and its policy passes c2c::validate;
//   * an accepted policy round-trips: policy_to_body (what GET .../self shows)
//     -> decoded again by the same route -> the same policy.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "codec/json_reader.hpp"
#include "fuzz/harness_support.hpp"
#include "rest/request_decoder.hpp"

namespace {

using c2c::rest::json;

constexpr size_t kDepth = 8;  // small, so that the fuzzer reaches the limit within its input sizes

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_rest_decoder: %s\n", what.c_str());
  c2c::fuzz::die();
}

c2c::rest::HttpRequest to_request(const std::string& text) {
  c2c::rest::HttpRequest r;
  size_t eol = text.find('\n');
  std::string line = text.substr(0, eol);
  size_t sp = line.find(' ');
  r.method = line.substr(0, sp);
  std::string target = sp == std::string::npos ? "" : line.substr(sp + 1);
  size_t q = target.find('?');
  r.path = target.substr(0, q);
  if (q != std::string::npos) {
    std::string query = target.substr(q + 1);
    for (size_t b = 0; b <= query.size();) {
      size_t e = std::min(query.find('&', b), query.size());
      std::string kv = query.substr(b, e - b);
      size_t eq = kv.find('=');
      r.query.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
      b = e + 1;
    }
  }
  size_t pos = eol == std::string::npos ? text.size() : eol + 1;
  while (pos < text.size()) {
    size_t e = text.find('\n', pos);
    std::string h = text.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
    pos = e == std::string::npos ? text.size() : e + 1;
    if (h.empty()) break;
    size_t colon = h.find(':');
    std::string value = colon == std::string::npos ? "" : h.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    r.headers.emplace(h.substr(0, colon), value);
  }
  r.body = text.substr(std::min(pos, text.size()));
  return r;
}

size_t depth_of(const json& j) {
  size_t d = 0;
  if (j.is_array() || j.is_object())
    for (const auto& v : j) d = std::max(d, depth_of(v));
  return (j.is_array() || j.is_object()) ? d + 1 : 0;
}

void check_refusal(const c2c::rest::RequestError& e) {
  if (e.field.empty()) fail("a refusal names no field: " + e.message);
  if (e.message.empty()) fail("a refusal has no message (field " + e.field + ")");
  if (e.status < 400 || e.status > 499) fail("a refusal is not a 4xx: " + std::to_string(e.status));
  const auto& reasons = c2c::rest::refusal_reasons();
  if (std::find(reasons.begin(), reasons.end(), e.reason) == reasons.end()) fail("unknown refusal reason '" + e.reason + "'");
  try {
    (void)json(e.message).dump();  // strict: throws on bytes that are not UTF-8
    (void)json(e.field).dump();
  } catch (const json::exception& x) {
    fail(std::string("a refusal's text is not UTF-8 (the reply would be a 500): ") + x.what());
  }
}

void check_policy_body(const c2c::rest::HttpRequest& req, const c2c::rest::PolicyWrite& w, c2c::rest::IdRule rule) {
  if (auto e = c2c::validate(w.policy)) fail("accepted a policy validate() refuses: " + e->field + ": " + e->message);
  // The daemon's own strict parser (nlohmann with a duplicate-key check) as an oracle for the two
  // rules of issue 42. Its syntax is stricter in places (raw control characters in strings), so
  // only its duplicate-key refusal counts.
  try {
    json parsed = c2c::codec::parse_json_strict(req.body);
    if (depth_of(parsed) > kDepth) fail("accepted a body nested " + std::to_string(depth_of(parsed)) + " deep");
  } catch (const c2c::codec::DecodeError& x) {
    fail(std::string("accepted a body with a key given twice: ") + x.what());
  } catch (const json::exception&) {
  }
  json back = c2c::rest::policy_to_body(w.policy, w.id.empty() ? c2c::rest::kUnsetPolicyId : w.id);
  if (!w.id.empty()) back["policyId"] = w.id;
  auto again = c2c::rest::decode_policy_write(back.dump(), {kDepth}, "alice", rule);
  const auto* same = std::get_if<c2c::rest::PolicyWrite>(&again);
  if (!same) fail("the policy, as GET shows it, is refused: " + std::get<c2c::rest::RequestError>(again).message +
                  "\nbody: " + back.dump());
  if (!(same->policy == w.policy) || same->id != w.id) fail("round trip differs: " + back.dump());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto req = to_request(text);
  try {
    auto r = c2c::rest::decode_request(req, {kDepth}, "alice");
    if (const auto* e = std::get_if<c2c::rest::RequestError>(&r)) {
      check_refusal(*e);
      return 0;
    }
    const auto& t = std::get<c2c::rest::TypedRequest>(r);
    using c2c::rest::Route;
    if (t.policy) {
      auto rule = t.route == Route::CreatePolicy   ? c2c::rest::IdRule::None
                  : t.route == Route::UpdatePolicy ? c2c::rest::IdRule::Required
                                                   : c2c::rest::IdRule::Optional;
      check_policy_body(req, *t.policy, rule);
    }
    if (t.route == Route::Explain && t.tid == 0) fail("accepted tid 0");
    if (t.route == Route::DeleteIntents && t.intent_ids.empty()) fail("accepted no intent ID");
  } catch (const std::exception& x) {
    fail(std::string("the decoder threw: ") + x.what());
  }
  return 0;
}
