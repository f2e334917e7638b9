// Who may talk to claim2cored over its Unix socket: the peer's uid (SO_PEERCRED, set by the
// kernel at connect time, not forgeable by the client) must be in the allow list (default:
// root, plus the daemon's own uid always).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace c2c::daemon {

struct PeerCred {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

class PeerPolicy {
 public:
  PeerPolicy(std::vector<uint32_t> allowed, uid_t self) { set(std::move(allowed), self); }
  void set(std::vector<uint32_t> allowed, uid_t self);
  bool allows(uid_t uid) const;

 private:
  mutable std::mutex mu_;
  std::vector<uint32_t> allowed_;
};

// false with *err when the credentials cannot be read.
bool peer_cred(int fd, PeerCred* out, std::string* err);

// A listening, non-blocking Unix socket at `path` (a stale socket file replaced), chmod `mode`;
// -1 with *err.
int listen_unix(const std::string& path, mode_t mode, std::string* err);

// Binds `path` (its directory is created 0700, the socket chmod 0600, a stale socket replaced),
// accepts connections on its own thread, checks each peer and hands accepted fds to `accepted`
// (gRPC's AddInsecureChannelFromFd). Refused peers are logged with uid and pid and closed.
// At most `max_connections` (and half the soft RLIMIT_NOFILE) are served at once: at the cap,
// and after accept() fails for want of descriptors, the listener stops polling the socket for
// 100 ms instead of spinning on it; new connections wait in the backlog meanwhile.
class UnixListener {
 public:
  using Accept = std::function<void(int fd)>;
  static std::unique_ptr<UnixListener> open(const std::string& path, std::shared_ptr<PeerPolicy> policy, Accept accepted,
                                            uint32_t max_connections, std::string* err);
  size_t connection_cap() const { return cap_; }
  ~UnixListener();
  void stop();  // stop accepting and unlink the socket
  uint64_t refused() const { return refused_; }

 private:
  UnixListener() = default;
  void loop();
  // Connections handed to gRPC, by (fd, socket inode): gRPC closes them without telling us, so
  // one whose fd is closed or now names another file is gone.
  struct Conn {
    int fd;
    ino_t ino;
  };
  void prune();
  std::vector<Conn> conns_;
  size_t cap_ = 0;
  std::string path_;
  int fd_ = -1, wake_ = -1;
  std::shared_ptr<PeerPolicy> policy_;
  Accept accepted_;
  std::thread thread_;
  std::atomic<uint64_t> refused_{0};
};

}  // namespace c2c::daemon
