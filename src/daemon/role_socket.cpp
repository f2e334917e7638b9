#include "daemon/role_socket.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "daemon/role_protocol.hpp"

namespace c2c::daemon {

// Connections at once: a workload registers a few threads at start and hangs up.
constexpr size_t kMaxRoleConnections = 256;

struct RoleSocket::Conn {
  int fd = -1;
  PeerCred peer;
  bool privileged = false;
  std::string buf;
  ~Conn() {
    if (fd >= 0) close(fd);
  }
  // Replies are a few dozen bytes to a socket that reads them: a full buffer means a client that
  // does not read, which is cut off (the loop thread never blocks on it).
  void reply(const std::string& line) const {
    if (send(fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
      shutdown(fd, SHUT_RDWR);
  }
};

std::string role_socket_path(const DaemonConfig& cfg) {
  if (!cfg.role_socket.empty()) return cfg.role_socket == "off" ? "" : cfg.role_socket;
  // A private gRPC socket (tests, the demo) gets a private role socket beside it.
  if (cfg.socket != DaemonConfig{}.socket) return cfg.socket + ".roles";
  return kDefaultRoleSocket;
}

std::unique_ptr<RoleSocket> RoleSocket::open(const std::string& path, Engine& engine, std::shared_ptr<PeerPolicy> peers,
                                             std::string* err) {
  std::unique_ptr<RoleSocket> s(new RoleSocket(engine));
  s->peers_ = std::move(peers);
  s->path_ = path;
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  // A directory the daemon creates is opened to everyone (whatever the umask): workloads of any
  // uid must reach the socket. One that exists is the operator's to set.
  if (std::filesystem::create_directories(dir, ec) && chmod(dir.c_str(), 0755) != 0) ec.assign(errno, std::generic_category());
  if (ec) {
    *err = "role socket directory " + dir.string() + ": " + ec.message();
    return nullptr;
  }
  // Anyone may connect: each request is authorised by the peer's credentials instead.
  s->fd_ = listen_unix(path, 0666, err);
  if (s->fd_ < 0) return nullptr;
  s->wake_ = eventfd(0, EFD_CLOEXEC);
  s->thread_ = std::thread([p = s.get()] { p->loop(); });
  return s;
}

RoleSocket::~RoleSocket() {
  stop();
  if (fd_ >= 0) close(fd_);
  if (wake_ >= 0) close(wake_);
}

void RoleSocket::stop() {
  if (stopped_.exchange(true)) return;
  uint64_t one = 1;
  if (wake_ >= 0) (void)!write(wake_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  conns_.clear();
  unlink(path_.c_str());
}

void RoleSocket::loop() {
  std::vector<pollfd> fds;
  while (!stopped_) {
    fds.clear();
    fds.push_back({wake_, POLLIN, 0});
    fds.push_back({fd_, static_cast<short>(conns_.size() < kMaxRoleConnections ? POLLIN : 0), 0});
    for (const auto& [fd, c] : conns_) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("role socket: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[0].revents) return;
    if (fds[1].revents & POLLIN) {
      int cfd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (cfd >= 0) {
        auto c = std::make_shared<Conn>();
        c->fd = cfd;
        std::string why;
        if (!peer_cred(cfd, &c->peer, &why)) {
          spdlog::warn("role socket: {}; connection closed", why);
          continue;  // c closes it
        }
        c->privileged = c->peer.uid == 0 || peers_->allows(c->peer.uid);
        conns_[cfd] = c;
      }
    }
    for (size_t i = 2; i < fds.size(); ++i)
      if (fds[i].revents) {
        auto it = conns_.find(fds[i].fd);
        if (it != conns_.end()) on_readable(it->second);
      }
  }
}

void RoleSocket::on_readable(std::shared_ptr<Conn> c) {  // a copy: erase() below drops the map's
  char chunk[512];
  ssize_t n = recv(c->fd, chunk, sizeof chunk, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {  // hung up: a reply still owed holds its own reference
    conns_.erase(c->fd);
    return;
  }
  c->buf.append(chunk, static_cast<size_t>(n));
  size_t nl;
  while ((nl = c->buf.find('\n')) != std::string::npos) {
    std::string line = c->buf.substr(0, nl);
    c->buf.erase(0, nl + 1);
    auto parsed = parse_role_line(line);
    if (auto* e = std::get_if<RoleLineError>(&parsed)) {
      c->reply(format_role_error(*e));
      continue;
    }
    node::RoleRequest q = std::get<node::RoleRequest>(parsed);
    q.caller = node::RoleCaller{static_cast<uint32_t>(c->peer.pid), static_cast<uint32_t>(c->peer.uid), c->privileged};
    auto reply = std::make_shared<node::RoleReply>();
    Command cmd;
    cmd.apply = [q, reply](Engine& e) {
      *reply = e.register_role(q);
      if (reply->code == node::RoleReply::Code::PermissionDenied)
        spdlog::warn("role socket: refused: {}", reply->message);
      return reply->durable;
    };
    cmd.finish = [c, reply](Engine& e) {
      // The batch was rolled back if it could not be made durable: nothing changed.
      if (reply->durable && !e.persist_error().empty()) {
        c->reply(format_role_error({"UNAVAILABLE", "not applied, state unchanged: " + e.persist_error()}));
        return;
      }
      c->reply(format_role_reply(*reply));
    };
    if (!engine_.submit(std::move(cmd))) c->reply(format_role_error({"UNAVAILABLE", "claim2cored is draining (SIGTERM)"}));
  }
  if (c->buf.size() > kMaxRoleLine) {
    c->reply(format_role_error({"INVALID_ARGUMENT", "line: longer than " + std::to_string(kMaxRoleLine) + " bytes"}));
    conns_.erase(c->fd);
  }
}

}  // namespace c2c::daemon
