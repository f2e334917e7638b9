// The login's signed tokens (issue 47): JWT with ES256 (ECDSA P-256), signed and checked by
// libjwt (Debian's libjwt-dev), the key from --jwt-key (a PEM EC private key, root-owned 0600) or
// drawn at start (then every token dies with the process). Access tokens live
// --access-token-seconds (60, as the original's), refresh tokens --refresh-token-seconds (24 h).
//
// Checks, each a refusal with the original's words: the signature with ES256 only (libjwt would
// take the token's own "alg": an "HS256" token keyed with the public key, or "none", is refused
// here, not trusted), issuer, expiry ("invalid or expired token"), the claims present ("invalid
// token claims"), the type (a refresh token is no access token: "invalid token type"), and the
// revocation list ("token revoked").
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <variant>

namespace c2c::rest {

inline constexpr const char* kTokenIssuer = "claim2core-rest";
inline constexpr const char* kAccessToken = "access";
inline constexpr const char* kRefreshToken = "refresh";

struct TokenClaims {
  std::string subject;  // the username
  std::string role;
  std::string type;  // kAccessToken or kRefreshToken
  std::string id;    // "jti": what logout revokes
  int64_t issued_at = 0, expires_at = 0;  // Unix seconds
};

struct TokenRefusal {
  int status = 401;
  std::string message;  // the original's: "invalid or expired token", "invalid token type", ...
};

class TokenSigner {
 public:
  // From a PEM EC P-256 private key; throws std::runtime_error saying why.
  explicit TokenSigner(const std::string& private_pem);
  // A fresh P-256 key (OpenSSL's EVP_EC_gen).
  static TokenSigner generate();
  // Reads --jwt-key (root-owned, no group/other access, as the token file); throws naming it.
  static TokenSigner load(const std::string& path);

  std::string sign(const TokenClaims& c) const;
  // The claims of a token this signer made, of type `type`, valid at `now`, or the refusal.
  std::variant<TokenClaims, TokenRefusal> verify(const std::string& token, const std::string& type,
                                                 int64_t now) const;
  const std::string& public_pem() const { return public_pem_; }

 private:
  std::string private_pem_, public_pem_;
};

// Revoked token IDs until their expiry, at most `capacity`. When it is full of live entries, a
// revocation that does not fit revokes every token of that user issued up to now instead (its
// cut-off): logout never fails and nothing revoked is forgotten; the user's other sessions end
// too. Thread-safe.
class RevocationList {
 public:
  explicit RevocationList(size_t capacity) : capacity_(capacity) {}
  void revoke(const TokenClaims& c, int64_t now);
  bool revoked(const TokenClaims& c) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  size_t capacity_;
  std::map<std::string, int64_t> ids_;          // jti -> exp
  std::map<std::string, int64_t> user_cutoff_;  // user -> tokens issued at or before are revoked
};

// 16 random bytes in hex (getrandom through libsodium's randombytes_buf).
std::string random_token_id();

}  // namespace c2c::rest
