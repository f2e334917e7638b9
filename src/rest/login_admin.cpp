#include "rest/login_admin.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "rest/login_users.hpp"
#include "rest/policy_body.hpp"

namespace c2c::rest {

int add_user(const std::string& users_file, const std::string& name, const std::string& role, std::istream& password_in) {
  auto say = [](const std::string& m) {
    std::cerr << "claim2core-rest add-user: " << m << "\n";
    return 1;
  };
  if (!is_valid_subject(name)) return say("username '" + name + "' is not a DNS-1123 label ([a-z0-9-], at most 63)");
  try {
    role_permissions(role);
  } catch (const std::invalid_argument& e) {
    return say(std::string("--role: ") + e.what());
  }
  std::string password;
  std::getline(password_in, password);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.size() < kMinPasswordLength)
    return say("the password (read from stdin, one line) must have at least " + std::to_string(kMinPasswordLength) + " characters");
  // The same checks as the gateway's: a file it would refuse is refused here, before writing.
  if (::access(users_file.c_str(), F_OK) == 0) {
    try {
      if (load_users_file(users_file).users.count(name)) return say("user '" + name + "' is already in " + users_file);
    } catch (const std::exception& e) {
      return say(e.what());
    }
  }
  std::string line = name + " " + role + " " + hash_password(password) + "\n";
  int fd = ::open(users_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return say(users_file + ": " + std::strerror(errno));
  bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  int e = errno;
  ::close(fd);
  if (!written) return say(users_file + ": " + std::strerror(e));
  std::cerr << "claim2core-rest add-user: " << name << " (" << role << ") added to " << users_file
            << (::geteuid() == 0 ? "" : "; the gateway accepts the file only when root owns it") << "\n";
  return 0;
}

}  // namespace c2c::rest
