// Brute force against the password login, bounded (issue 47): failed logins are counted per
// client address and per username in one table of at most `capacity` keys; a key with
// `max_failures` failures inside `window` is refused (429) until the window that began with its
// first failure ends. Pure (the caller passes the time); not thread-safe (the caller locks).
//
// The table is bounded: when it is full, expired keys go first, then the key whose window began
// longest ago. Only addresses can flood it (usernames are counted only for users the users file
// has), so an attacker cycling through many addresses can reset an address's count, never a
// user's: the per-user bound is the one that always holds.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace c2c::rest {

struct ThrottleLimits {
  size_t max_failures = 5;
  std::chrono::seconds window{60};
  size_t capacity = 4096;
};

class LoginThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LoginThrottle(ThrottleLimits l) : l_(l) {}
  // How long `key` is still refused, or nullopt when it may try.
  std::optional<std::chrono::seconds> blocked(const std::string& key, Clock::time_point now) const;
  void failed(const std::string& key, Clock::time_point now);
  void forget(const std::string& key) { keys_.erase(key); }
  size_t size() const { return keys_.size(); }

 private:
  struct Entry {
    size_t failures = 0;
    Clock::time_point since;
  };
  ThrottleLimits l_;
  std::map<std::string, Entry> keys_;
};

}  // namespace c2c::rest
