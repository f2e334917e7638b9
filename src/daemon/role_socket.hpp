// The role socket (issue #14, spec/daemon.md "Task roles"): a second Unix socket, mode 0666 in a
// directory anyone may reach, on which any process may register the roles of its own threads
// with the line protocol of role_protocol.hpp. Each connection's peer credentials (SO_PEERCRED,
// taken at accept) authorise its requests: root or an allowed uid may label any thread, anyone
// else only the threads of its own thread group. It serves nothing else: the gRPC socket stays
// 0600 and peer-checked. One thread polls every connection; a complete line becomes an engine
// command, whose reply is written from the loop once the role is durable.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/engine.hpp"
#include "daemon/peer_auth.hpp"

namespace c2c::daemon {

class RoleSocket {
 public:
  // nullptr with *err. `peers`: the gRPC socket's allow list (who is privileged here).
  static std::unique_ptr<RoleSocket> open(const std::string& path, Engine& engine, std::shared_ptr<PeerPolicy> peers,
                                          std::string* err);
  ~RoleSocket();
  void stop();  // stop serving and unlink the socket

  struct Conn;  // one client: its fd (closed with the last reference), peer and partial line

 private:
  RoleSocket(Engine& e) : engine_(e) {}
  void loop();
  void on_readable(std::shared_ptr<Conn> c);
  Engine& engine_;
  std::shared_ptr<PeerPolicy> peers_;
  std::string path_;
  int fd_ = -1, wake_ = -1;
  std::map<int, std::shared_ptr<Conn>> conns_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

// The role socket for a configuration: cfg.role_socket when set ("off": none), else derived.
std::string role_socket_path(const DaemonConfig& cfg);

}  // namespace c2c::daemon
