#include "rest/connection_gate.hpp"

namespace c2c::rest {

bool ConnectionGate::evict_oldest_pending(const std::string* client, Admit why) {
  for (auto it = conns_.begin(); it != conns_.end(); ++it) {
    if (!it->second.pending || (client && it->second.client != *client)) continue;
    if (evict_) evict_(it->second.fd, why);
    if (--by_client_[it->second.client] == 0) by_client_.erase(it->second.client);
    conns_.erase(it);
    return true;
  }
  return false;
}

ConnectionGate::Ticket ConnectionGate::enter(const std::string& client, int fd) {
  std::lock_guard<std::mutex> l(mu_);
  auto mine = by_client_.find(client);
  if (mine != by_client_.end() && mine->second >= max_per_client_ &&
      !evict_oldest_pending(&client, Admit::OverClientLimit))
    return {Admit::OverClientLimit, 0};
  if (conns_.size() >= max_total_ && !evict_oldest_pending(nullptr, Admit::OverTotalLimit))
    return {Admit::OverTotalLimit, 0};
  uint64_t id = next_id_++;
  conns_.emplace(id, Conn{client, fd, true});
  ++by_client_[client];
  return {Admit::Ok, id};
}

void ConnectionGate::set_pending(uint64_t id, bool pending) {
  std::lock_guard<std::mutex> l(mu_);
  if (auto it = conns_.find(id); it != conns_.end()) it->second.pending = pending;
}

void ConnectionGate::leave(uint64_t id) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = conns_.find(id);
  if (it == conns_.end()) return;  // evicted meanwhile: already forgotten
  if (--by_client_[it->second.client] == 0) by_client_.erase(it->second.client);
  conns_.erase(it);
}

size_t ConnectionGate::total() const {
  std::lock_guard<std::mutex> l(mu_);
  return conns_.size();
}

}  // namespace c2c::rest
