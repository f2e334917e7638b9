#include "rest/keep_alive_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace c2c::rest {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::microseconds to_duration(time_t sec, time_t usec) {
  return std::chrono::seconds(sec) + std::chrono::microseconds(usec);
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len)
                : ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ip.clear();
  port = 0;
  if (rc != 0) return;
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
    port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
    port = ntohs(in6->sin6_port);
  }
  ip = buf;
}

// How long a connection refused for a late head or body has its late bytes discarded before it is
// closed (refuse).
constexpr std::chrono::milliseconds kLingerTime{300};

}  // namespace

// Why a connection's read failed on a deadline, a size limit or an eviction (for the refusal count
// and the reply).
enum class Expired : uint8_t { None, HeaderDeadline, HeaderTooLarge, BodyDeadline, Evicted };

// One connection's stream, kept across its requests. Reads are buffered because httplib reads the
// request line and headers a byte at a time; each read is bounded by the server's read timeout and
// by the current request's deadline (head, then body); write timeouts are the server's. The bytes
// come through a Transport (plain or TLS), so both are bounded alike.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int fd, Transport& t, std::chrono::microseconds read_timeout,
                   std::chrono::microseconds write_timeout, const ConnectionLimits& limits)
      : fd_(fd), t_(t), read_timeout_(read_timeout), write_timeout_(write_timeout), limits_(limits) {}

  bool is_readable() const override { return off_ < len_ || t_.pending() || wait_for(fd_, POLLIN, read_wait()); }
  bool is_writable() const override { return wait_for(fd_, POLLOUT, write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (expired_ != Expired::None) return -1;
    if (evicted_by() != ConnectionGate::Admit::Ok) return expire(Expired::Evicted);
    if (in_head_ && head_bytes_ >= limits_.max_header_bytes) return expire(Expired::HeaderTooLarge);
    if (in_head_) size = std::min(size, limits_.max_header_bytes - head_bytes_);
    if (off_ < len_) return take(ptr, size);
    if (Clock::now() >= deadline_) return expire(in_head_ ? Expired::HeaderDeadline : Expired::BodyDeadline);
    const bool direct = size >= sizeof(buf_);
    ssize_t n = t_.read(direct ? ptr : buf_, direct ? size : sizeof(buf_), read_wait());
    // An eviction shuts the socket's read side, which ends the wait: say why, not "end of stream".
    if (evicted_by() != ConnectionGate::Admit::Ok) return expire(Expired::Evicted);
    if (n < 0 && Clock::now() >= deadline_) return expire(in_head_ ? Expired::HeaderDeadline : Expired::BodyDeadline);
    if (n <= 0 || direct) return count(n);
    off_ = 0;
    len_ = static_cast<size_t>(n);
    return take(ptr, size);
  }

  ssize_t write(const char* ptr, size_t size) override {
    // Past a deadline or limit httplib would answer 400; process_and_close_socket answers 408/431.
    if (expired_ != Expired::None) return -1;
    return t_.write(ptr, size, write_timeout_);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(fd_, false, ip, port); }
  socket_t socket() const override { return fd_; }

  // The next request: already buffered, or readable within `idle` (and before `by`, the head
  // deadline of a new connection), checking `stopped` and an eviction in between.
  template <class Stopped>
  bool next_request(std::chrono::microseconds idle, Clock::time_point by, Stopped stopped) const {
    if (off_ < len_ || t_.pending()) return true;
    const auto deadline = std::min(Clock::now() + idle, by);
    while (!stopped() && evicted_by() == ConnectionGate::Admit::Ok) {
      auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      if (wait_for(fd_, POLLIN, std::min<std::chrono::microseconds>(left, kStopCheckInterval)))
        return evicted_by() == ConnectionGate::Admit::Ok;
    }
    return false;
  }
  // A request begins: its head must be whole by `head_deadline`.
  void begin_request(Clock::time_point head_deadline) {
    in_head_ = true;
    head_bytes_ = 0;
    deadline_ = head_deadline;
  }
  // The head is read: the body has body_timeout from now.
  void head_received() {
    in_head_ = false;
    deadline_ = Clock::now() + limits_.body_timeout;
  }
  Expired expired() const { return expired_; }
  // Another worker's new connection takes this one's place (KeepAliveServer::evict).
  void evict(ConnectionGate::Admit why) { evicted_.store(why); }
  ConnectionGate::Admit evicted_by() const { return evicted_.load(); }

 private:
  std::chrono::microseconds read_wait() const {
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline_ - Clock::now());
    return std::max(std::chrono::microseconds(0), std::min(read_timeout_, left));
  }
  ssize_t expire(Expired why) {
    expired_ = why;
    return -1;
  }
  ssize_t count(ssize_t n) {
    if (n > 0 && in_head_) head_bytes_ += static_cast<size_t>(n);
    return n;
  }
  ssize_t take(char* ptr, size_t size) {
    size_t n = std::min(size, len_ - off_);
    std::memcpy(ptr, buf_ + off_, n);
    off_ += n;
    return count(static_cast<ssize_t>(n));
  }

  int fd_;
  Transport& t_;
  std::chrono::microseconds read_timeout_, write_timeout_;
  const ConnectionLimits& limits_;
  char buf_[4096];
  size_t off_ = 0, len_ = 0;
  bool in_head_ = true;
  size_t head_bytes_ = 0;
  Clock::time_point deadline_ = Clock::time_point::max();
  Expired expired_ = Expired::None;
  std::atomic<ConnectionGate::Admit> evicted_{ConnectionGate::Admit::Ok};
};

