// How a role-socket connection is bound to the process that connected (issue 42, spec/daemon.md
// "Identity that cannot be reused"). SO_PEERCRED's pid names that process only while it lives:
// once it exited the pid may be reused, and a forked child that kept the connection would speak
// for whatever process got the pid. So each request is checked against a binding made at accept:
//   * a pidfd from SO_PEERPIDFD (Linux >= 6.5): the kernel's own binding to the process that
//     called connect(), even if it exited since;
//   * else (an older kernel, or `role_peer_identity: start-time`, which forces this path so that
//     it is tested on any kernel) the pid's start time, /proc/<pid>/stat field 22, read at
//     accept, with the process's effective uid checked against SO_PEERCRED's. A request is
//     refused once the pid is gone or its start time differs: another process has the pid. Not
//     told apart: a pid reused within one clock tick (10 ms) of the first process's start, and
//     (as with any binding made at accept) a peer that exited and whose pid a process of the
//     same uid reused between its connect() and the accept; a process of another uid there is
//     refused by the uid check.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "daemon/service/peer_auth.hpp"

namespace c2c::daemon {

enum class PeerIdentityMode : uint8_t {
  Auto,       // SO_PEERPIDFD when the kernel has it, else the start time
  StartTime,  // always the start time (config role_peer_identity: start-time)
};
// "auto" / "start-time"; nullopt for anything else.
std::optional<PeerIdentityMode> parse_peer_identity_mode(const std::string& text);

struct PeerIdentity {
  pid_t pid = 0;
  int pidfd = -1;                       // owned by the caller (closed with the connection); -1: start time
  std::optional<uint64_t> start_ticks = std::nullopt;  // when pidfd is -1: the pid's start (stat field 22) at accept
};

// Binds the peer of the Unix socket `fd` (credentials `peer`); false with *err (the peer exited,
// or the process at its pid is not the one that connected).
bool bind_peer(int fd, const PeerCred& peer, PeerIdentityMode mode, const std::filesystem::path& proc_root,
               PeerIdentity* out, std::string* err);

// Whether the bound process is gone: its pidfd polls readable, or its pid's start time is not the
// one bound (exited, reused). An identity with neither is gone (fail closed).
bool peer_gone(const PeerIdentity& id, const std::filesystem::path& proc_root = "/proc");

// /proc/<pid>/stat field 22 (clock ticks after boot), nullopt when there is no such process.
std::optional<uint64_t> process_start_ticks(const std::filesystem::path& proc_root, pid_t pid);

}  // namespace c2c::daemon
