#include "daemon/service/peer_auth.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace c2c::daemon {

void PeerPolicy::set(std::vector<uint32_t> allowed, uid_t self) {
  if (std::find(allowed.begin(), allowed.end(), self) == allowed.end()) allowed.push_back(self);
  std::lock_guard lock(mu_);
  allowed_ = std::move(allowed);
}

bool PeerPolicy::allows(uid_t uid) const {
  std::lock_guard lock(mu_);
  return std::find(allowed_.begin(), allowed_.end(), uid) != allowed_.end();
}

bool peer_cred(int fd, PeerCred* out, std::string* err) {
  ucred c{};
  socklen_t len = sizeof c;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0) {
    *err = std::string("SO_PEERCRED: ") + std::strerror(errno);
    return false;
  }
  out->pid = c.pid;
  out->uid = c.uid;
  out->gid = c.gid;
  return true;
}

int listen_unix(const std::string& path, mode_t mode, std::string* err) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    *err = "socket path too long: " + path;
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *err = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  unlink(path.c_str());  // a stale socket of a killed daemon
  // Bound with no permission for anyone, then opened up to `mode`: no client connects in between.
  mode_t old = umask(0177);
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  umask(old);
  if (rc != 0) {
    *err = "bind " + path + ": " + std::strerror(errno);
    close(fd);
    return -1;
  }
  if (chmod(path.c_str(), mode) != 0 || listen(fd, 128) != 0) {
    *err = "listen " + path + ": " + std::strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

std::unique_ptr<UnixListener> UnixListener::open(const std::string& path, std::shared_ptr<PeerPolicy> policy,
                                                 Accept accepted, uint32_t max_connections, std::string* err) {
  std::unique_ptr<UnixListener> l(new UnixListener());
  rlimit rl{};
  size_t by_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur / 2 : SIZE_MAX;
  l->cap_ = std::max<size_t>(1, std::min<size_t>(max_connections, by_fds));
  l->path_ = path;
  l->policy_ = std::move(policy);
  l->accepted_ = std::move(accepted);
  auto dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *err = "socket directory " + dir.string() + ": " + ec.message();
    return nullptr;
  }
  // The directory is the first gate: nobody else may even reach the socket inode.
  if (chmod(dir.c_str(), 0700) != 0) {
    *err = "chmod 0700 " + dir.string() + ": " + std::strerror(errno);
    return nullptr;
  }
  l->fd_ = listen_unix(path, 0600, err);
  if (l->fd_ < 0) return nullptr;
  l->wake_ = eventfd(0, EFD_CLOEXEC);
  l->thread_ = std::thread([p = l.get()] { p->loop(); });
  return l;
}

void UnixListener::prune() {
  std::erase_if(conns_, [](const Conn& c) {
    struct stat st {};
    return fstat(c.fd, &st) != 0 || st.st_ino != c.ino || !S_ISSOCK(st.st_mode);
  });
}

void UnixListener::loop() {
  bool pause = false, capped = false;
  while (true) {
    if (conns_.size() >= cap_) prune();
    bool at_cap = conns_.size() >= cap_;
    if (at_cap != capped) {
      if (at_cap)
        spdlog::warn("{} connections on {} (max_connections, or half the file-descriptor limit): new ones wait "
                     "until one closes",
                     conns_.size(), path_);
      else
        spdlog::info("accepting connections on {} again ({} open)", path_, conns_.size());
      capped = at_cap;
    }
    // Without a descriptor to spare, a readable listening socket would wake poll() at once,
    // forever: wait on the wake fd alone for a while instead.
    bool listen = !at_cap && !pause;
    pollfd fds[2] = {{wake_, POLLIN, 0}, {fd_, POLLIN, 0}};
    if (poll(fds, listen ? 2 : 1, listen ? -1 : 100) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("socket listener: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[0].revents) return;
    pause = false;
    if (!listen) continue;
    int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        spdlog::warn("accept on {}: {} ({} connections open): pausing 100 ms", path_, std::strerror(errno),
                     conns_.size());
        pause = true;
        prune();
      }
      continue;
    }
    PeerCred cred;
    std::string why;
    if (!peer_cred(c, &cred, &why)) {
      spdlog::warn("refused a connection on {}: {}", path_, why);
      ++refused_;
      close(c);
      continue;
    }
    if (!policy_->allows(cred.uid)) {
      spdlog::warn("refused a connection on {} from uid {} (pid {}): uid not in allowed_uids", path_, cred.uid, cred.pid);
      ++refused_;
      close(c);
      continue;
    }
    spdlog::debug("accepted a connection from uid {} (pid {})", cred.uid, cred.pid);
    struct stat st {};
    if (fstat(c, &st) == 0) conns_.push_back(Conn{c, st.st_ino});
    accepted_(c);
  }
}

void UnixListener::stop() {
  if (wake_ >= 0) {
    uint64_t one = 1;
    [[maybe_unused]] auto n = write(wake_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
    unlink(path_.c_str());
  }
}

UnixListener::~UnixListener() {
  stop();
  if (wake_ >= 0) close(wake_);
}

}  // namespace c2c::daemon
