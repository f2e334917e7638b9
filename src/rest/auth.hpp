// Who may call the gateway, and from where (src/rest/README.md "Auth").
//
// * Bearer tokens come from a token file, one token a line:
//       <token> <subject> <permission>[,<permission>...]      (# comments, blank lines)
//   permissions are the original's keys (node_scheduling_policy.create|read|update|delete,
//   node_scheduling_intent.read|delete) or "*" for all. The subject (a DNS-1123 label) owns
//   the policies its tokens create ("self").
// * The file must be a regular file owned by root and not readable or writable by group or
//   others (as ssh refuses a readable key): a token anyone on the node can read is no secret.
// * Bound beyond loopback, the gateway needs TLS (as claim2cored refuses TCP without mTLS).
// Every refusal is the original's 401/403 message.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "rest/envelope.hpp"

namespace c2c::rest {

inline constexpr const char* kPermPolicyCreate = "node_scheduling_policy.create";
inline constexpr const char* kPermPolicyRead = "node_scheduling_policy.read";
inline constexpr const char* kPermPolicyUpdate = "node_scheduling_policy.update";
inline constexpr const char* kPermPolicyDelete = "node_scheduling_policy.delete";
inline constexpr const char* kPermIntentRead = "node_scheduling_intent.read";
inline constexpr const char* kPermIntentDelete = "node_scheduling_intent.delete";
const std::vector<std::string>& all_permissions();

inline constexpr size_t kMinTokenLength = 16;
// A token file is a few lines; one larger than this is refused rather than read into memory.
inline constexpr size_t kMaxTokenFileBytes = 1 << 20;

struct Token {
  std::string token;
  std::string subject;
  std::set<std::string> permissions;
  std::string role;  // a login's role (login_users.hpp); "" for the token file's tokens
};

struct TokenTable {
  std::vector<Token> tokens;
};

// Parses the token file's text; throws std::invalid_argument "line N: ..." on a bad line
// (unknown permission, short token, token given twice, bad subject).
TokenTable parse_token_file(const std::string& text);
// Why a token file with this stat must not be used, or nullopt.
std::optional<std::string> token_file_problem(const struct stat& st);
// Opens (without following a symlink and without blocking: a FIFO is refused, not waited on),
// checks and parses; throws std::runtime_error naming the flag and the path ("--token-file P ...").
// The text of a secret file (tokens, users): a regular file owned by root, mode 0600, at most
// kMaxTokenFileBytes; anything else (a FIFO, a symlink, a group-readable file) throws, naming `what`.
std::string read_secret_file(const std::string& path, const std::string& what);
TokenTable load_token_file(const std::string& path);

struct Principal {
  std::string subject;
  std::string role;
  std::set<std::string> permissions;
};
// A second kind of bearer token beside the file's (the login's signed tokens, login_service.hpp):
// nullopt when the presented token is none of its kind, else the token's holder or the refusal.
using BearerCheck = std::function<std::optional<std::variant<Token, Reply>>(const std::string& presented)>;
// The caller of a request with this Authorization header (nullptr: none), if its token holds
// `permission` ("" : any authenticated caller); else the 401/403 reply. Tokens of the file are
// tried first, then `extra` (when set).
std::variant<Principal, Reply> authorize(const TokenTable& t, const std::string* authorization,
                                         const std::string& permission, const BearerCheck& extra = {});

bool is_loopback_host(const std::string& host);
// Why the gateway must not listen on host (without TLS when tls is false), or nullopt.
std::optional<std::string> bind_problem(const std::string& host, bool tls);

}  // namespace c2c::rest