namespace {

// The stream this worker thread serves now (head_received() reaches it from the pre-routing
// handler, which httplib calls on the same thread once the head is read).
thread_local ConnectionStream* t_stream = nullptr;
thread_local ConnectionGate* t_gate = nullptr;
thread_local uint64_t t_gate_id = 0;

// A reply to a connection refused (over a limit, evicted, or its head or body too late or too
// large), through its transport: best effort, never blocking, then the connection is closed by
// the caller. Without a transport ready for HTTP (a TLS handshake not done) nothing is sent.
void refuse(int fd, Transport& t, int status, const char* phrase, const std::string& message,
            std::chrono::milliseconds linger) {
  if (t.ready()) {
    std::string body = R"({"success":false,"error":")" + message + "\"}";
    std::string all = "HTTP/1.1 " + std::to_string(status) + " " + phrase +
                      "\r\nContent-Type: application/json\r\nConnection: close\r\nCache-Control: no-store\r\n"
                      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    (void)t.write(all.data(), all.size(), std::chrono::microseconds(0));
    t.close_notify();
  }
  // Closing a socket with unread bytes (the client still sending its head) makes the kernel send
  // a reset, and the client may lose the reply before reading it. So: end our side, and discard
  // what the client still sends for a moment (at most `linger` and 64 KiB) before closing. A
  // connection refused over a connection limit lingers 0: only what already arrived is discarded,
  // so a flood of them costs no worker time. (Discarded raw: TLS records need no decrypting.)
  ::shutdown(fd, SHUT_WR);
  const auto until = Clock::now() + linger;
  char sink[4096];
  for (size_t drained = 0; drained < 64 * 1024;) {
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(until - Clock::now());
    if (left.count() > 0 && !wait_for(fd, POLLIN, left)) break;
    ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
}

std::string seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

}  // namespace

KeepAliveServer::KeepAliveServer(ConnectionLimits limits, Refused on_refusal, std::function<void(int)> on_connections,
                                 std::shared_ptr<const TlsContext> tls)
    : limits_(limits),
      on_refusal_(std::move(on_refusal)),
      on_connections_(std::move(on_connections)),
      tls_(std::move(tls)),
      gate_(limits.max_connections, limits.max_connections_per_client,
            [this](int fd, ConnectionGate::Admit why) { evict(fd, why); }) {}

void KeepAliveServer::evict(int fd, ConnectionGate::Admit why) {
  // Under the gate's lock, so `fd` is still open. A pending connection makes room for a new one
  // (connection_gate.hpp says why): its stream is told why, and the read side of its socket shut
  // down, which ends its worker's wait; that worker answers 429 / 503 and closes it (only it may
  // write to its TLS stream).
  if (on_refusal_) on_refusal_(why == ConnectionGate::Admit::OverClientLimit ? "connections-per-client" : "connections-total");
  {
    std::lock_guard<std::mutex> l(live_mu_);
    if (auto it = live_.find(fd); it != live_.end()) it->second->evict(why);
  }
  ::shutdown(fd, SHUT_RD);
}

void KeepAliveServer::set_listen_backlog(int n) {
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, n);
}

void KeepAliveServer::head_received() {
  if (t_stream) t_stream->head_received();
  if (t_gate) t_gate->set_pending(t_gate_id, false);  // a request in hand is never evicted
}

