// The role socket (issue #14, spec/daemon.md "Task roles"): a second Unix socket, mode 0666 in a
// directory anyone may reach, on which any process may register the roles of its own threads
// with the line protocol of role_protocol.hpp. Each connection's peer credentials (SO_PEERCRED,
// taken at accept) authorise its requests: root or an allowed uid may label any thread, anyone
// else only the threads of its own thread group. It serves nothing else: the gRPC socket stays
// 0600 and peer-checked.
//
// One thread serves every connection. Since any local uid may connect, everything one uid can
// hold or ask is bounded (role_limits.hpp, issue 42): connections per uid and in all (with slots
// kept for root and the allowed uids), an idle timeout, requests in flight per connection and per
// uid (past them the socket is not read: the kernel's buffer is the client's queue), a per-uid
// rate. A complete line becomes an engine command in the role lane (command_queue.hpp), whose
// reply comes back to this thread once the role is durable; replies leave in request order.
//
// A connection is bound to its process at accept (peer_identity.hpp: SO_PEERPIDFD, else the pid's
// start time): once that process has exited its pid may be reused, so a request on a connection
// whose process is gone is refused (UNAUTHENTICATED, reconnect), here and again in the engine
// after the target was read (Engine::register_role).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/loop/engine.hpp"
#include "daemon/process/metrics.hpp"
#include "daemon/service/peer_auth.hpp"
#include "daemon/role_socket/role_limits.hpp"
#include "daemon/role_socket/peer_identity.hpp"

namespace c2c::daemon {

class RoleSocket {
 public:
  // nullptr with *err. `peers`: the gRPC socket's allow list (who is privileged here).
  static std::unique_ptr<RoleSocket> open(const std::string& path, Engine& engine, std::shared_ptr<PeerPolicy> peers,
                                          const RoleLimits& limits, PeerIdentityMode identity, Metrics& metrics,
                                          std::string* err);
  ~RoleSocket();
  void stop();  // stop serving and unlink the socket

  struct Conn;         // one client: its fd and identity (closed with the last reference), peer, buffers
  struct Completions;  // replies the engine's loop hands back to this thread

 private:
  RoleSocket(Engine& e, const RoleLimits& l, Metrics& m) : engine_(e), admission_(l), metrics_(m) {}
  void loop();
  int accept_one(uint64_t now);  // 0, or accept's errno
  void on_readable(const std::shared_ptr<Conn>& c, uint64_t now);
  void take_lines(const std::shared_ptr<Conn>& c, uint64_t now);
  void take_completions();
  void flush(const std::shared_ptr<Conn>& c);
  bool reading(const Conn& c, uint64_t now) const;
  void refuse(const std::shared_ptr<Conn>& c, RoleRefusal why, const std::string& code, const std::string& message,
              bool close_after);
  void drop(const std::shared_ptr<Conn>& c);
  Engine& engine_;
  RoleAdmission admission_;  // this thread only
  Metrics& metrics_;
  std::shared_ptr<PeerPolicy> peers_;
  PeerIdentityMode identity_ = PeerIdentityMode::Auto;
  std::shared_ptr<Completions> done_;
  std::string path_;
  int fd_ = -1, wake_ = -1;
  std::map<int, std::shared_ptr<Conn>> conns_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

}  // namespace c2c::daemon
