// The password login of issue 47: POST /api/v1/auth/login, /auth/refresh, /auth/logout, and the
// check of a signed access token on every other endpoint (Gateway's bearer hook), beside the
// token file's static tokens, which keep working. On only with --users-file.
//
//   login   {"username","password"} -> data {token, accessToken, refreshToken, tokenType, expiresIn}
//           (token = accessToken: the original GUI reads "token"); 422 "Username and password are
//           required"; 401 "invalid password" for a wrong password *and* an unknown user (the
//           original says "user not found" for the latter, which tells a guesser which names
//           exist; an unknown user costs the same Argon2id check); 429 after too many failures
//           of the client's address or the user's name (login_throttle.hpp), Retry-After set.
//   refresh {"refreshToken"} -> a new access token for the user as the users file says now
//           (a removed user gets 401 "user not found", a changed role its new permissions).
//   logout  Authorization: the access token; optional {"refreshToken"} of the same user: both
//           revoked (login_tokens.hpp's bounded list); every check passes before anything is
//           revoked, so a bad body revokes nothing.
// The users file is read again when it changes (add-user needs no restart); a file that has
// become unacceptable keeps the last good table and is reported on stderr.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <variant>

#include "rest/auth.hpp"
#include "rest/envelope.hpp"
#include "rest/login_throttle.hpp"
#include "rest/login_tokens.hpp"
#include "rest/login_users.hpp"
#include "rest/request_decoder.hpp"

namespace c2c::rest {

struct LoginOptions {
  std::chrono::seconds access_ttl{60};     // --access-token-seconds (the original's: 1 minute)
  std::chrono::seconds refresh_ttl{86400};  // --refresh-token-seconds (the original's: 24 h)
  ThrottleLimits per_user{5, std::chrono::seconds(60), 4096};     // --login-max-failures
  ThrottleLimits per_client{20, std::chrono::seconds(60), 4096};  // --login-max-failures-per-client
  size_t max_revoked = 4096;                                      // --max-revoked-tokens
  DecodeLimits limits;
  std::function<int64_t()> now;                                   // Unix seconds (tokens)
  std::function<std::chrono::steady_clock::time_point()> steady;  // the throttle's windows
  std::function<std::chrono::system_clock::time_point()> clock;   // the envelopes' timestamp
  std::function<void(const std::string& reason)> on_refusal;      // claim2core_rest_refusals_total
};

struct Credentials {
  std::string username, password;
};
// The login body, or the refusal naming the field (400 bad body, 422 empty username/password).
std::variant<Credentials, RequestError> decode_credentials(const std::string& body, const DecodeLimits& l);
// {"refreshToken": "..."}: required for refresh; for logout optional (an empty body: "").
std::variant<std::string, RequestError> decode_refresh_token(const std::string& body, const DecodeLimits& l,
                                                             bool required);

class LoginService {
 public:
  // `users_file` is read again when it changes ("" : `users` for good, for tests).
  LoginService(UserTable users, std::string users_file, TokenSigner signer, LoginOptions o);

  using Auth = const std::string*;
  void set_on_refusal(std::function<void(const std::string&)> f) { o_.on_refusal = std::move(f); }
  Reply login(const std::string& client, const std::string& body);
  Reply refresh(const std::string& body);
  Reply logout(Auth a, const std::string& body);
  // Gateway's bearer hook: nullopt when `presented` is no token of ours, else the caller or the
  // refusal ("token revoked", "invalid token type", ...).
  std::optional<std::variant<Token, Reply>> check_bearer(const std::string& presented) const;

 private:
  std::shared_ptr<const UserTable> users();
  Reply refuse(const RequestError& e) const;
  Reply refused(int status, const std::string& message, const std::string& reason) const;
  Reply count_auth(Reply r) const;  // a token refusal, counted as "auth"
  Reply tokens_for(const User& u, const std::string& refresh_token);
  // An access or refresh token of ours (type), not revoked, or the 401.
  std::variant<TokenClaims, Reply> valid(const std::string& token, const std::string& type) const;

  std::string users_file_;
  std::mutex users_mu_;
  std::shared_ptr<const UserTable> users_;
  struct timespec users_mtime_{};
  ino_t users_ino_ = 0;
  off_t users_size_ = 0;
  TokenSigner signer_;
  LoginOptions o_;
  RevocationList revoked_;
  std::mutex throttle_mu_;
  LoginThrottle by_user_, by_client_;
  // Argon2id takes 64 MiB and ~0.1 s a check: at most two at once, whatever the worker count.
  std::counting_semaphore<2> hashing_{2};
  std::once_flag dummy_once_;
  std::string dummy_hash_;  // checked for an unknown user, so it costs what a known one does
};

}  // namespace c2c::rest
