#include "rest/login_service.hpp"

#include <sys/stat.h>

#include <iostream>

#include "rest/gateway.hpp"

namespace c2c::rest {
namespace {

RequestError body_refusal(const std::string& field, const std::string& message) {
  return RequestError{400, field.empty() ? "body" : field, message, "body-field"};
}

std::variant<json, RequestError> object_body(const std::string& body, const DecodeLimits& l) {
  auto j = parse_json_body(body, l.max_json_depth);
  if (auto* e = std::get_if<JsonError>(&j)) return RequestError{400, e->field.empty() ? "body" : e->field, e->message, refusal_reason(e->kind)};
  if (!std::get<json>(j).is_object()) return body_refusal("", "must be a JSON object");
  return std::move(std::get<json>(j));
}

bool looks_like_jwt(const std::string& s) { return std::count(s.begin(), s.end(), '.') == 2; }

}  // namespace

std::variant<Credentials, RequestError> decode_credentials(const std::string& body, const DecodeLimits& l) {
  auto j = object_body(body, l);
  if (auto* e = std::get_if<RequestError>(&j)) return *e;
  Credentials c;
  for (auto [key, out] : {std::pair{"username", &c.username}, std::pair{"password", &c.password}}) {
    auto v = string_member(std::get<json>(j), key);
    if (!v.ok()) return body_refusal(v.error.field, v.error.message);
    *out = *v.value;
  }
  if (c.username.empty() || c.password.empty())
    return RequestError{422, c.username.empty() ? "username" : "password", "Username and password are required", "body-field"};
  return c;
}

std::variant<std::string, RequestError> decode_refresh_token(const std::string& body, const DecodeLimits& l,
                                                             bool required) {
  if (!required && body.find_first_not_of(" \t\r\n") == std::string::npos) return std::string();
  auto j = object_body(body, l);
  if (auto* e = std::get_if<RequestError>(&j)) return *e;
  auto v = string_member(std::get<json>(j), "refreshToken");
  if (!v.ok()) return body_refusal(v.error.field, v.error.message);
  if (required && v.value->empty()) return body_refusal("refreshToken", "is required");
  return *v.value;
}

LoginService::LoginService(UserTable users, std::string users_file, TokenSigner signer, LoginOptions o)
    : users_file_(std::move(users_file)),
      users_(std::make_shared<const UserTable>(std::move(users))),
      signer_(std::move(signer)),
      o_(std::move(o)),
      revoked_(o_.max_revoked),
      by_user_(o_.per_user),
      by_client_(o_.per_client) {
  struct stat st{};
  if (!users_file_.empty() && ::stat(users_file_.c_str(), &st) == 0) {
    users_mtime_ = st.st_mtim;
    users_ino_ = st.st_ino;
    users_size_ = st.st_size;
  }
}

std::shared_ptr<const UserTable> LoginService::users() {
  std::lock_guard<std::mutex> l(users_mu_);
  struct stat st{};
  if (users_file_.empty() || ::stat(users_file_.c_str(), &st) != 0) return users_;
  if (st.st_ino == users_ino_ && st.st_size == users_size_ && st.st_mtim.tv_sec == users_mtime_.tv_sec &&
      st.st_mtim.tv_nsec == users_mtime_.tv_nsec)
    return users_;
  users_mtime_ = st.st_mtim;
  users_ino_ = st.st_ino;
  users_size_ = st.st_size;
  try {
    users_ = std::make_shared<const UserTable>(load_users_file(users_file_));
  } catch (const std::exception& e) {
    std::cerr << "claim2core-rest: keeping the users read before: " << e.what() << "\n";
  }
  return users_;
}

Reply LoginService::refuse(const RequestError& e) const {
  if (o_.on_refusal) o_.on_refusal(e.reason);
  // The original's own sentence for an empty username or password, not prefixed as a bad body.
  if (e.status == 422) return fail(e.status, e.message, e.field);
  return refusal_reply(e);
}

Reply LoginService::refused(int status, const std::string& message, const std::string& reason) const {
  if (o_.on_refusal) o_.on_refusal(reason);
  return fail(status, message);
}

Reply LoginService::count_auth(Reply r) const {
  if (o_.on_refusal) o_.on_refusal("auth");
  return r;
}

Reply LoginService::tokens_for(const User& u, const std::string& refresh_token) {
  int64_t now = o_.now();
  TokenClaims access{u.name, u.role, kAccessToken, random_token_id(), now, now + o_.access_ttl.count()};
  std::string at = signer_.sign(access);
  std::string rt = refresh_token;
  if (rt.empty()) rt = signer_.sign(TokenClaims{u.name, u.role, kRefreshToken, random_token_id(), now, now + o_.refresh_ttl.count()});
  return ok(json{{"token", at},
                 {"accessToken", at},
                 {"refreshToken", rt},
                 {"tokenType", "Bearer"},
                 {"expiresIn", o_.access_ttl.count()},
                 {"username", u.name},
                 {"role", u.role}},
            o_.clock());
}

Reply LoginService::login(const std::string& client, const std::string& body) {
  auto c = decode_credentials(body, o_.limits);
  if (auto* e = std::get_if<RequestError>(&c)) return refuse(*e);
  const auto& [name, password] = std::get<Credentials>(c);
  auto table = users();
  auto found = table->users.find(name);
  const bool known = found != table->users.end();
  {
    std::lock_guard<std::mutex> l(throttle_mu_);
    auto now = o_.steady();
    auto wait = by_client_.blocked(client, now);
    if (!wait && known) wait = by_user_.blocked(name, now);
    if (wait) {
      Reply r = refused(429, "too many failed logins; retry in " + std::to_string(wait->count()) + " s", "login-throttled");
      r.body["retryAfterSeconds"] = wait->count();
      return r;
    }
  }
  std::call_once(dummy_once_, [this] { dummy_hash_ = hash_password(random_token_id()); });
  bool matches;
  {
    hashing_.acquire();
    matches = password_matches(known ? found->second.hash : dummy_hash_, password);
    hashing_.release();
  }
  if (!matches || !known) {
    std::lock_guard<std::mutex> l(throttle_mu_);
    auto now = o_.steady();
    by_client_.failed(client, now);
    if (known) by_user_.failed(name, now);  // unknown names are not counted: they could fill the table
    return refused(401, "invalid password", "login");
  }
  {
    std::lock_guard<std::mutex> l(throttle_mu_);
    by_user_.forget(name);
  }
  return tokens_for(found->second, "");
}

std::variant<TokenClaims, Reply> LoginService::valid(const std::string& token, const std::string& type) const {
  // Not counted here: the caller counts (Gateway::caller for the bearer hook, else count_auth).
  auto v = signer_.verify(token, type, o_.now());
  if (auto* r = std::get_if<TokenRefusal>(&v)) return fail(r->status, r->message);
  const auto& c = std::get<TokenClaims>(v);
  if (revoked_.revoked(c)) return fail(401, "token revoked");
  return c;
}

Reply LoginService::refresh(const std::string& body) {
  auto t = decode_refresh_token(body, o_.limits, true);
  if (auto* e = std::get_if<RequestError>(&t)) return refuse(*e);
  auto v = valid(std::get<std::string>(t), kRefreshToken);
  if (auto* r = std::get_if<Reply>(&v)) return count_auth(*r);
  const auto& c = std::get<TokenClaims>(v);
  auto table = users();
  auto found = table->users.find(c.subject);
  if (found == table->users.end()) return refused(401, "user not found", "auth");
  return tokens_for(found->second, std::get<std::string>(t));
}

Reply LoginService::logout(Auth a, const std::string& body) {
  if (!a || a->empty()) return refused(401, "Missing Authorization header", "auth");
  const std::string prefix = "Bearer ";
  if (a->size() <= prefix.size() || a->compare(0, prefix.size(), prefix) != 0)
    return refused(401, "Invalid Authorization header format", "auth");
  auto t = decode_refresh_token(body, o_.limits, false);
  if (auto* e = std::get_if<RequestError>(&t)) return refuse(*e);
  auto access = valid(a->substr(prefix.size()), kAccessToken);
  if (auto* r = std::get_if<Reply>(&access)) return count_auth(*r);
  const auto& ac = std::get<TokenClaims>(access);
  std::optional<TokenClaims> rc;
  if (!std::get<std::string>(t).empty()) {
    auto v = valid(std::get<std::string>(t), kRefreshToken);
    if (auto* r = std::get_if<Reply>(&v)) {
      Reply named = *r;
      named.body["field"] = "refreshToken";
      return count_auth(named);
    }
    rc = std::get<TokenClaims>(v);
    if (rc->subject != ac.subject) return refused(403, "permission denied", "auth");  // another user's session
  }
  int64_t now = o_.now();
  revoked_.revoke(ac, now);
  if (rc) revoked_.revoke(*rc, now);
  return ok(json::object(), o_.clock());
}

std::optional<std::variant<Token, Reply>> LoginService::check_bearer(const std::string& presented) const {
  if (!looks_like_jwt(presented)) return std::nullopt;
  auto v = valid(presented, kAccessToken);
  if (auto* r = std::get_if<Reply>(&v)) return *r;
  const auto& c = std::get<TokenClaims>(v);
  std::set<std::string> perms;
  try {
    perms = role_permissions(c.role);
  } catch (const std::invalid_argument&) {
    return fail(401, "invalid token claims");
  }
  return Token{"", c.subject, perms, c.role};
}

}  // namespace c2c::rest