bool KeepAliveServer::process_and_close_socket(socket_t sock) {
  const auto accepted = Clock::now();
  std::string client;
  int port = 0;
  address_of(sock, true, client, port);
  std::unique_ptr<Transport> transport;
  TlsTransport* tls = nullptr;
  if (tls_) {
    auto t = std::make_unique<TlsTransport>(*tls_, sock);
    tls = t.get();
    transport = std::move(t);
  } else {
    transport = std::make_unique<PlainTransport>(sock);
  }
  ConnectionStream strm(sock, *transport, to_duration(read_timeout_sec_, read_timeout_usec_),
                        to_duration(write_timeout_sec_, write_timeout_usec_), limits_);
  {
    std::lock_guard<std::mutex> l(live_mu_);
    live_[sock] = &strm;
  }
  auto close_socket = [&] {
    {
      std::lock_guard<std::mutex> l(live_mu_);
      live_.erase(sock);
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  };
  auto refuse_now = [&](const char* reason, int status, const char* phrase, const std::string& message) {
    // Over TLS nothing can be said before a handshake, and a handshake is a worker's time spent on
    // a client being refused: the connection is closed without a reply.
    if (on_refusal_) on_refusal_(reason);
    refuse(sock, *transport, status, phrase, message, std::chrono::milliseconds(0));
    close_socket();
    return false;
  };
  const auto ticket = gate_.enter(client, sock);
  switch (ticket.admit) {
    case ConnectionGate::Admit::OverClientLimit:
      return refuse_now("connections-per-client", 429, "Too Many Requests",
                        "too many connections from " + client + " (at most " +
                            std::to_string(limits_.max_connections_per_client) + ", --max-connections-per-client)");
    case ConnectionGate::Admit::OverTotalLimit:
      return refuse_now("connections-total", 503, "Service Unavailable",
                        "too many connections (at most " + std::to_string(limits_.max_connections) +
                            ", --max-connections)");
    case ConnectionGate::Admit::Ok: break;
  }
  if (on_connections_) on_connections_(+1);
  t_stream = &strm;
  t_gate = &gate_;
  t_gate_id = ticket.id;
  const auto idle = std::chrono::microseconds(std::chrono::seconds(keep_alive_timeout_sec_));
  auto stopped = [this] { return svr_sock_ == INVALID_SOCKET; };
  bool ret = false;
  // The first request's head is due header_timeout after the accept (a connection that sends
  // nothing holds its worker no longer than one that drips); a kept-alive connection's next
  // request may idle keep_alive_timeout first, and its head is due header_timeout after its first byte.
  auto by = accepted + limits_.header_timeout;
  // Over TLS the handshake is part of the first head: bounded by the same deadline.
  bool serve = true;
  if (tls) {
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(by - Clock::now());
    switch (tls->handshake(std::max(std::chrono::microseconds(0), left))) {
      case TlsTransport::Handshake::Done: break;
      case TlsTransport::Handshake::TooSlow:
        if (strm.evicted_by() == ConnectionGate::Admit::Ok && on_refusal_) on_refusal_("header-deadline");
        serve = false;
        break;
      case TlsTransport::Handshake::Failed:
        if (strm.evicted_by() == ConnectionGate::Admit::Ok && on_refusal_) on_refusal_("tls-handshake");
        serve = false;
        break;
    }
  }
  for (size_t left = keep_alive_max_count_; serve && left > 0 && strm.next_request(idle, by, stopped); --left) {
    strm.begin_request(left == keep_alive_max_count_ ? by : Clock::now() + limits_.header_timeout);
    bool closed = false;
    ret = process_request(strm, /*close_connection=*/left == 1, closed, nullptr);
    if (strm.expired() != Expired::None) break;
    if (!ret || closed) break;
    by = Clock::time_point::max();
    gate_.set_pending(ticket.id, true);  // idle until the next request: may make room for others
  }
  if (strm.evicted_by() != ConnectionGate::Admit::Ok) {
    // Counted by evict(); answered here, by the stream's owner.
    const bool per_client = strm.evicted_by() == ConnectionGate::Admit::OverClientLimit;
    refuse(sock, *transport, per_client ? 429 : 503, per_client ? "Too Many Requests" : "Service Unavailable",
           per_client ? "closed for a newer connection from the same address (at most " +
                            std::to_string(limits_.max_connections_per_client) + " a client, --max-connections-per-client)"
                      : "closed for a newer connection (at most " + std::to_string(limits_.max_connections) +
                            ", --max-connections)",
           std::chrono::milliseconds(0));
  } else {
    switch (strm.expired()) {
      case Expired::HeaderDeadline:
        if (on_refusal_) on_refusal_("header-deadline");
        refuse(sock, *transport, 408, "Request Timeout",
               "the request head did not arrive within " + seconds(limits_.header_timeout) + " s (--header-timeout-ms)",
               kLingerTime);
        break;
      case Expired::HeaderTooLarge:
        if (on_refusal_) on_refusal_("header-too-large");
        refuse(sock, *transport, 431, "Request Header Fields Too Large",
               "the request head is larger than " + std::to_string(limits_.max_header_bytes) +
                   " bytes (--max-header-bytes)",
               kLingerTime);
        break;
      case Expired::BodyDeadline:
        if (on_refusal_) on_refusal_("body-deadline");
        refuse(sock, *transport, 408, "Request Timeout",
               "the request body did not arrive within " + seconds(limits_.body_timeout) +
                   " s of its head (--body-timeout-ms)",
               kLingerTime);
        break;
      case Expired::Evicted:
      case Expired::None: transport->close_notify(); break;
    }
  }
  t_stream = nullptr;
  t_gate = nullptr;
  gate_.leave(ticket.id);
  if (on_connections_) on_connections_(-1);
  close_socket();
  return ret;
}

}  // namespace c2c::rest
