#include "daemon/role_socket/task_roles.hpp"

#include <poll.h>

#include <fstream>
#include <sstream>

#include "host/proc_stat.hpp"

namespace c2c::daemon {

std::optional<RoleTarget> read_role_target(const std::filesystem::path& proc_root, uint32_t tid) {
  if (tid == 0) return std::nullopt;
  const auto dir = proc_root / std::to_string(tid);
  std::ifstream stat(dir / "stat");
  std::string line;
  if (!stat || !std::getline(stat, line)) return std::nullopt;
  auto f = host::parse_stat(line);
  if (!f || f->pid != tid) return std::nullopt;
  std::ifstream status(dir / "status");
  uint32_t tgid = 0;
  while (std::getline(status, line))
    if (line.rfind("Tgid:", 0) == 0) {
      const size_t at = line.find_first_not_of(" \t", 5);
      auto v = at == std::string::npos ? std::nullopt : host::parse_u64(std::string_view(line).substr(at));
      if (v && *v > 0 && *v <= UINT32_MAX) tgid = static_cast<uint32_t>(*v);
      break;
    }
  if (tgid == 0) return std::nullopt;
  // The thread may have exited and its tid been reused between the two reads: the start read
  // again must be the same, so (tid, start) and tgid describe one task (INV-2).
  std::ifstream again(dir / "stat");
  if (!again || !std::getline(again, line)) return std::nullopt;
  auto g = host::parse_stat(line);
  if (!g || g->start_ticks != f->start_ticks) return std::nullopt;
  return RoleTarget{tid, tgid, f->start_ticks, f->comm};
}

namespace {

// The last id of an NSpid line ("NSpid:\t4107\t7"): the id in the task's innermost namespace.
std::optional<std::pair<uint32_t, uint32_t>> nspid(const std::filesystem::path& status) {
  std::ifstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    std::istringstream words(line.substr(6));
    uint64_t first = 0, v = 0, last = 0;
    if (!(words >> first)) return std::nullopt;
    last = first;
    while (words >> v) last = v;
    return std::pair{static_cast<uint32_t>(first), static_cast<uint32_t>(last)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<uint32_t> caller_tid_in_daemon_ns(const std::filesystem::path& proc_root, uint32_t caller_pid,
                                                uint32_t tid) {
  if (caller_pid == 0) return tid;
  std::error_code ec;
  const auto mine = std::filesystem::read_symlink(proc_root / "self" / "ns" / "pid", ec);
  const auto theirs = std::filesystem::read_symlink(proc_root / std::to_string(caller_pid) / "ns" / "pid", ec);
  if (ec || mine == theirs) return tid;
  for (const auto& t : std::filesystem::directory_iterator(proc_root / std::to_string(caller_pid) / "task", ec))
    if (auto ids = nspid(t.path() / "status"); ids && ids->second == tid) return ids->first;
  return std::nullopt;
}

std::optional<std::string> role_refusal(const node::RoleCaller& caller, const RoleTarget& target) {
  if (caller.privileged || caller.pid == target.tgid) return std::nullopt;
  return "uid " + std::to_string(caller.uid) + " (pid " + std::to_string(caller.pid) + ") may label only the threads of its own process; tid " +
         std::to_string(target.tid) + " belongs to process " + std::to_string(target.tgid) +
         " (root or a uid in allowed_uids may label any thread)";
}

bool process_exited(int pidfd) {
  if (pidfd < 0) return true;  // no pidfd: nothing says the pid is still the caller's
  pollfd p{pidfd, POLLIN, 0};
  // POLLIN: exited. An error (not a pidfd, closed) is treated as exited too: fail closed.
  const int n = ::poll(&p, 1, 0);
  return n != 0 && (n < 0 || (p.revents & (POLLIN | POLLERR | POLLNVAL | POLLHUP)) != 0);
}

}  // namespace c2c::daemon
