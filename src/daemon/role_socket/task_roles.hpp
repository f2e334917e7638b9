// RegisterTaskRole's checks (issue #14, spec/daemon.md "Task roles"): which thread a request
// names, read from /proc, and whether the caller may label it. A process may label only the
// threads of its own thread group; root or an allowed uid may label any. Pure but for
// read_role_target.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "api/node_api.hpp"

namespace c2c::daemon {

struct RoleTarget {
  uint32_t tid = 0, tgid = 0;
  uint64_t start = 0;  // /proc/<tid>/stat field 22 (the core's TaskKey.start)
  std::string comm;
};

// The live thread `tid` (Tgid from /proc/<tid>/status, start and comm from /proc/<tid>/stat);
// nullopt when it does not exist (or exited while being read).
std::optional<RoleTarget> read_role_target(const std::filesystem::path& proc_root, uint32_t tid);

// The tid a caller means, in the daemon's pid namespace. A workload in a container with its own
// pid namespace (a pod without hostPID) knows its threads by their namespaced ids: those are
// mapped through the NSpid line of its own threads (/proc/<pid>/task/*/status), so a caller
// names only its own threads that way. Same namespace (or no caller pid, gRPC): `tid` as given.
// nullopt when no thread of the caller has that namespaced id.
std::optional<uint32_t> caller_tid_in_daemon_ns(const std::filesystem::path& proc_root, uint32_t caller_pid,
                                                uint32_t tid);

// nullopt when `caller` may label `target`, else the sentence that refuses it (PERMISSION_DENIED).
std::optional<std::string> role_refusal(const node::RoleCaller& caller, const RoleTarget& target);

// Whether the process of a pidfd has exited (the pidfd polls readable). A caller's pid (SO_PEERCRED,
// taken at connect) names that process only while it lives: once it exited the pid can be reused
// by another process, whose threads the pid would then seem to own (issue 42). So the check comes
// after everything read under that pid: alive then means the pid named the caller throughout.
bool process_exited(int pidfd);

}  // namespace c2c::daemon
