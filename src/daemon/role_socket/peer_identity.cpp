#include "daemon/role_socket/peer_identity.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "daemon/role_socket/task_roles.hpp"
#include "host/proc_stat.hpp"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5 (asm-generic/socket.h); older headers lack it
#endif

namespace c2c::daemon {
namespace {

std::optional<uid_t> process_euid(const std::filesystem::path& proc_root, pid_t pid) {
  std::ifstream f(proc_root / std::to_string(pid) / "status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream in(line.substr(4));
    uint64_t real = 0, effective = 0;
    if (in >> real >> effective) return static_cast<uid_t>(effective);
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<PeerIdentityMode> parse_peer_identity_mode(const std::string& text) {
  if (text == "auto") return PeerIdentityMode::Auto;
  if (text == "start-time") return PeerIdentityMode::StartTime;
  return std::nullopt;
}

std::optional<uint64_t> process_start_ticks(const std::filesystem::path& proc_root, pid_t pid) {
  std::ifstream f(proc_root / std::to_string(pid) / "stat");
  std::string line;
  if (!std::getline(f, line)) return std::nullopt;
  auto st = host::parse_stat(line);
  if (!st) return std::nullopt;
  return st->start_ticks;
}

bool bind_peer(int fd, const PeerCred& peer, PeerIdentityMode mode, const std::filesystem::path& proc_root,
               PeerIdentity* out, std::string* err) {
  *out = PeerIdentity{peer.pid, -1, std::nullopt};
  if (mode == PeerIdentityMode::Auto) {
    int pidfd = -1;
    socklen_t len = sizeof pidfd;
    const int rc = getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len);
    if (rc == 0 && pidfd >= 0) {
      out->pidfd = pidfd;
      return true;
    }
    if (rc != 0 && errno == ESRCH) {
      *err = "SO_PEERPIDFD: the peer has exited";
      return false;
    }
    // ENOPROTOOPT: a kernel before 6.5. The start time below.
  }
  // Start time first, uid second: if the pid was reused in between, the uid read is the new
  // process's, and the next request's start-time check refuses it anyway.
  auto start = process_start_ticks(proc_root, peer.pid);
  if (!start) {
    *err = "pid " + std::to_string(peer.pid) + ": no such process (the peer has exited)";
    return false;
  }
  auto euid = process_euid(proc_root, peer.pid);
  if (!euid || *euid != peer.uid) {
    *err = "pid " + std::to_string(peer.pid) + " is not the process that connected (its uid is " +
           (euid ? std::to_string(*euid) : std::string("unknown")) + ", the connection's " + std::to_string(peer.uid) +
           "): the peer has exited and its pid was reused";
    return false;
  }
  out->start_ticks = *start;
  return true;
}

bool peer_gone(const PeerIdentity& id, const std::filesystem::path& proc_root) {
  if (id.pidfd >= 0) return process_exited(id.pidfd);
  if (!id.start_ticks) return true;
  auto now = process_start_ticks(proc_root, id.pid);
  return !now || *now != id.start_ticks;
}

}  // namespace c2c::daemon
