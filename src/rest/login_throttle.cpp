#include "rest/login_throttle.hpp"

namespace c2c::rest {

std::optional<std::chrono::seconds> LoginThrottle::blocked(const std::string& key, Clock::time_point now) const {
  auto it = keys_.find(key);
  if (it == keys_.end() || it->second.failures < l_.max_failures) return std::nullopt;
  auto ends = it->second.since + l_.window;
  if (now >= ends) return std::nullopt;
  return std::chrono::ceil<std::chrono::seconds>(ends - now);
}

void LoginThrottle::failed(const std::string& key, Clock::time_point now) {
  auto it = keys_.find(key);
  if (it != keys_.end() && now >= it->second.since + l_.window) it->second = Entry{0, now};  // a new window
  if (it == keys_.end()) {
    if (keys_.size() >= l_.capacity) {
      for (auto e = keys_.begin(); e != keys_.end();) e = now >= e->second.since + l_.window ? keys_.erase(e) : std::next(e);
      if (keys_.size() >= l_.capacity) {
        auto oldest = keys_.begin();
        for (auto e = keys_.begin(); e != keys_.end(); ++e)
          if (e->second.since < oldest->second.since) oldest = e;
        keys_.erase(oldest);
      }
    }
    it = keys_.emplace(key, Entry{0, now}).first;
  }
  ++it->second.failures;
}

}  // namespace c2c::rest
