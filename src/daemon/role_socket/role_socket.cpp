#include "daemon/role_socket/role_socket.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <deque>
#include <vector>

#include "daemon/process/exclusive.hpp"
#include "daemon/role_socket/role_protocol.hpp"
#include "daemon/role_socket/task_roles.hpp"

namespace c2c::daemon {
namespace {

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Bytes read per recv: with the line limit, what a connection's buffer can hold at most.
constexpr size_t kChunk = 512;

}  // namespace

struct RoleSocket::Conn {
  int fd = -1;
  PeerIdentity id;  // the process that connected (its pidfd is closed with the connection)
  PeerCred peer;
  bool privileged = false;
  bool open = true;      // false once dropped (an engine reply may still hold a reference)
  bool closing = false;  // a refusal that ends the connection is queued: flush it, then close
  bool eof = false;      // the client shut its side down: answer what it sent, then close
  std::string buf;       // bytes received and not yet taken as lines
  // One slot per request, in request order: "" until its reply is known.
  struct Slot {
    std::string text;
    bool ready = false;
  };
  std::deque<std::shared_ptr<Slot>> replies;
  uint32_t in_flight = 0;       // requests with the engine, not answered yet
  uint64_t idle_since = 0;      // accept, or the last reply
  uint64_t paused_until = 0;    // out of rate tokens: not read before
  ~Conn() {
    if (fd >= 0) ::close(fd);
    if (id.pidfd >= 0) ::close(id.pidfd);
  }
};

// The engine's loop fills a reply slot here and wakes the role thread, which alone touches the
// connections (so no lock per connection, and the admission counts stay single-threaded).
struct RoleSocket::Completions {
  struct Done {
    std::shared_ptr<Conn> conn;
    std::shared_ptr<Conn::Slot> slot;
    std::string text;
  };
  std::mutex mu;
  std::vector<Done> done;
  int efd = -1;
  Completions() : efd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~Completions() {
    if (efd >= 0) ::close(efd);
  }
  void push(Done d) {
    {
      std::lock_guard lock(mu);
      done.push_back(std::move(d));
    }
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(efd, &one, sizeof one);
  }
  std::vector<Done> take() {
    uint64_t v = 0;
    [[maybe_unused]] auto n = ::read(efd, &v, sizeof v);
    std::vector<Done> out;
    std::lock_guard lock(mu);
    out.swap(done);
    return out;
  }
};

std::unique_ptr<RoleSocket> RoleSocket::open(const std::string& path, Engine& engine, std::shared_ptr<PeerPolicy> peers,
                                             const RoleLimits& limits, PeerIdentityMode identity, Metrics& metrics,
                                             std::string* err) {
  std::unique_ptr<RoleSocket> s(new RoleSocket(engine, limits, metrics));
  s->identity_ = identity;
  if (identity == PeerIdentityMode::StartTime)
    spdlog::info("role socket: peers bound by their start time (role_peer_identity: start-time)");
  s->peers_ = std::move(peers);
  s->path_ = path;
  s->done_ = std::make_shared<Completions>();
  if (auto e = ensure_role_socket_dir(path); !e.empty()) {  // (made by acquire_node_locks already)
    *err = e;
    return nullptr;
  }
  // Anyone may connect: each request is authorised by the peer's credentials instead.
  s->fd_ = listen_unix(path, 0666, err);
  if (s->fd_ < 0) return nullptr;
  s->wake_ = eventfd(0, EFD_CLOEXEC);
  metrics.set_role_connections(0);
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
  for (auto& [fd, c] : conns_) c->open = false;
  conns_.clear();
  unlink(path_.c_str());
}

// Whether the connection's socket is read now: not while it owes replies past its (or its uid's)
// in-flight bound, has a complete line waiting, waits for a rate token, or is closing.
bool RoleSocket::reading(const Conn& c, uint64_t now) const {
  if (c.closing || c.eof || now < c.paused_until || c.buf.find('\n') != std::string::npos) return false;
  return admission_.may_start(c.peer.uid, c.privileged, c.in_flight);
}

void RoleSocket::loop() {
  std::vector<pollfd> fds;
  std::vector<std::shared_ptr<Conn>> polled;
  uint64_t pruned = 0;
  bool accept_paused_until_set = false;
  uint64_t accept_paused_until = 0;
  while (!stopped_) {
    const uint64_t now = now_ns();
    if (now - pruned > 1'000'000'000ull) {
      admission_.prune(now);
      pruned = now;
    }
    // Idle connections go; the earliest deadline (idle or a rate pause) bounds the wait.
    uint64_t next = UINT64_MAX;
    for (auto it = conns_.begin(); it != conns_.end();) {
      auto c = it++->second;  // a copy: drop() erases it
      if (c->in_flight == 0 && !c->closing && c->buf.find('\n') == std::string::npos) {
        const uint64_t deadline = c->idle_since + admission_.limits().idle_timeout_ns;
        if (now >= deadline) {
          refuse(c, RoleRefusal::IdleTimeout, "RESOURCE_EXHAUSTED",
                 refusal_message(RoleRefusal::IdleTimeout, admission_.limits(), c->peer.uid), true);
          continue;
        }
        next = std::min(next, deadline);
      }
      if (c->paused_until > now) next = std::min(next, c->paused_until);
    }
    if (accept_paused_until_set && accept_paused_until > now) next = std::min(next, accept_paused_until);
    const bool accepting = !accept_paused_until_set || accept_paused_until <= now;
    fds.clear();
    polled.clear();
    fds.push_back({wake_, POLLIN, 0});
    fds.push_back({done_->efd, POLLIN, 0});
    fds.push_back({fd_, static_cast<short>(accepting ? POLLIN : 0), 0});
    for (const auto& [fd, c] : conns_) {
      fds.push_back({fd, static_cast<short>(reading(*c, now) ? POLLIN : 0), 0});
      polled.push_back(c);
    }
    const int timeout =
        next == UINT64_MAX ? -1 : static_cast<int>(std::min<uint64_t>((next - now) / 1'000'000 + 1, 60'000));
    if (poll(fds.data(), fds.size(), timeout) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("role socket: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[0].revents) return;
    // Nothing thrown on this thread may end the process (issue 42): a failure is the one
    // connection's, which is closed.
    try {
      if (fds[1].revents) take_completions();
    } catch (const std::exception& e) {
      spdlog::error("role socket: replies: {}", e.what());
    }
    const uint64_t t = now_ns();
    if (accepting && (fds[2].revents & POLLIN)) {
      int failed = 0;
      try {
        // A few per wake-up: a burst of connects is not served one poll() at a time.
        for (int k = 0; k < 16 && failed == 0; ++k) failed = accept_one(t);
        accept_paused_until_set = false;
      } catch (const std::exception& e) {
        spdlog::error("role socket: accept: {}", e.what());
      }
      if (failed == EMFILE || failed == ENFILE || failed == ENOBUFS || failed == ENOMEM) {
        // No descriptor to spare: a readable listening socket would wake poll() at once, forever.
        accept_paused_until_set = true;
        accept_paused_until = t + 100'000'000ull;
      }
    }
    for (size_t i = 0; i < polled.size(); ++i) {
      const auto& c = polled[i];
      if (!c->open) continue;
      const short ev = fds[i + 3].revents;
      try {
        if (ev & POLLIN) {
          on_readable(c, t);
        } else if (ev & (POLLHUP | POLLERR | POLLNVAL)) {
          drop(c);  // the client is gone (and we were not reading it: nothing more to take)
        } else if (c->buf.find('\n') != std::string::npos) {
          take_lines(c, t);  // lines left from an earlier read, now that a slot or token is free
        }
      } catch (const std::exception& e) {
        spdlog::error("role socket: uid {} pid {}: {}; connection closed", c->peer.uid, c->peer.pid, e.what());
        drop(c);
      }
    }
  }
}

int RoleSocket::accept_one(uint64_t now) {
  int cfd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (cfd < 0) return errno;
  auto c = std::make_shared<Conn>();
  c->fd = cfd;
  c->idle_since = now;
  std::string why;
  if (!peer_cred(cfd, &c->peer, &why)) {
    spdlog::warn("role socket: {}; connection closed", why);
    return 0;  // c closes it
  }
  c->privileged = c->peer.uid == 0 || peers_->allows(c->peer.uid);
  // Every connection is accepted and its peer read, so that one over a limit is told why and the
  // listening socket's backlog never fills up with them (root's connection would wait behind).
  if (auto r = admission_.admit(c->peer.uid, c->privileged); r != RoleRefusal::None) {
    metrics_.role_refusal(reason_name(r));
    spdlog::debug("role socket: refused a connection of uid {} (pid {}): {}", c->peer.uid, c->peer.pid, reason_name(r));
    const std::string line = format_role_error({"RESOURCE_EXHAUSTED", refusal_message(r, admission_.limits(), c->peer.uid)});
    [[maybe_unused]] auto n = send(cfd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    return 0;
  }
  conns_[cfd] = c;
  metrics_.set_role_connections(static_cast<double>(admission_.connections()));
  const bool bound = bind_peer(cfd, c->peer, identity_, "/proc", &c->id, &why);
  if (!bound || peer_gone(c->id)) {
    if (!bound) spdlog::warn("role socket: uid {} pid {}: {}", c->peer.uid, c->peer.pid, why);
    refuse(c, RoleRefusal::PeerExited, "UNAUTHENTICATED", refusal_message(RoleRefusal::PeerExited, admission_.limits(), c->peer.uid),
           true);
  }
  return 0;
}

void RoleSocket::on_readable(const std::shared_ptr<Conn>& c, uint64_t now) {
  char chunk[kChunk];
  ssize_t n = recv(c->fd, chunk, sizeof chunk, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n < 0) {
    drop(c);
    return;
  }
  if (n == 0) {  // the client shut its side down (printf ... | nc -U): its lines are still answered
    c->eof = true;
    take_lines(c, now);
    flush(c);
    return;
  }
  c->buf.append(chunk, static_cast<size_t>(n));
  take_lines(c, now);
}

// Complete lines become requests while the connection may have another one in flight (and its
// uid a rate token); the rest wait in the buffer, which then is not read further (reading()).
void RoleSocket::take_lines(const std::shared_ptr<Conn>& c, uint64_t now) {
  size_t nl;
  while (c->open && !c->closing && (nl = c->buf.find('\n')) != std::string::npos) {
    if (!admission_.may_start(c->peer.uid, c->privileged, c->in_flight) || now < c->paused_until) return;
    std::string line = c->buf.substr(0, nl);
    c->buf.erase(0, nl + 1);
    // The connecting process must still be the pid's (issue 42: a forked child that kept the
    // connection of an exited parent spoke with the parent's pid, reused by another process).
    if (peer_gone(c->id)) {
      refuse(c, RoleRefusal::PeerExited, "UNAUTHENTICATED",
             refusal_message(RoleRefusal::PeerExited, admission_.limits(), c->peer.uid), true);
      return;
    }
    // Every line takes a token, a malformed one too: its answer costs this thread as much.
    if (!admission_.take_token(c->peer.uid, c->privileged, now)) {
      c->paused_until = admission_.token_at(c->peer.uid, now);
      refuse(c, RoleRefusal::Rate, "RESOURCE_EXHAUSTED", refusal_message(RoleRefusal::Rate, admission_.limits(), c->peer.uid),
             false);
      return;
    }
    auto parsed = parse_role_line(line);
    if (auto* e = std::get_if<RoleLineError>(&parsed)) {
      refuse(c, RoleRefusal::None, e->code, e->message, false);
      continue;
    }
    node::RoleRequest q = std::get<node::RoleRequest>(parsed);
    q.caller = node::RoleCaller{static_cast<uint32_t>(c->peer.pid), static_cast<uint32_t>(c->peer.uid), c->privileged,
                                c->id.pidfd, c->id.start_ticks};
    auto slot = std::make_shared<Conn::Slot>();
    c->replies.push_back(slot);
    auto reply = std::make_shared<node::RoleReply>();
    Command cmd;
    cmd.lane = Lane::Role;
    // The command holds the connection (and so its pidfd) until its reply is handed back.
    cmd.apply = [q, reply](Engine& e) {
      *reply = e.register_role(q);
      if (reply->code == node::RoleReply::Code::PermissionDenied || reply->code == node::RoleReply::Code::CallerExited)
        spdlog::warn("role socket: refused: {}", reply->message);
      return reply->durable;
    };
    cmd.finish = [c, slot, reply, done = done_](Engine& e) {
      // The batch was rolled back if it could not be made durable: nothing changed.
      std::string text = reply->durable && !e.persist_error().empty()
                             ? format_role_error({"UNAVAILABLE", "not applied, state unchanged: " + e.persist_error()})
                             : format_role_reply(*reply);
      done->push({c, slot, std::move(text)});
    };
    if (!engine_.submit(std::move(cmd))) {
      slot->text = format_role_error({"UNAVAILABLE", "claim2cored is draining (SIGTERM)"});
      slot->ready = true;
      flush(c);
      continue;
    }
    ++c->in_flight;
    admission_.started(c->peer.uid, c->privileged);
  }
  if (c->open && !c->closing && c->buf.size() > kMaxRoleLine) {
    refuse(c, RoleRefusal::LineTooLong, "INVALID_ARGUMENT",
           "line: longer than " + std::to_string(kMaxRoleLine) + " bytes; connection closed", true);
  }
}

void RoleSocket::take_completions() {
  for (auto& d : done_->take()) {
    // In flight until the engine answered, whether or not the client is still there: a client
    // cannot leave work with the engine and come back for more.
    admission_.finished(d.conn->peer.uid, d.conn->privileged);
    if (d.conn->in_flight > 0) --d.conn->in_flight;
    d.slot->text = std::move(d.text);
    d.slot->ready = true;
    if (d.conn->open) {
      d.conn->idle_since = now_ns();
      flush(d.conn);
    }
  }
}

// Replies leave in request order; a client that does not read them (its buffer full) is cut off,
// so this thread never blocks on it.
void RoleSocket::flush(const std::shared_ptr<Conn>& c) {
  while (c->open && !c->replies.empty() && c->replies.front()->ready) {
    const std::string& line = c->replies.front()->text;
    if (send(c->fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
      metrics_.role_refusal(reason_name(RoleRefusal::UnreadReplies));
      spdlog::debug("role socket: uid {} pid {} does not read its replies; connection closed", c->peer.uid, c->peer.pid);
      drop(c);
      return;
    }
    c->replies.pop_front();
  }
  const bool done = c->closing || (c->eof && c->in_flight == 0 && c->buf.find('\n') == std::string::npos);
  if (c->open && done && c->replies.empty()) drop(c);
}

// An answer from this thread (a malformed line, a limit): it takes its place among the replies.
// `why` None: a malformed request, not a limit (not counted as a refusal).
void RoleSocket::refuse(const std::shared_ptr<Conn>& c, RoleRefusal why, const std::string& code,
                        const std::string& message, bool close_after) {
  if (why != RoleRefusal::None) {
    metrics_.role_refusal(reason_name(why));
    spdlog::debug("role socket: uid {} pid {}: {} {}", c->peer.uid, c->peer.pid, code, message);
  }
  auto slot = std::make_shared<Conn::Slot>();
  slot->text = format_role_error({code, message});
  slot->ready = true;
  c->replies.push_back(std::move(slot));
  c->idle_since = now_ns();  // answered: the idle time counts from here
  if (close_after) {
    c->closing = true;
    c->buf.clear();
  }
  flush(c);
}

void RoleSocket::drop(const std::shared_ptr<Conn>& c) {
  if (!c->open) return;
  c->open = false;
  // The descriptor is closed with the last reference (an engine reply may hold one): shut it
  // down now so the client sees the end at once.
  shutdown(c->fd, SHUT_RDWR);
  admission_.closed(c->peer.uid, c->privileged);
  conns_.erase(c->fd);
  metrics_.set_role_connections(static_cast<double>(admission_.connections()));
}

}  // namespace c2c::daemon
