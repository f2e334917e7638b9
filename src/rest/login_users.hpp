// The users of the password login (--users-file; issue 47): who may log in, their role, and their
// password's hash. Pure parsing and checking; the file's loading as auth.hpp loads the token file.
//
//     # <username> <role> <Argon2id hash from crypto_pwhash_str>
//     alice admin $argon2id$v=19$m=65536,t=2,p=1$...$...
//
// * The hash is libsodium's crypto_pwhash_str (Argon2id, salted, its own parameters inside the
//   string) and is checked with crypto_pwhash_str_verify: no hand-written crypto. `claim2core-rest
//   add-user` writes such a line (the password read from stdin).
// * Roles: "admin" (every permission) or "read-only" (node_scheduling_policy.read,
//   node_scheduling_intent.read), the two the original's GUI needs.
// * A username is a DNS-1123 label, as a token file's subject: it owns the policies it creates.
// * The file must be a regular file owned by root without group/other access (auth.hpp's rule):
//   a hash others can read can be cracked offline, and a file others can write lets them in.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

namespace c2c::rest {

inline constexpr const char* kRoleAdmin = "admin";
inline constexpr const char* kRoleReadOnly = "read-only";

struct User {
  std::string name;
  std::string role;
  std::string hash;  // "$argon2id$..."
};

struct UserTable {
  std::map<std::string, User> users;
};

// The permissions a role grants; throws std::invalid_argument for an unknown role.
std::set<std::string> role_permissions(const std::string& role);

// Parses the file's text; throws std::invalid_argument "line N: ..." (unknown role, a username
// that is not a DNS-1123 label or is given twice, a hash that is not Argon2id).
UserTable parse_users_file(const std::string& text);
// Opens (no symlink, no FIFO), checks ownership and mode, parses; throws std::runtime_error
// naming --users-file and the path.
UserTable load_users_file(const std::string& path);

// crypto_pwhash_str with libsodium's interactive limits (Argon2id, 64 MiB, 2 passes); throws
// std::runtime_error when libsodium fails (out of memory).
std::string hash_password(const std::string& password);
// crypto_pwhash_str_verify: true only when `password` matches `hash`.
bool password_matches(const std::string& hash, const std::string& password);

}  // namespace c2c::rest
