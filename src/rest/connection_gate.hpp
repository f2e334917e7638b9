// Admission of connections under the gateway's two connection limits (--max-connections,
// --max-connections-per-client): who is being served, by client address. Pure bookkeeping (no
// sockets), used by keep_alive_server.cpp and unit-tested (tests/unit/rest_request_decoder_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace c2c::rest {

class ConnectionGate {
 public:
  enum class Admit : uint8_t { Ok, OverClientLimit, OverTotalLimit };
  ConnectionGate(size_t max_total, size_t max_per_client) : max_total_(max_total), max_per_client_(max_per_client) {}
  Admit enter(const std::string& client);
  void leave(const std::string& client);
  size_t total() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, size_t> by_client_;
  size_t total_ = 0;
  size_t max_total_, max_per_client_;
};

}  // namespace c2c::rest
