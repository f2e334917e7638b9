#include "rest/connection_transport.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace c2c::rest {
namespace {

using Clock = std::chrono::steady_clock;

Micros left_until(Clock::time_point deadline) {
  return std::max(Micros(0), std::chrono::duration_cast<Micros>(deadline - Clock::now()));
}

std::string openssl_reason() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

}  // namespace

bool wait_for(int fd, short events, Micros timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    // Rounded up: a wait that ends before its deadline would read as "not yet expired".
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, left.count())));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

ssize_t PlainTransport::read(char* ptr, size_t size, Micros wait) {
  if (!wait_for(fd_, POLLIN, wait)) return -1;
  for (;;) {
    ssize_t n = ::recv(fd_, ptr, size, 0);
    if (n >= 0 || errno != EINTR) return n;
  }
}

ssize_t PlainTransport::write(const char* ptr, size_t size, Micros wait) {
  if (!wait_for(fd_, POLLOUT, wait)) return -1;
  for (;;) {
    ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    if (n >= 0 || errno != EINTR) return n;
  }
}

std::unique_ptr<TlsContext> TlsContext::load(const std::string& cert_file, const std::string& key_file,
                                             std::string& error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) {
    error = "cannot create a TLS context: " + openssl_reason();
    return nullptr;
  }
  std::unique_ptr<TlsContext> out(new TlsContext(ctx));
  // TLS 1.2 and later; no compression (CRIME) and no renegotiation (a client could otherwise
  // make the server do handshake work in the middle of a request, outside the head deadline).
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // httplib's write loop takes partial writes; the buffer of a retried write may move.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    error = "--tls-cert " + cert_file + ": " + openssl_reason();
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    error = "--tls-key " + key_file + ": " + openssl_reason();
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    error = "--tls-key " + key_file + " does not match --tls-cert " + cert_file + ": " + openssl_reason();
    return nullptr;
  }
  return out;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

TlsTransport::TlsTransport(const TlsContext& ctx, int fd) : fd_(fd), ssl_(SSL_new(ctx.get())) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  if (ssl_) SSL_set_fd(ssl_, fd);
}

TlsTransport::~TlsTransport() { SSL_free(ssl_); }

TlsTransport::Handshake TlsTransport::handshake(Micros wait) {
  if (!ssl_) return Handshake::Failed;
  const auto deadline = Clock::now() + wait;
  for (;;) {
    ERR_clear_error();
    int rc = SSL_accept(ssl_);
    if (rc == 1) {
      established_ = true;
      return Handshake::Done;
    }
    int err = SSL_get_error(ssl_, rc);
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0) return Handshake::Failed;
    if (!wait_for(fd_, events, left_until(deadline))) return Handshake::TooSlow;
  }
}

bool TlsTransport::pending() const { return established_ && SSL_has_pending(ssl_) == 1; }

ssize_t TlsTransport::read(char* ptr, size_t size, Micros wait) {
  if (!established_) return -1;
  const auto deadline = Clock::now() + wait;
  for (;;) {
    ERR_clear_error();
    size_t n = 0;
    if (SSL_read_ex(ssl_, ptr, size, &n) == 1) return static_cast<ssize_t>(n);
    int err = SSL_get_error(ssl_, 0);
    if (err == SSL_ERROR_ZERO_RETURN) return 0;
    // A record may arrive in pieces: readable is not yet decryptable, so wait again until `wait` ends.
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0 || !wait_for(fd_, events, left_until(deadline))) return -1;
  }
}

ssize_t TlsTransport::write(const char* ptr, size_t size, Micros wait) {
  if (!established_) return -1;
  const auto deadline = Clock::now() + wait;
  for (;;) {
    ERR_clear_error();
    size_t n = 0;
    if (SSL_write_ex(ssl_, ptr, size, &n) == 1) return static_cast<ssize_t>(n);
    int err = SSL_get_error(ssl_, 0);
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0 || !wait_for(fd_, events, left_until(deadline))) return -1;
  }
}

void TlsTransport::close_notify() {
  if (!established_) return;
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);  // non-blocking socket: sends close_notify if there is room, never waits
  ERR_clear_error();
}

}  // namespace c2c::rest
