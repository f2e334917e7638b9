#include "rest/login_users.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "rest/auth.hpp"
#include "rest/policy_body.hpp"

namespace c2c::rest {
namespace {

void sodium_ready() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium cannot be initialised");
}

}  // namespace

std::set<std::string> role_permissions(const std::string& role) {
  if (role == kRoleAdmin) return {all_permissions().begin(), all_permissions().end()};
  if (role == kRoleReadOnly) return {kPermPolicyRead, kPermIntentRead};
  throw std::invalid_argument("unknown role '" + role + "' (admin or read-only)");
}

UserTable parse_users_file(const std::string& text) {
  UserTable t;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument("line " + std::to_string(n) + ": " + why); };
    if (auto h = line.find('#'); h != std::string::npos && line.find_first_not_of(" \t") == h) continue;
    std::istringstream ls(line);
    std::string name, role, hash, extra;
    if (!(ls >> name)) continue;
    if (!(ls >> role >> hash)) bad("expected '<username> <role> <argon2id hash>'");
    if (ls >> extra) bad("unexpected '" + extra + "' after the hash");
    if (!is_valid_subject(name)) bad("username '" + name + "' is not a DNS-1123 label ([a-z0-9-], at most 63)");
    try {
      role_permissions(role);
    } catch (const std::invalid_argument& e) {
      bad(e.what());
    }
    if (hash.rfind("$argon2id$", 0) != 0) bad("the hash of '" + name + "' is not Argon2id ($argon2id$...)");
    if (t.users.count(name)) bad("user '" + name + "' given twice");
    t.users[name] = User{name, role, hash};
  }
  return t;
}

UserTable load_users_file(const std::string& path) {
  const std::string what = "users file " + path + " (--users-file)";
  const std::string text = read_secret_file(path, what);  // root-owned, 0600, a regular file
  try {
    return parse_users_file(text);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(what + " " + e.what());
  }
}

std::string hash_password(const std::string& password) {
  sodium_ready();
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0)
    throw std::runtime_error("crypto_pwhash_str failed (out of memory?)");
  return out;
}

bool password_matches(const std::string& hash, const std::string& password) {
  sodium_ready();
  return crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
}

}  // namespace c2c::rest
