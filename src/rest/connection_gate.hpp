// Admission of connections under the gateway's two connection limits (--max-connections,
// --max-connections-per-client): who is being served, by client address, and whether each
// connection is still waiting for a request head ("pending": a new connection, or a kept-alive one
// between requests) or has one in hand ("active"). Bookkeeping only: the eviction itself is the
// caller's callback (keep_alive_server.cpp marks the stream and shuts its socket's read side; the
// stream's own worker answers and closes it); unit-tested
// (tests/unit/rest_request_decoder_test.cpp).
//
// Why evict rather than only refuse: on loopback every local client is 127.0.0.1, so slow clients
// holding the per-address quota would have the gateway refuse every honest local client too.
// A new connection over a limit instead takes the place of the *oldest pending* connection of the
// same address (per-client limit) or of any address (total limit): a slow client only ever holds
// a place until someone else needs it, while a connection with a request in hand is never
// evicted. Only when every connection counted is active is the new one refused (429 / 503).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace c2c::rest {

class ConnectionGate {
 public:
  enum class Admit : uint8_t { Ok, OverClientLimit, OverTotalLimit };
  // Called, under the gate's lock (so the fd is still open), for a pending connection that makes
  // room for a new one, with the limit that made it go.
  using Evict = std::function<void(int fd, Admit why)>;
  ConnectionGate(size_t max_total, size_t max_per_client, Evict evict)
      : max_total_(max_total), max_per_client_(max_per_client), evict_(std::move(evict)) {}

  struct Ticket {
    Admit admit = Admit::Ok;
    uint64_t id = 0;  // for set_pending/leave when admitted
  };
  // A new connection (pending) from `client` on `fd`.
  Ticket enter(const std::string& client, int fd);
  // The connection has a request head in hand (false) or waits for the next one (true).
  void set_pending(uint64_t id, bool pending);
  // The connection is closed (a no-op for one evicted meanwhile). Before close(fd).
  void leave(uint64_t id);
  size_t total() const;

 private:
  struct Conn {
    std::string client;
    int fd;
    bool pending;
  };
  // The oldest pending connection (of `client`, or of anyone when null), evicted and forgotten.
  bool evict_oldest_pending(const std::string* client, Admit why);

  mutable std::mutex mu_;
  std::map<uint64_t, Conn> conns_;  // by id: ids grow, so the first pending one is the oldest
  std::map<std::string, size_t> by_client_;
  uint64_t next_id_ = 1;
  size_t max_total_, max_per_client_;
  Evict evict_;
};

}  // namespace c2c::rest
