// The byte transport under one gateway connection: plain TCP or TLS (OpenSSL), behind one
// interface so the same connection loop (keep_alive_server.cpp) bounds both with the same head
// and body deadlines, header size and connection limits.
//
// Why not httplib::SSLServer: Debian's httplib 0.11 is a compiled library whose SSL stream is not
// in its header, and SSLServer's process_and_close_socket is private, so it can be neither
// wrapped nor given a bounded stream; under --tls-cert it served with none of issue 42's bounds.
// OpenSSL is what that build of httplib uses already (libssl-dev).
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>

namespace c2c::rest {

using Micros = std::chrono::microseconds;

// poll(2) for one event, restarted on EINTR; true when the socket is ready.
bool wait_for(int fd, short events, Micros timeout);

class Transport {
 public:
  virtual ~Transport() = default;
  // Bytes received and not yet read, readable without waiting on the socket.
  virtual bool pending() const = 0;
  // Up to `size` bytes, waiting at most `wait` for the first: > 0 read, 0 the peer ended the
  // stream, -1 an error or nothing within `wait`.
  virtual ssize_t read(char* ptr, size_t size, Micros wait) = 0;
  // Some of `size` bytes, waiting at most `wait` for room: > 0 written, -1 an error or no room.
  virtual ssize_t write(const char* ptr, size_t size, Micros wait) = 0;
  // Best effort, never blocking: tell the peer this side is done (TLS close_notify).
  virtual void close_notify() {}
  // Whether HTTP bytes can be exchanged (TLS: after the handshake).
  virtual bool ready() const { return true; }
};

class PlainTransport final : public Transport {
 public:
  explicit PlainTransport(int fd) : fd_(fd) {}
  bool pending() const override { return false; }
  ssize_t read(char* ptr, size_t size, Micros wait) override;
  ssize_t write(const char* ptr, size_t size, Micros wait) override;

 private:
  int fd_;
};

// The server's certificate and key, loaded once; shared by every connection.
class TlsContext {
 public:
  // The context, or why not (the flag named) in `error`.
  static std::unique_ptr<TlsContext> load(const std::string& cert_file, const std::string& key_file,
                                          std::string& error);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* get() const { return ctx_; }

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

class TlsTransport final : public Transport {
 public:
  // Makes `fd` non-blocking: every wait is a bounded poll(2).
  TlsTransport(const TlsContext& ctx, int fd);
  ~TlsTransport() override;
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  enum class Handshake : uint8_t { Done, TooSlow, Failed };
  // The server side of the handshake, within `wait` (the request head's deadline covers it: a
  // client that never finishes its handshake holds its worker no longer than one that drips).
  Handshake handshake(Micros wait);

  bool pending() const override;
  ssize_t read(char* ptr, size_t size, Micros wait) override;
  ssize_t write(const char* ptr, size_t size, Micros wait) override;
  void close_notify() override;
  bool ready() const override { return established_; }

 private:
  int fd_;
  SSL* ssl_;
  bool established_ = false;
};

}  // namespace c2c::rest
