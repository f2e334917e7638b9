// The gateway's plain-HTTP server: httplib::Server with its own connection handling, for two
// reasons.
//
// Latency: httplib 0.11 (Debian 12's libcpp-httplib0.11) waits for the next request on a
// kept-alive connection by polling 10 ms and then sleeping 1 ms, over and over. A request that
// arrives during the sleep waits for it to end (up to ~1.1 ms; about one request in ten when
// requests are more than 10 ms apart, as a script or the GUI makes them), and every idle connection
// wakes the gateway ~90 times a second. This server waits in poll(2) until the request arrives (in
// slices, so stop() still ends idle connections promptly).
//
// Slow clients (issue 42): httplib serves a connection on one worker thread from its pool and
// bounds only each recv(2) (set_read_timeout), so 16 connections dripping a header byte every few
// seconds held all 16 workers and the gateway answered nobody. Here every connection is bounded:
//   * the request head (request line + headers) must arrive whole within `header_timeout` of the
//     connection's accept (first request) or of its first byte (a kept-alive connection's next
//     request), and be at most `max_header_bytes`; the body within `body_timeout` of the head;
//     a late head is answered 408 and the connection closed;
//   * at most `max_connections_per_client` connections from one client address and
//     `max_connections` in all are served at once; one more takes the place of the oldest one
//     still waiting for a request head (which is answered 429 / 503 and closed), or, when every
//     one has a request in hand, is itself answered 429 / 503 and closed at once
//     (connection_gate.hpp says why).
// The pool has more workers than `max_connections` (main.cpp checks it), so a worker is always
// free to refuse a connection over the limits instead of leaving it queued behind slow clients.
// With TLS (--tls-cert) the same loop serves over a TLS transport (connection_transport.hpp says
// why not httplib::SSLServer): the handshake counts as part of the first request's head.
#pragma once

#include <httplib.h>

#include "rest/connection_gate.hpp"
#include "rest/connection_transport.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace c2c::rest {

struct ConnectionLimits {
  std::chrono::milliseconds header_timeout{10000};  // --header-timeout-ms
  std::chrono::milliseconds body_timeout{30000};    // --body-timeout-ms
  size_t max_header_bytes = 16 * 1024;              // --max-header-bytes
  size_t max_connections = 64;                      // --max-connections
  size_t max_connections_per_client = 16;           // --max-connections-per-client
};

class ConnectionStream;

class KeepAliveServer : public httplib::Server {
 public:
  using Refused = std::function<void(const char* reason)>;
  // `tls`: serve HTTPS with this context (null: plain HTTP).
  KeepAliveServer(ConnectionLimits limits, Refused on_refusal, std::function<void(int delta)> on_connections,
                  std::shared_ptr<const TlsContext> tls = nullptr);
  // Called by the pre-routing handler once httplib has read the request head: from here the
  // connection's reads are bounded by the body deadline. A no-op outside this server's workers.
  static void head_received();
  // httplib 0.11 listens with a backlog of 5: 32 clients connecting at once had SYNs dropped and
  // retried a second later (the p99 of bench/rest_tasks_bench.py was 1.05 s). Call after
  // bind_to_port(): listen(2) again on the bound socket sets the new backlog.
  void set_listen_backlog(int n);

 private:
  bool process_and_close_socket(socket_t sock) override;
  // The connection on `fd` is to make room for another: its own worker answers and closes it.
  void evict(int fd, ConnectionGate::Admit why);

  ConnectionLimits limits_;
  Refused on_refusal_;
  std::function<void(int)> on_connections_;
  std::shared_ptr<const TlsContext> tls_;
  // The streams being served, by socket, so an eviction (on another worker) reaches the stream's
  // owner: only the owner may write to a TLS stream.
  std::mutex live_mu_;
  std::map<int, ConnectionStream*> live_;
  ConnectionGate gate_;
};

// How long one poll(2) in the wait may last before the server checks whether it was stopped.
inline constexpr std::chrono::milliseconds kStopCheckInterval{200};

}  // namespace c2c::rest
