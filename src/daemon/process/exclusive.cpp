#include "daemon/process/exclusive.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sched/loader.hpp"

namespace c2c::daemon {
namespace {

std::string errtext(int e) { return std::strerror(e); }

std::string octal(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

// flock(LOCK_EX | LOCK_NB) on `fd`; on contention the refusal names `what` and the holder.
bool lock_or_refuse(int fd, const std::string& what, const std::string& path, NodeLocks* out, std::string* err) {
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
    out->add(fd);
    return true;
  }
  int e = errno;
  if (e != EWOULDBLOCK) {
    *err = what + " " + path + ": cannot lock: " + errtext(e);
  } else {
    pid_t holder = flock_holder(fd);
    *err = what + " " + path + " is held by another claim2cored (" +
           (holder > 0 ? "pid " + std::to_string(holder) : std::string("pid unknown")) +
           "): one daemon per node state; stop that one first";
  }
  ::close(fd);
  return false;
}

}  // namespace

NodeLocks::~NodeLocks() {
  for (int fd : fds_) ::close(fd);
}

std::string ensure_private_dir(const std::string& what, const std::string& path, uid_t uid) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return what + " " + path + ": " + errtext(errno);
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return what + " " + path + ": " + ec.message();
    if (::chmod(path.c_str(), 0700) != 0) return what + " " + path + ": chmod 0700: " + errtext(errno);
    if (::lstat(path.c_str(), &st) != 0) return what + " " + path + ": " + errtext(errno);
  }
  if (!S_ISDIR(st.st_mode)) return what + " " + path + " is not a directory (a symlink is refused too)";
  if (st.st_uid != uid || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return what + " " + path + " is owned by uid " + std::to_string(st.st_uid) + " with mode " + octal(st.st_mode) +
           ": it must be owned by the daemon's uid " + std::to_string(uid) +
           " and not writable by group or others (another user could swap the files in it)";
  return "";
}

std::string ensure_role_socket_dir(const std::string& socket_path) {
  const auto dir = std::filesystem::path(socket_path).parent_path();
  std::error_code ec;
  // Created open to everyone (whatever the umask): workloads of any uid must reach the socket. One
  // that exists is the operator's to set.
  if (std::filesystem::create_directories(dir, ec) && ::chmod(dir.c_str(), 0755) != 0)
    ec.assign(errno, std::generic_category());
  return ec ? "role_socket directory " + dir.string() + ": " + ec.message() : "";
}

pid_t flock_holder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return 0;
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    // "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF"
    std::istringstream ls(line);
    std::string id, type, mode, rw, dev_ino;
    long pid = 0;
    if (!(ls >> id >> type >> mode >> rw >> pid >> dev_ino) || type != "FLOCK") continue;
    unsigned maj = 0, min = 0;
    unsigned long long ino = 0;
    if (std::sscanf(dev_ino.c_str(), "%x:%x:%llu", &maj, &min, &ino) != 3) continue;
    if (ino == st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev) && pid != getpid())
      return static_cast<pid_t>(pid);
  }
  return 0;
}

std::string claim_socket_path(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";
  if (!S_ISSOCK(st.st_mode)) return "socket " + path + " exists and is not a socket: refusing to replace it";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return "socket path too long: " + path;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket: " + errtext(errno);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    ucred c{};
    socklen_t len = sizeof c;
    std::string who = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) == 0 ? "pid " + std::to_string(c.pid)
                                                                                : std::string("pid unknown");
    ::close(fd);
    return "socket " + path + " is served by a running process (" + who + "): refusing to take it over";
  }
  int e = errno;
  ::close(fd);
  // EAGAIN: a full backlog is still a live listener.
  if (e == EAGAIN) return "socket " + path + " is served by a running process (its backlog is full): refusing to take it over";
  if (e != ECONNREFUSED) return "socket " + path + ": connect: " + errtext(e);
  spdlog::info("removing the stale socket {} (nobody listens on it)", path);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return "socket " + path + ": unlink: " + errtext(errno);
  return "";
}

bool acquire_node_locks(const DaemonConfig& cfg, NodeLocks* out, std::string* err) {
  const uid_t uid = geteuid();
  const std::string sock_dir = std::filesystem::path(cfg.socket).parent_path().string();
  for (const auto& [what, dir] : {std::pair<std::string, std::string>{"state_dir", cfg.state_dir},
                                  {"socket directory", sock_dir}})
    if (auto e = ensure_private_dir(what, dir, uid); !e.empty()) {
      *err = e;
      return false;
    }
  const std::string state_lock = cfg.state_dir + "/lock";
  int fd = ::open(state_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    *err = "state_dir lock " + state_lock + ": " + errtext(errno);
    return false;
  }
  if (!lock_or_refuse(fd, "state_dir", cfg.state_dir, out, err)) return false;
  // The pid is also in the file, for a person looking (the lock itself is the flock).
  std::string pid = std::to_string(getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0)
    spdlog::warn("state_dir lock {}: cannot record the pid: {}", state_lock, errtext(errno));

  const std::string sock_lock = cfg.socket + ".lock";
  fd = ::open(sock_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    *err = "socket lock " + sock_lock + ": " + errtext(errno);
    return false;
  }
  if (!lock_or_refuse(fd, "socket", cfg.socket, out, err)) return false;
  // A daemon that holds no lock (an older build) may still serve the path.
  if (auto e = claim_socket_path(cfg.socket); !e.empty()) {
    *err = e;
    return false;
  }

  // The role socket too (issue 42: a second daemon given the same role socket took it over). Its
  // directory is the workloads' (0755, role_socket.cpp): the lock file beside the socket is 0600.
  if (const std::string roles = role_socket_path(cfg); !roles.empty()) {
    if (auto e = ensure_role_socket_dir(roles); !e.empty()) {
      *err = e;
      return false;
    }
    const std::string role_lock = roles + ".lock";
    fd = ::open(role_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
      *err = "role_socket lock " + role_lock + ": " + errtext(errno);
      return false;
    }
    if (!lock_or_refuse(fd, "role_socket", roles, out, err)) return false;
    if (auto e = claim_socket_path(roles); !e.empty()) {
      *err = "role_socket: " + e;
      return false;
    }
  }

  try {
    sched::ensure_pin_dir(cfg.pin_root);
  } catch (const std::exception& e) {
    *err = std::string("pin_root: ") + e.what();
    return false;
  }
  fd = ::open(cfg.pin_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    *err = "pin_root " + cfg.pin_root + ": " + errtext(errno);
    return false;
  }
  return lock_or_refuse(fd, "pin_root", cfg.pin_root, out, err);
}

}  // namespace c2c::daemon
