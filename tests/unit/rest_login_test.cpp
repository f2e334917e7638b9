// The password login (src/rest/login_*.{hpp,cpp}; issue 47): the users file, Argon2id hashes,
// ES256 tokens and their refusals, the revocation list, the brute-force throttle, and the
// endpoints over them.
#include <gtest/gtest.h>
#include <jwt.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "rest/login_admin.hpp"
#include "rest/login_service.hpp"

namespace c2c::rest {
namespace {

// Tests hash with libsodium's minimum cost (the verifier reads the cost from the hash), so a
// check takes microseconds instead of the interactive limits' ~0.1 s and 64 MiB.
std::string cheap_hash(const std::string& pw) {
  EXPECT_EQ(sodium_init() >= 0, true);
  char out[crypto_pwhash_STRBYTES];
  EXPECT_EQ(crypto_pwhash_str(out, pw.data(), pw.size(), crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_MEMLIMIT_MIN), 0);
  return out;
}

UserTable two_users() {
  UserTable t;
  t.users["alice"] = User{"alice", kRoleAdmin, cheap_hash("correct horse")};
  t.users["carol"] = User{"carol", kRoleReadOnly, cheap_hash("battery staple")};
  return t;
}

TEST(RestLoginUsers, FileLinesAndRoles) {
  auto t = parse_users_file("# comment\nalice admin $argon2id$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA\n\n"
                            "carol read-only $argon2id$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA\n");
  EXPECT_EQ(t.users.size(), 2u);
  EXPECT_EQ(t.users.at("carol").role, kRoleReadOnly);
  EXPECT_EQ(role_permissions(kRoleReadOnly), (std::set<std::string>{kPermPolicyRead, kPermIntentRead}));
  EXPECT_EQ(role_permissions(kRoleAdmin).size(), all_permissions().size());
  for (const char* bad : {"alice admin", "alice root $argon2id$x", "Alice admin $argon2id$x", "alice admin $2y$10$bcrypt",
                          "alice admin $argon2id$x extra", "alice admin $argon2id$x\nalice admin $argon2id$y"}) {
    EXPECT_THROW(parse_users_file(bad), std::invalid_argument) << bad;
  }
  try {
    parse_users_file("alice admin $argon2id$x\nbob superuser $argon2id$y\n");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

TEST(RestLoginUsers, HashesAreArgon2idAndChecked) {
  std::string h = cheap_hash("s3cret-pass");
  EXPECT_EQ(h.rfind("$argon2id$", 0), 0u);
  EXPECT_TRUE(password_matches(h, "s3cret-pass"));
  EXPECT_FALSE(password_matches(h, "s3cret-pasS"));
  EXPECT_FALSE(password_matches(h, ""));
  EXPECT_FALSE(password_matches("$argon2id$garbage", "s3cret-pass"));
}

TEST(RestLoginUsers, AFileOthersCanWriteOrReadIsRefusedNamingIt) {
  char tmpl[] = "/tmp/c2c-users-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  std::string line = "alice admin " + cheap_hash("correct horse") + "\n";
  ASSERT_EQ(write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  close(fd);
  if (geteuid() != 0) GTEST_SKIP() << "needs root (the file must be owned by root)";
  ASSERT_EQ(chmod(tmpl, 0600), 0);
  EXPECT_EQ(load_users_file(tmpl).users.size(), 1u);
  for (mode_t m : {0602, 0620, 0644}) {
    ASSERT_EQ(chmod(tmpl, m), 0);
    try {
      load_users_file(tmpl);
      ADD_FAILURE() << "mode " << m << " accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(tmpl), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--users-file"), std::string::npos) << e.what();
    }
  }
  unlink(tmpl);
}

TEST(RestLoginUsers, AddUserAppendsAHashedLineAndRefusesAGivenName) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (the file must be owned by root)";
  std::string path = "/tmp/c2c-add-user-" + std::to_string(getpid());
  unlink(path.c_str());
  std::istringstream pw1("long enough pw\n"), pw2("another pass\n"), shortpw("short\n");
  EXPECT_EQ(add_user(path, "dave", kRoleReadOnly, pw1), 0);
  EXPECT_EQ(add_user(path, "dave", kRoleAdmin, pw2), 1);  // already there
  EXPECT_EQ(add_user(path, "erin", kRoleAdmin, shortpw), 1);
  EXPECT_EQ(add_user(path, "Erin", kRoleAdmin, pw2), 1);
  auto t = load_users_file(path);
  ASSERT_EQ(t.users.size(), 1u);
  EXPECT_EQ(t.users.at("dave").role, kRoleReadOnly);
  EXPECT_TRUE(password_matches(t.users.at("dave").hash, "long enough pw"));
  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  unlink(path.c_str());
}

TokenClaims claims(const std::string& type, int64_t now, int64_t ttl = 60) {
  return TokenClaims{"alice", kRoleAdmin, type, random_token_id(), now, now + ttl};
}

TEST(RestLoginTokens, SignedTokensVerifyAndExpire) {
  auto s = TokenSigner::generate();
  const int64_t now = 1796112366;
  auto c = claims(kAccessToken, now);
  std::string t = s.sign(c);
  auto v = s.verify(t, kAccessToken, now + 10);
  ASSERT_TRUE(std::holds_alternative<TokenClaims>(v));
  EXPECT_EQ(std::get<TokenClaims>(v).subject, "alice");
  EXPECT_EQ(std::get<TokenClaims>(v).id, c.id);
  EXPECT_EQ(std::get<TokenRefusal>(s.verify(t, kAccessToken, now + 60)).message, "invalid or expired token");
  EXPECT_EQ(std::get<TokenRefusal>(s.verify(t, kRefreshToken, now)).message, "invalid token type");
  // Another key's token is not ours.
  EXPECT_EQ(std::get<TokenRefusal>(TokenSigner::generate().verify(t, kAccessToken, now)).message, "invalid or expired token");
}

TEST(RestLoginTokens, TamperedTokensAreRefused) {
  auto s = TokenSigner::generate();
  const int64_t now = 1796112366;
  std::string t = s.sign(claims(kAccessToken, now));
  auto dot1 = t.find('.'), dot2 = t.rfind('.');
  // The payload changed (its last character), the signature changed, a part missing.
  std::string payload = t;
  payload[dot2 - 1] = payload[dot2 - 1] == 'A' ? 'B' : 'A';
  std::string sig = t;
  sig[dot2 + 5] = sig[dot2 + 5] == 'A' ? 'B' : 'A';
  for (const auto& bad : {payload, sig, t.substr(0, dot2), t.substr(dot1 + 1), std::string("a.b.c"), std::string()}) {
    auto v = s.verify(bad, kAccessToken, now);
    ASSERT_TRUE(std::holds_alternative<TokenRefusal>(v)) << bad;
    EXPECT_EQ(std::get<TokenRefusal>(v).status, 401);
  }
}

// libjwt checks the signature with the algorithm the token names: a token that says HS256 and is
// keyed with the (public) verification key, or says "none", must not pass.
TEST(RestLoginTokens, AlgorithmConfusionIsRefused) {
  auto s = TokenSigner::generate();
  const int64_t now = 1796112366;
  for (jwt_alg_t alg : {JWT_ALG_HS256, JWT_ALG_NONE}) {
    jwt_t* j = nullptr;
    ASSERT_EQ(jwt_new(&j), 0);
    auto c = claims(kAccessToken, now);
    jwt_add_grant(j, "iss", kTokenIssuer);
    jwt_add_grant(j, "sub", "alice");
    jwt_add_grant(j, "role", kRoleAdmin);
    jwt_add_grant(j, "typ", kAccessToken);
    jwt_add_grant(j, "jti", c.id.c_str());
    jwt_add_grant_int(j, "iat", now);
    jwt_add_grant_int(j, "exp", now + 60);
    const std::string& key = s.public_pem();
    if (alg == JWT_ALG_HS256)
      ASSERT_EQ(jwt_set_alg(j, alg, reinterpret_cast<const unsigned char*>(key.data()), static_cast<int>(key.size())), 0);
    else
      ASSERT_EQ(jwt_set_alg(j, alg, nullptr, 0), 0);
    char* forged = jwt_encode_str(j);
    ASSERT_NE(forged, nullptr);
    auto v = s.verify(forged, kAccessToken, now);
    EXPECT_TRUE(std::holds_alternative<TokenRefusal>(v)) << "alg " << alg << " accepted: " << forged;
    std::free(forged);
    jwt_free(j);
  }
}

TEST(RestLoginTokens, TheKeyFileMustBeRootsAndP256) {
  EXPECT_THROW(TokenSigner("not a key"), std::runtime_error);
  EXPECT_THROW(TokenSigner::load("/nonexistent/key.pem"), std::runtime_error);
}

TEST(RestLoginRevocation, RevokedUntilExpiryAndBoundedWithoutForgetting) {
  RevocationList r(2);
  const int64_t now = 1796112366;
  auto a = claims(kAccessToken, now), b = claims(kAccessToken, now), c = claims(kAccessToken, now, 3600);
  r.revoke(a, now);
  EXPECT_TRUE(r.revoked(a));
  EXPECT_FALSE(r.revoked(b));
  r.revoke(b, now);
  // Full of live entries: the third revocation falls back to the user's cut-off, so nothing
  // revoked is forgotten (and the list stays at its bound).
  r.revoke(c, now + 1);
  EXPECT_EQ(r.size(), 2u);
  EXPECT_TRUE(r.revoked(a));
  EXPECT_TRUE(r.revoked(b));
  EXPECT_TRUE(r.revoked(c));
  TokenClaims later = claims(kAccessToken, now + 2);
  EXPECT_FALSE(r.revoked(later));  // issued after the cut-off
  // Expired entries make room.
  r.revoke(later, now + 100);
  EXPECT_TRUE(r.revoked(later));
  EXPECT_LE(r.size(), 2u);
}

TEST(RestLoginThrottle, RefusesAfterTheLimitUntilTheWindowEnds) {
  LoginThrottle t({3, std::chrono::seconds(60), 3});
  auto t0 = LoginThrottle::Clock::time_point{} + std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(t.blocked("alice", t0));
    t.failed("alice", t0 + std::chrono::seconds(i));
  }
  ASSERT_TRUE(t.blocked("alice", t0 + std::chrono::seconds(10)));
  EXPECT_EQ(t.blocked("alice", t0 + std::chrono::seconds(10))->count(), 50);
  EXPECT_FALSE(t.blocked("bob", t0));
  EXPECT_FALSE(t.blocked("alice", t0 + std::chrono::seconds(60)));  // the window ended
  t.failed("alice", t0 + std::chrono::seconds(61));                 // a new window: one failure
  EXPECT_FALSE(t.blocked("alice", t0 + std::chrono::seconds(62)));
  // Bounded: a full table drops the key whose window began longest ago.
  t.failed("b", t0 + std::chrono::seconds(63));
  t.failed("c", t0 + std::chrono::seconds(64));
  t.failed("d", t0 + std::chrono::seconds(65));
  EXPECT_EQ(t.size(), 3u);
}

struct Service {
  int64_t now = 1796112366;
  LoginThrottle::Clock::time_point steady = LoginThrottle::Clock::time_point{} + std::chrono::hours(1);
  std::vector<std::string> refusals;
  std::unique_ptr<LoginService> svc;
  Service() {
    LoginOptions o;
    o.per_user.max_failures = 3;
    o.per_client.max_failures = 5;
    o.max_revoked = 16;
    o.now = [this] { return now; };
    o.steady = [this] { return steady; };
    o.clock = [] { return std::chrono::system_clock::from_time_t(1796112366); };
    o.on_refusal = [this](const std::string& r) { refusals.push_back(r); };
    svc = std::make_unique<LoginService>(two_users(), "", TokenSigner::generate(), o);
  }
  Reply login(const std::string& user, const std::string& pw, const std::string& client = "127.0.0.1") {
    return svc->login(client, json{{"username", user}, {"password", pw}}.dump());
  }
  std::variant<Principal, Reply> as(const std::string& access, const std::string& perm) {
    std::string h = "Bearer " + access;
    TokenTable none;
    return authorize(none, &h, perm, [this](const std::string& p) { return svc->check_bearer(p); });
  }
};

TEST(RestLoginService, LoginRefreshLogout) {
  Service s;
  Reply r = s.login("alice", "correct horse");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  std::string access = r.body["data"]["accessToken"], refresh = r.body["data"]["refreshToken"];
  EXPECT_EQ(r.body["data"]["token"], access);  // the original GUI reads "token"
  ASSERT_TRUE(std::holds_alternative<Principal>(s.as(access, kPermPolicyCreate)));
  EXPECT_EQ(std::get<Principal>(s.as(access, kPermPolicyCreate)).subject, "alice");
  // A refresh token is not an access token, and the other way round.
  EXPECT_EQ(std::get<Reply>(s.as(refresh, kPermPolicyRead)).body["error"], "invalid token type");
  EXPECT_EQ(s.svc->refresh(json{{"refreshToken", access}}.dump()).body["error"], "invalid token type");
  // Refresh: a new access token.
  s.now += 30;
  Reply f = s.svc->refresh(json{{"refreshToken", refresh}}.dump());
  ASSERT_EQ(f.status, 200) << f.body.dump();
  std::string access2 = f.body["data"]["accessToken"];
  EXPECT_NE(access2, access);
  // The first access token expires after 60 s; the refreshed one lives on.
  s.now += 31;
  EXPECT_EQ(std::get<Reply>(s.as(access, kPermPolicyRead)).body["error"], "invalid or expired token");
  ASSERT_TRUE(std::holds_alternative<Principal>(s.as(access2, kPermPolicyRead)));
  // Logout with a bad body revokes nothing; with a good one, both tokens.
  std::string auth = "Bearer " + access2;
  Reply bad = s.svc->logout(&auth, R"({"refreshToken": 7})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["field"], "refreshToken");
  ASSERT_TRUE(std::holds_alternative<Principal>(s.as(access2, kPermPolicyRead)));
  EXPECT_EQ(s.svc->logout(&auth, json{{"refreshToken", refresh}}.dump()).status, 200);
  EXPECT_EQ(std::get<Reply>(s.as(access2, kPermPolicyRead)).body["error"], "token revoked");
  EXPECT_EQ(s.svc->refresh(json{{"refreshToken", refresh}}.dump()).body["error"], "token revoked");
  EXPECT_EQ(s.svc->logout(&auth, "").body["error"], "token revoked");
}

TEST(RestLoginService, RolesAndStaticTokensSideBySide) {
  Service s;
  Reply r = s.login("carol", "battery staple");
  ASSERT_EQ(r.status, 200);
  std::string access = r.body["data"]["accessToken"];
  EXPECT_TRUE(std::holds_alternative<Principal>(s.as(access, kPermIntentRead)));
  Reply denied = std::get<Reply>(s.as(access, kPermPolicyCreate));
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(denied.body["error"], "permission denied");
  EXPECT_EQ(std::get<Principal>(s.as(access, "")).role, kRoleReadOnly);
  // The token file's tokens keep working beside the hook.
  TokenTable t = parse_token_file("static-token-0123456789 bob *\n");
  std::string h = "Bearer static-token-0123456789";
  auto who = authorize(t, &h, kPermPolicyCreate, [&s](const std::string& p) { return s.svc->check_bearer(p); });
  ASSERT_TRUE(std::holds_alternative<Principal>(who));
  EXPECT_EQ(std::get<Principal>(who).subject, "bob");
  std::string junk = "Bearer not-a-token-at-all-0000";
  EXPECT_EQ(std::get<Reply>(authorize(t, &junk, kPermPolicyRead, [&s](const std::string& p) { return s.svc->check_bearer(p); }))
                .body["error"], "invalid or expired token");
}

TEST(RestLoginService, WrongPasswordsAreThrottledPerUserAndPerClient) {
  Service s;
  Reply wrong = s.login("alice", "wrong");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.body["error"], "invalid password");
  EXPECT_EQ(s.login("nobody", "whatever").body["error"], "invalid password");  // no "user not found"
  s.login("alice", "wrong", "10.0.0.2");
  s.login("alice", "wrong", "10.0.0.3");
  // Three failures of alice (from three addresses): even her right password is refused now.
  Reply held = s.login("alice", "correct horse", "10.0.0.4");
  EXPECT_EQ(held.status, 429);
  EXPECT_EQ(held.body["retryAfterSeconds"], 60);
  EXPECT_EQ(s.login("carol", "battery staple", "10.0.0.4").status, 200);  // another user is not held
  s.steady += std::chrono::seconds(60);
  EXPECT_EQ(s.login("alice", "correct horse", "10.0.0.4").status, 200);
  // Five failures from one address (unknown users included) hold that address, for any user.
  for (int i = 0; i < 5; ++i) s.login("nobody" + std::to_string(i), "x", "10.0.0.9");
  EXPECT_EQ(s.login("carol", "battery staple", "10.0.0.9").status, 429);
  EXPECT_EQ(s.login("carol", "battery staple", "10.0.0.8").status, 200);
  EXPECT_NE(std::find(s.refusals.begin(), s.refusals.end(), "login-throttled"), s.refusals.end());
}

TEST(RestLoginService, BadBodiesNameTheField) {
  Service s;
  struct Case {
    std::string body;
    int status;
    std::string field;
  } cases[] = {{"", 400, ""},  // the body as a whole: no "field" (envelope.hpp)
               {"[]", 400, ""},
               {R"({"username": 1, "password": "x"})", 400, "username"},
               {R"({"username": "alice", "password": ["x"]})", 400, "password"},
               {R"({"username": "alice"})", 422, "password"},
               {R"({"username": "", "password": "x"})", 422, "username"},
               {R"({"username": "alice", "username": "bob", "password": "x"})", 400, "username"},
               {"{\"username\": \"al\xffice\", \"password\": \"x\"}", 400, ""}};
  for (const auto& c : cases) {
    Reply r = s.svc->login("127.0.0.1", c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " " << r.body.dump();
    EXPECT_EQ(r.body.value("field", ""), c.field) << c.body << " " << r.body.dump();
  }
  EXPECT_EQ(s.svc->login("127.0.0.1", R"({"username": "alice"})").body["error"], "Username and password are required");
  // A body that is refused is not a failed login: nothing is counted against alice.
  EXPECT_EQ(s.login("alice", "correct horse").status, 200);
  EXPECT_EQ(s.svc->refresh("{}").body["field"], "refreshToken");
  EXPECT_EQ(s.svc->refresh(R"({"refreshToken": "a.b.c"})").status, 401);
  std::string none;
  EXPECT_EQ(s.svc->logout(nullptr, "").body["error"], "Missing Authorization header");
  std::string basic = "Basic abc";
  EXPECT_EQ(s.svc->logout(&basic, "").body["error"], "Invalid Authorization header format");
}

}  // namespace
}  // namespace c2c::rest
