// The REST request decoder (src/rest/json_body.*, src/rest/request_decoder.*): the body parser's
// limits from jsoncpp (depth, duplicate keys, strict syntax), UTF-8 checked with the byte named,
// and the route table the fuzz harness drives (issue 42).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "rest/connection_gate.hpp"
#include "rest/request_decoder.hpp"

namespace c2c::rest {
namespace {

const std::string kSeed =
    R"({"nodeNames": ["dgx-spark-gb10"], "commandRegex": "^EngineCore(_DP[0-9]+)?$", "priority": 1, "executionTime": 2000000})";

JsonError refused(const std::string& body, size_t depth = kDefaultMaxJsonDepth) {
  auto r = parse_json_body(body, depth);
  EXPECT_TRUE(std::holds_alternative<JsonError>(r)) << body.substr(0, 200);
  return std::holds_alternative<JsonError>(r) ? std::get<JsonError>(r) : JsonError{JsonRefusal::Syntax, "", "accepted"};
}

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(RestJsonBody, DepthLimitIsTheLibrarys) {
  EXPECT_TRUE(std::holds_alternative<json>(parse_json_body(nested(32), 32)));
  auto e = refused(nested(33), 32);
  EXPECT_EQ(e.kind, JsonRefusal::Depth);
  EXPECT_NE(e.message.find("deeper than 32"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("--max-json-depth"), std::string::npos) << e.message;
  // Objects count like arrays.
  std::string obj;
  for (int i = 0; i < 40; ++i) obj += R"({"a":)";
  obj += "1" + std::string(40, '}');
  EXPECT_EQ(refused(obj, 32).kind, JsonRefusal::Depth);
  // The issue's body: ~200 KB nested 100,000 deep (it crashed the gateway) is refused, not parsed.
  EXPECT_EQ(refused(R"({"nodeNames":)" + nested(100000) + "}").kind, JsonRefusal::Depth);
}

TEST(RestJsonBody, DuplicateKeysAreRefusedNamingTheKey) {
  auto e = refused(R"({"nodeNames": ["n"], "commandRegex": "^a$", "priority": 1, "priority": 999})");
  EXPECT_EQ(e.kind, JsonRefusal::DuplicateKey);
  EXPECT_EQ(e.field, "priority");
  EXPECT_NE(e.message.find("given twice"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("column"), std::string::npos) << e.message;
  // Nested objects too; a key spelled with an escape is the same key.
  EXPECT_EQ(refused(R"({"nodeSelectors": [{"key": "a", "k\u0065y": "b"}]})").field, "key");
  // A duplicate key that decodes to bytes that are not UTF-8 is described, not echoed.
  auto bad = refused(R"({"\udc00": 1, "\udc00": 2})");
  EXPECT_EQ(bad.kind, JsonRefusal::DuplicateKey);
  EXPECT_EQ(first_invalid_utf8(bad.message), std::nullopt) << bad.message;
  EXPECT_EQ(first_invalid_utf8(bad.field), std::nullopt);
  // The same key in two objects is fine.
  EXPECT_TRUE(std::holds_alternative<json>(parse_json_body(R"([{"key": 1}, {"key": 2}])", 32)));
}

TEST(RestJsonBody, InvalidUtf8IsA400NamingTheByte) {
  auto e = refused("{\"nodeNames\": [\"n\xff\"]}");
  EXPECT_EQ(e.kind, JsonRefusal::Utf8);
  EXPECT_NE(e.message.find("byte 17"), std::string::npos) << e.message;
  EXPECT_EQ(refused("{\"a\": \"\xed\xa0\x80\"}").kind, JsonRefusal::Utf8);   // a surrogate, encoded
  EXPECT_EQ(refused("{\"a\": \"\xc0\x80\"}").kind, JsonRefusal::Utf8);       // overlong NUL
  EXPECT_EQ(refused("{\"a\": \"x\"}\xe2\x82").kind, JsonRefusal::Utf8);      // truncated at the end
  // A lone surrogate escape decodes to bytes that are not UTF-8: refused naming the string.
  auto lone = refused(R"({"commandRegex": "\udc00"})");
  EXPECT_EQ(lone.kind, JsonRefusal::Utf8);
  EXPECT_EQ(lone.field, "commandRegex");
  EXPECT_EQ(first_invalid_utf8("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("ab\xf4\x90\x80\x80"), 2u);  // above U+10FFFF
}

TEST(RestJsonBody, StrictSyntax) {
  EXPECT_EQ(refused("").kind, JsonRefusal::Empty);
  EXPECT_EQ(refused(R"({"a": 1} x)").kind, JsonRefusal::Syntax);
  EXPECT_EQ(refused("// c\n{\"a\": 1}").kind, JsonRefusal::Syntax);
  EXPECT_EQ(refused(R"({"a": [1, /* c */ 2]})").kind, JsonRefusal::Syntax);
  // (jsoncpp 1.9.5 still skips a comment between an object's members in strict mode: harmless,
  // it changes no value.)
  EXPECT_EQ(refused(R"({'a': 1})").kind, JsonRefusal::Syntax);
  EXPECT_EQ(refused(R"({"a": NaN})").kind, JsonRefusal::Syntax);
  EXPECT_EQ(refused("7").kind, JsonRefusal::Syntax);  // the top is an object or an array
  auto j = std::get<json>(parse_json_body(R"({"u": 18446744073709551615, "i": -5, "f": 1.5, "s": "x\u0000y", "n": null})", 32));
  EXPECT_EQ(j["u"].get<uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(j["i"].get<int64_t>(), -5);
  EXPECT_TRUE(j["f"].is_number_float());
  EXPECT_EQ(j["s"].get<std::string>(), std::string("x\0y", 3));
  EXPECT_TRUE(j["n"].is_null());
}

TEST(RestRequestDecoder, PolicyWritesThroughTheDecoder) {
  auto w = decode_policy_write(kSeed, {}, "alice", IdRule::None);
  ASSERT_TRUE(std::holds_alternative<PolicyWrite>(w));
  EXPECT_EQ(std::get<PolicyWrite>(w).policy.priority, 1);
  EXPECT_EQ(std::get<PolicyWrite>(w).policy.name, policy_name("alice", kUnsetPolicyId));
  auto dup = decode_policy_write(R"({"nodeNames": ["n"], "commandRegex": "^a$", "priority": 1, "priority": 999})", {},
                                 "alice", IdRule::None);
  ASSERT_TRUE(std::holds_alternative<RequestError>(dup));
  EXPECT_EQ(std::get<RequestError>(dup).field, "priority");
  EXPECT_EQ(std::get<RequestError>(dup).reason, "body-duplicate-key");
  auto put = decode_policy_write(R"({"nodeNames": ["n"], "commandRegex": "^a$"})", {}, "alice", IdRule::Required);
  ASSERT_TRUE(std::holds_alternative<RequestError>(put));
  EXPECT_EQ(std::get<RequestError>(put).message, "Policy ID is required");
  auto deep = decode_policy_write(R"({"nodeNames": )" + nested(5) + "}", {4}, "alice", IdRule::None);
  ASSERT_TRUE(std::holds_alternative<RequestError>(deep));
  EXPECT_EQ(std::get<RequestError>(deep).reason, "body-depth");
  EXPECT_EQ(std::get<RequestError>(deep).field, "body");
}

TEST(RestRequestDecoder, RoutesQueriesAndHeaders) {
  HttpRequest r{"POST", "/api/v1/preview", {}, {{"authorization", "Bearer reader-token-0123456789abcdef"}}, kSeed};
  auto t = decode_request(r, {}, "alice");
  ASSERT_TRUE(std::holds_alternative<TypedRequest>(t));
  EXPECT_EQ(std::get<TypedRequest>(t).route, Route::Preview);
  r.headers = {};
  EXPECT_EQ(std::get<RequestError>(decode_request(r, {}, "alice")).status, 401);
  r.headers = {{"Authorization", "Basic x"}};
  EXPECT_EQ(std::get<RequestError>(decode_request(r, {}, "alice")).field, "Authorization");
  HttpRequest q{"GET", "/api/v1/tasks", {{"policyId", "a"}, {"policyId", "b"}}, {{"Authorization", "Bearer t"}}, ""};
  EXPECT_EQ(std::get<RequestError>(decode_request(q, {}, "alice")).field, "policyId");
  q.query = {{"comm", "x\xff"}};
  EXPECT_EQ(std::get<RequestError>(decode_request(q, {}, "alice")).field, "comm");
  HttpRequest ex{"GET", "/api/v1/tasks/42/explain", {}, {{"Authorization", "Bearer t"}}, ""};
  EXPECT_EQ(std::get<TypedRequest>(decode_request(ex, {}, "alice")).tid, 42u);
  ex.path = "/api/v1/tasks/0/explain";
  EXPECT_EQ(std::get<RequestError>(decode_request(ex, {}, "alice")).field, "tid");
  HttpRequest none{"GET", "/nope", {}, {}, ""};
  EXPECT_EQ(std::get<RequestError>(decode_request(none, {}, "alice")).status, 404);
  HttpRequest health{"GET", "/health", {}, {}, ""};
  EXPECT_EQ(std::get<TypedRequest>(decode_request(health, {}, "alice")).route, Route::Health);
}

// GET /api/v1/decisions (issue 46): tid, policyId and limit, each checked and named when bad.
TEST(RestRequestDecoder, DecisionsQuery) {
  HttpRequest q{"GET", "/api/v1/decisions", {}, {{"Authorization", "Bearer t"}}, ""};
  auto t = std::get<TypedRequest>(decode_request(q, {}, "alice"));
  EXPECT_EQ(t.route, Route::ListDecisions);
  EXPECT_EQ(t.decisions.tid, 0u);
  EXPECT_EQ(t.decisions.limit, 100u);
  EXPECT_FALSE(t.decisions.policy_id);
  q.query = {{"tid", "42"}, {"limit", "7"}, {"policyId", "0123456789ABCDEF01234567"}};
  t = std::get<TypedRequest>(decode_request(q, {}, "alice"));
  EXPECT_EQ(t.decisions.tid, 42u);
  EXPECT_EQ(t.decisions.limit, 7u);
  EXPECT_EQ(t.decisions.policy_id, std::optional<std::string>("0123456789abcdef01234567"));
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"tid", "0"}, {"tid", "x"}, {"limit", "0"}, {"limit", "1025"}, {"limit", ""}, {"policyId", "zz"}}) {
    q.query = {{key, value}};
    auto e = decode_request(q, {}, "alice");
    ASSERT_TRUE(std::holds_alternative<RequestError>(e)) << key << "=" << value;
    EXPECT_EQ(std::get<RequestError>(e).field, key) << value;
    EXPECT_EQ(std::get<RequestError>(e).status, 400);
  }
  q.query = {{"tid", "1"}, {"tid", "2"}};
  EXPECT_EQ(std::get<RequestError>(decode_request(q, {}, "alice")).field, "tid");
  q.method = "POST";
  q.query = {};
  EXPECT_EQ(std::get<RequestError>(decode_request(q, {}, "alice")).status, 405);
}

// --max-connections-per-client and --max-connections (keep_alive_server.cpp admits through it):
// over a limit, the oldest connection still waiting for a request head makes room; when every one
// has a request in hand, the new one is refused.
TEST(RestConnectionGate, PerClientAndTotalLimitsEvictTheOldestPending) {
  std::vector<std::pair<int, ConnectionGate::Admit>> evicted;
  ConnectionGate g(/*max_total=*/4, /*max_per_client=*/2, [&](int fd, ConnectionGate::Admit why) {
    evicted.emplace_back(fd, why);
  });
  using A = ConnectionGate::Admit;
  auto a1 = g.enter("127.0.0.1", 11);  // slow: stays pending
  auto a2 = g.enter("127.0.0.1", 12);
  ASSERT_EQ(a1.admit, A::Ok);
  ASSERT_EQ(a2.admit, A::Ok);
  auto a3 = g.enter("127.0.0.1", 13);  // the third from one address: 11, the oldest pending, goes
  EXPECT_EQ(a3.admit, A::Ok);
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(evicted[0], std::make_pair(11, A::OverClientLimit));
  g.leave(a1.id);  // its worker closes it later: nothing more to release
  EXPECT_EQ(g.total(), 2u);
  g.set_pending(a2.id, false);  // both of 127.0.0.1's have a request in hand now
  g.set_pending(a3.id, false);
  EXPECT_EQ(g.enter("127.0.0.1", 14).admit, A::OverClientLimit);  // nobody to evict: refused
  EXPECT_EQ(evicted.size(), 1u);
  auto b1 = g.enter("127.0.0.2", 21);
  auto b2 = g.enter("127.0.0.3", 31);
  EXPECT_EQ(g.total(), 4u);
  auto c1 = g.enter("127.0.0.4", 41);  // the fifth in all: 21, the oldest pending of anyone, goes
  EXPECT_EQ(c1.admit, A::Ok);
  ASSERT_EQ(evicted.size(), 2u);
  EXPECT_EQ(evicted[1], std::make_pair(21, A::OverTotalLimit));
  g.set_pending(b2.id, false);
  g.set_pending(c1.id, false);
  EXPECT_EQ(g.enter("127.0.0.5", 51).admit, A::OverTotalLimit);  // all four active: refused
  g.leave(a2.id);
  EXPECT_EQ(g.enter("127.0.0.5", 51).admit, A::Ok);  // a place is free again
  g.leave(b1.id);  // evicted earlier: a no-op
  EXPECT_EQ(g.total(), 4u);
}

}  // namespace
}  // namespace c2c::rest
