#include "rest/login_tokens.hpp"

#include <fcntl.h>
#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "rest/auth.hpp"

namespace c2c::rest {
namespace {

struct JwtFree {
  void operator()(jwt_t* j) const { jwt_free(j); }
};
using JwtPtr = std::unique_ptr<jwt_t, JwtFree>;

std::string bio_text(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return std::string(data, static_cast<size_t>(n));
}

// The public key of a PEM private key, as PEM; throws when it is no EC P-256 key.
std::string public_of(const std::string& private_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size())),
                                               BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr),
                                                         EVP_PKEY_free);
  if (!key) throw std::runtime_error("not a PEM private key");
  char group[64] = {0};
  size_t len = 0;
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC ||
      !EVP_PKEY_get_group_name(key.get(), group, sizeof group, &len) || std::string(group) != "prime256v1")
    throw std::runtime_error("not an EC P-256 key (ES256 needs one: openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)");
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  if (!PEM_write_bio_PUBKEY(out.get(), key.get())) throw std::runtime_error("cannot write the public key");
  return bio_text(out.get());
}

}  // namespace

std::string random_token_id() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium cannot be initialised");
  unsigned char b[16];
  randombytes_buf(b, sizeof b);
  char hex[33];
  sodium_bin2hex(hex, sizeof hex, b, sizeof b);
  return hex;
}

TokenSigner::TokenSigner(const std::string& private_pem) : private_pem_(private_pem), public_pem_(public_of(private_pem)) {}

TokenSigner TokenSigner::generate() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) throw std::runtime_error("cannot draw an EC P-256 key");
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  if (!PEM_write_bio_PrivateKey(out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr))
    throw std::runtime_error("cannot write the drawn key");
  return TokenSigner(bio_text(out.get()));
}

TokenSigner TokenSigner::load(const std::string& path) {
  const std::string what = "key file " + path + " (--jwt-key)";
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw std::runtime_error(what + ": " + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || token_file_problem(st)) {
    auto p = token_file_problem(st);
    ::close(fd);
    throw std::runtime_error(what + " " + (p ? *p : std::string("cannot be examined")));
  }
  std::string text(static_cast<size_t>(std::min<off_t>(st.st_size, 64 * 1024)), '\0');
  ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (n < 0) throw std::runtime_error(what + ": " + std::strerror(errno));
  text.resize(static_cast<size_t>(n));
  try {
    return TokenSigner(text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
}

std::string TokenSigner::sign(const TokenClaims& c) const {
  jwt_t* raw = nullptr;
  if (jwt_new(&raw) != 0) throw std::runtime_error("jwt_new failed");
  JwtPtr j(raw);
  bool okay = jwt_add_grant(j.get(), "iss", kTokenIssuer) == 0 && jwt_add_grant(j.get(), "sub", c.subject.c_str()) == 0 &&
              jwt_add_grant(j.get(), "role", c.role.c_str()) == 0 && jwt_add_grant(j.get(), "typ", c.type.c_str()) == 0 &&
              jwt_add_grant(j.get(), "jti", c.id.c_str()) == 0 && jwt_add_grant_int(j.get(), "iat", c.issued_at) == 0 &&
              jwt_add_grant_int(j.get(), "exp", c.expires_at) == 0 &&
              jwt_set_alg(j.get(), JWT_ALG_ES256, reinterpret_cast<const unsigned char*>(private_pem_.data()),
                          static_cast<int>(private_pem_.size())) == 0;
  if (!okay) throw std::runtime_error("cannot build the token");
  char* s = jwt_encode_str(j.get());
  if (!s) throw std::runtime_error("jwt_encode_str failed");
  std::string out(s);
  std::free(s);  // libjwt 1.10 allocates it with malloc (it has no jwt_free_str yet)
  return out;
}

std::variant<TokenClaims, TokenRefusal> TokenSigner::verify(const std::string& token, const std::string& type,
                                                            int64_t now) const {
  const TokenRefusal invalid{401, "invalid or expired token"};
  jwt_t* raw = nullptr;
  if (jwt_decode(&raw, token.c_str(), reinterpret_cast<const unsigned char*>(public_pem_.data()),
                 static_cast<int>(public_pem_.size())) != 0)
    return invalid;
  JwtPtr j(raw);
  // libjwt checks the signature with the algorithm the token names: only ES256 is ours.
  if (jwt_get_alg(j.get()) != JWT_ALG_ES256) return invalid;
  auto str = [&](const char* k) {
    const char* v = jwt_get_grant(j.get(), k);
    return v ? std::string(v) : std::string();
  };
  TokenClaims c{str("sub"), str("role"), str("typ"), str("jti"), jwt_get_grant_int(j.get(), "iat"),
                jwt_get_grant_int(j.get(), "exp")};
  if (str("iss") != kTokenIssuer) return invalid;
  if (c.expires_at <= now) return invalid;
  if (c.subject.empty() || c.role.empty() || c.id.empty() || c.issued_at <= 0) return TokenRefusal{401, "invalid token claims"};
  if (c.type != type) return TokenRefusal{401, "invalid token type"};
  return c;
}

void RevocationList::revoke(const TokenClaims& c, int64_t now) {
  std::lock_guard<std::mutex> l(mu_);
  if (ids_.size() >= capacity_)
    for (auto it = ids_.begin(); it != ids_.end();) it = it->second <= now ? ids_.erase(it) : std::next(it);
  if (ids_.size() < capacity_) {
    ids_[c.id] = c.expires_at;
    return;
  }
  // Full of live entries: revoke everything this user was issued so far (bounded by the users).
  auto& cut = user_cutoff_[c.subject];
  cut = std::max(cut, now);
}

bool RevocationList::revoked(const TokenClaims& c) const {
  std::lock_guard<std::mutex> l(mu_);
  if (ids_.count(c.id)) return true;
  auto it = user_cutoff_.find(c.subject);
  return it != user_cutoff_.end() && c.issued_at <= it->second;
}

size_t RevocationList::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return ids_.size();
}

}  // namespace c2c::rest
