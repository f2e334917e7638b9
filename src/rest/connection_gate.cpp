#include "rest/connection_gate.hpp"

namespace c2c::rest {

ConnectionGate::Admit ConnectionGate::enter(const std::string& client) {
  std::lock_guard<std::mutex> l(mu_);
  size_t& mine = by_client_[client];
  if (mine >= max_per_client_) {
    if (mine == 0) by_client_.erase(client);
    return Admit::OverClientLimit;
  }
  if (total_ >= max_total_) {
    if (mine == 0) by_client_.erase(client);
    return Admit::OverTotalLimit;
  }
  ++mine;
  ++total_;
  return Admit::Ok;
}

void ConnectionGate::leave(const std::string& client) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return;
  if (--it->second == 0) by_client_.erase(it);
  --total_;
}

size_t ConnectionGate::total() const {
  std::lock_guard<std::mutex> l(mu_);
  return total_;
}

}  // namespace c2c::rest
