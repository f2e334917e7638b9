// `claim2core-rest add-user`: appends a user to the users file with the password read from stdin
// (login_users.hpp). Creates the file (root, 0600) when absent; refuses a file the gateway would
// refuse, a user already there, a password shorter than kMinPasswordLength.
#pragma once

#include <istream>
#include <string>

namespace c2c::rest {

inline constexpr size_t kMinPasswordLength = 8;

// Returns the exit status, after saying what it did or why not on stderr.
int add_user(const std::string& users_file, const std::string& name, const std::string& role, std::istream& password_in);

}  // namespace c2c::rest
