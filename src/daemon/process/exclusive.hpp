// One daemon per node state (spec/daemon.md, "One daemon per node state"): before claim2cored
// touches anything it holds an exclusive flock on
//   <state_dir>/lock                  (the durable state and the generation file),
//   <pin_root> (the bpffs directory)  (the pinned maps; bpffs holds no regular files),
//   <socket>.lock                     (the socket path),
// and refuses a socket path another process serves. A refusal names what is held and by which
// pid (from /proc/locks, or SO_PEERCRED for a served socket). The locks live as long as the
// process: the kernel drops them at exit, kill -9 included, so a restart never finds a stale one.
// The socket and state directories must be the daemon's own and not group/other-writable,
// otherwise another user could swap the files under it.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "daemon/process/config.hpp"

namespace c2c::daemon {

class NodeLocks {
 public:
  NodeLocks() = default;
  NodeLocks(NodeLocks&& o) noexcept : fds_(std::move(o.fds_)) { o.fds_.clear(); }
  NodeLocks& operator=(NodeLocks&&) = delete;
  NodeLocks(const NodeLocks&) = delete;
  ~NodeLocks();
  void add(int fd) { fds_.push_back(fd); }

 private:
  std::vector<int> fds_;
};

// A directory the daemon keeps private files in: created 0700 if missing; if it exists it must
// be a directory owned by `uid` and not writable by group or others. "" or the refusal (naming
// path, owner and mode).
std::string ensure_private_dir(const std::string& what, const std::string& path, uid_t uid);

// The role socket's directory: created 0755 when missing (workloads of any uid reach the socket);
// an existing one is left as the operator made it. "" or the error naming role_socket.
std::string ensure_role_socket_dir(const std::string& socket_path);

// The pid holding a flock on the inode of `fd` (from /proc/locks), 0 if none is found.
pid_t flock_holder(int fd);

// Takes every lock above (creating the state and socket directories and the pin root). false
// with *err naming the resource and the pid holding it.
bool acquire_node_locks(const DaemonConfig& cfg, NodeLocks* out, std::string* err);

// A socket file at `path`: if a process accepts connections on it, the refusal names its pid;
// a stale one (nobody listening) is removed. "" when the path is free now.
std::string claim_socket_path(const std::string& path);

}  // namespace c2c::daemon
