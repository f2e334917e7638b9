#include "rest/keep_alive_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace c2c::rest {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::microseconds to_duration(time_t sec, time_t usec) {
  return std::chrono::seconds(sec) + std::chrono::microseconds(usec);
}

// poll(2) for one event, restarted on EINTR; true when the socket is ready.
bool wait_for(int fd, short events, std::chrono::microseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, left.count())));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
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

// One connection's stream, kept across its requests. Reads are buffered because httplib reads the
// request line and headers a byte at a time; timeouts are the server's read/write timeouts.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int fd, std::chrono::microseconds read_timeout, std::chrono::microseconds write_timeout)
      : fd_(fd), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

  bool is_readable() const override { return off_ < len_ || wait_for(fd_, POLLIN, read_timeout_); }
  bool is_writable() const override { return wait_for(fd_, POLLOUT, write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (off_ < len_) return take(ptr, size);
    if (!wait_for(fd_, POLLIN, read_timeout_)) return -1;
    if (size >= sizeof(buf_)) return recv_retrying(ptr, size);
    ssize_t n = recv_retrying(buf_, sizeof(buf_));
    if (n <= 0) return n;
    off_ = 0;
    len_ = static_cast<size_t>(n);
    return take(ptr, size);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait_for(fd_, POLLOUT, write_timeout_)) return -1;
    for (;;) {
      ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0 || errno != EINTR) return n;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(fd_, false, ip, port); }
  socket_t socket() const override { return fd_; }

  // The next request: already buffered, or readable within `idle`, checking `stopped` in between.
  template <class Stopped>
  bool next_request(std::chrono::microseconds idle, Stopped stopped) const {
    if (off_ < len_) return true;
    const auto deadline = Clock::now() + idle;
    while (!stopped()) {
      auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      if (wait_for(fd_, POLLIN, std::min<std::chrono::microseconds>(left, kStopCheckInterval))) return true;
    }
    return false;
  }

 private:
  ssize_t take(char* ptr, size_t size) {
    size_t n = std::min(size, len_ - off_);
    std::memcpy(ptr, buf_ + off_, n);
    off_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t recv_retrying(char* ptr, size_t size) {
    for (;;) {
      ssize_t n = ::recv(fd_, ptr, size, 0);
      if (n >= 0 || errno != EINTR) return n;
    }
  }

  int fd_;
  std::chrono::microseconds read_timeout_, write_timeout_;
  char buf_[4096];
  size_t off_ = 0, len_ = 0;
};

}  // namespace

bool KeepAliveServer::process_and_close_socket(socket_t sock) {
  ConnectionStream strm(sock, to_duration(read_timeout_sec_, read_timeout_usec_),
                        to_duration(write_timeout_sec_, write_timeout_usec_));
  const auto idle = std::chrono::microseconds(std::chrono::seconds(keep_alive_timeout_sec_));
  auto stopped = [this] { return svr_sock_ == INVALID_SOCKET; };
  bool ret = false;
  for (size_t left = keep_alive_max_count_; left > 0 && strm.next_request(idle, stopped); --left) {
    bool closed = false;
    ret = process_request(strm, /*close_connection=*/left == 1, closed, nullptr);
    if (!ret || closed) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace c2c::rest
