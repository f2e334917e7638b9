#include "rest/auth.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "rest/policy_body.hpp"

namespace c2c::rest {
namespace {

// Compares without an early exit, so the time a refusal takes says nothing about the prefix.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace

const std::vector<std::string>& all_permissions() {
  static const std::vector<std::string> k = {kPermPolicyCreate, kPermPolicyRead, kPermPolicyUpdate,
                                             kPermPolicyDelete, kPermIntentRead, kPermIntentDelete};
  return k;
}

TokenTable parse_token_file(const std::string& text) {
  TokenTable t;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    auto bad = [&](const std::string& why) { throw std::invalid_argument("line " + std::to_string(n) + ": " + why); };
    if (auto h = line.find('#'); h != std::string::npos) line.erase(h);
    std::istringstream ls(line);
    std::string token, subject, perms, extra;
    if (!(ls >> token)) continue;
    if (!(ls >> subject >> perms)) bad("expected '<token> <subject> <permission>[,<permission>...]'");
    if (ls >> extra) bad("unexpected '" + extra + "' after the permissions");
    if (token.size() < kMinTokenLength) bad("token shorter than " + std::to_string(kMinTokenLength) + " characters");
    if (!is_valid_subject(subject)) bad("subject '" + subject + "' is not a DNS-1123 label ([a-z0-9-], at most 63)");
    for (const auto& other : t.tokens)
      if (other.token == token) bad("token given twice");
    Token tok{token, subject, {}, ""};
    std::istringstream ps(perms);
    for (std::string p; std::getline(ps, p, ',');) {
      if (p == "*") {
        tok.permissions.insert(all_permissions().begin(), all_permissions().end());
        continue;
      }
      bool known = false;
      for (const auto& k : all_permissions()) known = known || k == p;
      if (!known) bad("unknown permission '" + p + "'");
      tok.permissions.insert(p);
    }
    t.tokens.push_back(std::move(tok));
  }
  return t;
}

std::optional<std::string> token_file_problem(const struct stat& st) {
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (st.st_uid != 0) return "is not owned by root (uid " + std::to_string(st.st_uid) + ")";
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("is accessible by group or others (mode ") + mode + "; chmod 600 it)";
  }
  return std::nullopt;
}

std::string read_secret_file(const std::string& path, const std::string& what) {
  // O_NONBLOCK: opening a FIFO for reading blocks until a writer opens it, so a FIFO given here
  // hung the start (issue 42); the open now returns at once and fstat refuses anything that is not
  // a regular file (FIFO, device, socket, directory) before a byte is read. O_NOFOLLOW refuses a
  // symlink. O_NOCTTY: a terminal given here must not become the gateway's.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw std::runtime_error(what + ": " + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw std::runtime_error(what + ": " + std::strerror(e));
  }
  if (auto p = token_file_problem(st)) {
    ::close(fd);
    throw std::runtime_error(what + " " + *p);
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
      if (text.size() > kMaxTokenFileBytes) {
        ::close(fd);
        throw std::runtime_error(what + " is larger than " + std::to_string(kMaxTokenFileBytes) + " bytes");
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw std::runtime_error(what + ": " + std::strerror(e));
    }
    break;
  }
  ::close(fd);
  return text;
}

TokenTable load_token_file(const std::string& path) {
  const std::string what = "token file " + path + " (--token-file)";
  const std::string text = read_secret_file(path, what);
  try {
    return parse_token_file(text);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(what + " " + e.what());
  }
}

std::variant<Principal, Reply> authorize(const TokenTable& t, const std::string* authorization,
                                         const std::string& permission, const BearerCheck& extra) {
  if (!authorization || authorization->empty()) return fail(401, "Missing Authorization header");
  const std::string prefix = "Bearer ";
  if (authorization->size() <= prefix.size() || authorization->compare(0, prefix.size(), prefix) != 0)
    return fail(401, "Invalid Authorization header format");
  std::string presented = authorization->substr(prefix.size());
  const Token* found = nullptr;
  for (const auto& tok : t.tokens)
    if (same_secret(presented, tok.token)) found = &tok;
  Token signed_in;
  if (!found && extra) {
    if (auto v = extra(presented)) {
      if (auto* r = std::get_if<Reply>(&*v)) return *r;
      signed_in = std::get<Token>(*v);
      found = &signed_in;
    }
  }
  if (!found) return fail(401, "invalid or expired token");
  Principal who{found->subject, found->role, found->permissions};
  if (permission.empty()) return who;  // GET /api/v1/users/self: any caller
  if (!found->permissions.count(permission)) return fail(403, "permission denied");
  return who;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (inet_pton(AF_INET6, host.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return false;
}

std::optional<std::string> bind_problem(const std::string& host, bool tls) {
  if (is_loopback_host(host) || tls) return std::nullopt;
  return "--listen " + host + " is beyond loopback: TLS is required there (--tls-cert and --tls-key), "
         "as claim2cored refuses TCP without mutual TLS";
}

}  // namespace c2c::rest
