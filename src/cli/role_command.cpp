#include "cli/role_command.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../../clients/c/claim2core_role.h"

namespace c2c::cli {
namespace {

struct RoleOptions {
  std::string role;
  uint32_t tid = 0, pid = 0;
  uint64_t start = 0;
  std::string role_socket, socket;
  bool quiet = false;
};

// Like the daemon (role_socket_path): a flag, then $CLAIM2CORE_ROLE_SOCKET, then "<socket>.roles"
// beside a private daemon socket (--socket or $CLAIM2CORE_SOCKET), then the default.
std::string resolve_role_socket(const RoleOptions& o) {
  if (!o.role_socket.empty()) return o.role_socket;
  if (const char* e = std::getenv(C2C_ROLE_SOCKET_ENV); e && *e) return e;
  std::string sock = o.socket;
  if (sock.empty())
    if (const char* e = std::getenv("CLAIM2CORE_SOCKET"); e && *e) sock = e;
  if (!sock.empty() && sock != "/run/claim2core/claim2cored.sock") return sock + ".roles";
  return C2C_ROLE_DEFAULT_SOCKET;
}

std::vector<uint32_t> threads_of(uint32_t pid) {
  std::vector<uint32_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    char* end = nullptr;
    unsigned long v = std::strtoul(e.path().filename().c_str(), &end, 10);
    if (end && *end == '\0' && v > 0) out.push_back(static_cast<uint32_t>(v));
  }
  std::sort(out.begin(), out.end());
  return out;
}

int run(const RoleOptions& o, bool clear) {
  std::vector<uint32_t> tids;
  if (o.tid) tids.push_back(o.tid);
  if (o.pid) {
    tids = threads_of(o.pid);
    if (tids.empty()) {
      std::fprintf(stderr, "claim2core role: no process %u\n", o.pid);
      return 1;
    }
  }
  const std::string path = resolve_role_socket(o);
  int fd = c2c_role_connect(path.c_str());
  if (fd < 0) {
    std::fprintf(stderr, "claim2core role: UNAVAILABLE: cannot reach claim2cored's role socket %s: %s\n", path.c_str(),
                 std::strerror(-fd));
    return 1;
  }
  int rc = 0;
  for (uint32_t tid : tids) {
    char reply[C2C_ROLE_MAX_LINE + 1];
    int r = c2c_role_request(fd, tid, o.tid ? o.start : 0, clear ? nullptr : o.role.c_str(), reply, sizeof reply);
    if (r != 0) {
      // "ERR PERMISSION_DENIED uid 65534 ..." -> "PERMISSION_DENIED: uid 65534 ..."
      std::string why = reply;
      if (why.rfind("ERR ", 0) == 0) {
        why = why.substr(4);
        if (auto sp = why.find(' '); sp != std::string::npos) why[sp] = ':', why.insert(sp + 1, " ");
      } else if (why.empty()) {
        why = std::strerror(-r);
      }
      std::fprintf(stderr, "claim2core role: tid %u: %s\n", tid, why.c_str());
      rc = 1;
      // The connection is unusable after these (closed by the daemon: a limit, or the process
      // that opened it exited): the other tids would only fail the same way.
      if (r == -EPROTO || r == -ECONNRESET || r == -EPIPE) break;
      continue;
    }
    unsigned rt = 0, tgid = 0, changed = 0;
    unsigned long long start = 0;
    char got[C2C_ROLE_MAX_LINE + 1] = "";
    std::sscanf(reply, "OK %u %llu %u %256s %u", &rt, &start, &tgid, got, &changed);
    if (!o.quiet)
      std::printf("tid %u (start %llu, tgid %u): %s%s\n", rt, start, tgid,
                  clear ? "role removed" : ("role " + std::string(got)).c_str(), changed ? "" : " (unchanged)");
  }
  close(fd);
  return rc;
}

}  // namespace

void add_role_command(CLI::App& app, int& exit_code) {
  auto* role = app.add_subcommand("role", "Register the role of threads (a DRA policy's selector.registeredRole)");
  role->require_subcommand(1);
  auto opts = std::make_shared<RoleOptions>();
  auto common = [opts](CLI::App* c) {
    auto* tid = c->add_option("--tid", opts->tid, "the thread (its global tid)");
    auto* pid = c->add_option("--pid", opts->pid, "every thread of this process (as it is now)");
    tid->excludes(pid);
    c->add_option("--start", opts->start, "with --tid: the thread's start (stat field 22), checked by the daemon")
        ->needs(tid);
    c->add_option("--role-socket", opts->role_socket,
                  std::string("the role socket (default $") + C2C_ROLE_SOCKET_ENV + ", else <--socket>.roles, else " +
                      C2C_ROLE_DEFAULT_SOCKET + ")");
    c->add_option("--socket", opts->socket, "claim2cored's gRPC socket, to find its role socket beside it");
    c->add_flag("-q,--quiet", opts->quiet, "print nothing on success");
    c->callback([c, tid, pid] {
      if (tid->count() + pid->count() == 0) throw CLI::RequiredError("--tid or --pid");
      (void)c;
    });
  };
  auto* set = role->add_subcommand("set", "Register ROLE for --tid N, or for every thread of --pid N");
  set->add_option("role", opts->role, "the role, e.g. decode (<= 63 bytes of printable ASCII, no whitespace)")->required();
  common(set);
  auto* clear = role->add_subcommand("clear", "Remove the registered role of --tid N or of every thread of --pid N");
  common(clear);
  set->final_callback([opts, &exit_code] { exit_code = run(*opts, false); });
  clear->final_callback([opts, &exit_code] { exit_code = run(*opts, true); });
}

}  // namespace c2c::cli
