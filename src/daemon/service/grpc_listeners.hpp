// The gRPC server of claim2cored: the Claim2Core service, grpc.health.v1, server reflection;
// connections from the peer-checked Unix socket (handed over by fd) and, only when configured,
// a TCP port with mutual TLS (client certificate required and verified).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "daemon/process/config.hpp"
#include "daemon/loop/engine.hpp"
#include "daemon/service/peer_auth.hpp"
#include "daemon/role_socket/role_socket.hpp"
#include "daemon/service/service.hpp"

namespace c2c::daemon {

class Server {
 public:
  static std::unique_ptr<Server> start(const DaemonConfig& cfg, Engine& engine, Metrics& metrics, std::string* err);
  ~Server();
  void set_allowed_uids(const std::vector<uint32_t>& uids);
  // Stop accepting (unlink the socket, close TCP), end watch streams.
  void stop_accepting();
  // After the engine drained: cancel what is left and stop.
  void shutdown();

 private:
  Server() = default;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> grpc_;
  std::shared_ptr<PeerPolicy> peers_;
  std::unique_ptr<UnixListener> unix_;
  std::unique_ptr<RoleSocket> roles_;
};

}  // namespace c2c::daemon
