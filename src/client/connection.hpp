// How a front end (the CLI, claim2core-rest) reaches claim2cored: its Unix socket (default), or
// TCP with mutual TLS only. Part of the client library (src/client/README.md).
#pragma once

#include <grpcpp/channel.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace c2c::client {

inline constexpr const char* kDefaultSocket = "/run/claim2core/claim2cored.sock";
inline constexpr const char* kSocketEnv = "CLAIM2CORE_SOCKET";

struct ConnectionOptions {
  std::string socket;     // empty: $CLAIM2CORE_SOCKET, else kDefaultSocket
  std::string server;     // HOST:PORT; needs cacert, cert and key
  std::string cacert;     // PEM: the CA that signed the daemon's certificate
  std::string cert;       // PEM: this client's certificate
  std::string key;        // PEM: this client's key
  std::string tls_server_name;  // overrides the name checked in the daemon's certificate
  std::chrono::milliseconds timeout{10000};  // per unary call (watch has none)
};

// A usage problem (missing --cacert, an unreadable key, both --socket and --server): exit 2.
struct ConnectionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The socket path the options resolve to (flag, then environment, then the default).
std::string resolve_socket(const ConnectionOptions& o);
// "unix:/run/claim2core/claim2cored.sock" or "host:port".
std::string target_of(const ConnectionOptions& o);
std::shared_ptr<grpc::Channel> open_channel(const ConnectionOptions& o);

}  // namespace c2c::client
