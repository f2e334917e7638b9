// The scheduler's exit record, as the BPF side stores it with UEI_RECORD (6.12
// tools/sched_ext/include/scx/user_exit_info.h) in its .data section.
#pragma once

#include <cstdint>
#include <string>

namespace c2c::sched {

// Layout of struct user_exit_info (user_exit_info.h, 6.12): kind, exit_code, reason, msg.
struct UserExitInfo {
  int32_t kind;
  int64_t exit_code;
  char reason[128];
  char msg[1024];
};
static_assert(sizeof(UserExitInfo) == 8 + 8 + 128 + 1024, "matches struct user_exit_info");

struct ExitReport {
  int32_t kind = 0;       // enum scx_exit_kind; 0 = still running
  int64_t exit_code = 0;
  std::string reason;
  std::string msg;
  std::string dump;       // the kernel's debug dump at an error exit (ops.dump's lines among them)
};

// Name of enum scx_exit_kind (6.12 kernel/sched/ext.c), e.g. "UNREG", "ERROR_STALL", "SYSRQ".
std::string exit_kind_name(int32_t kind);

// True for kinds that mean the kernel or the BPF program ended the scheduler on an error.
bool exit_kind_is_error(int32_t kind);

// Copies a raw record into a report (strings are cut at the first NUL or their buffer end).
ExitReport to_report(const UserExitInfo& raw);

// One-line JSON: {"exit_kind":"...","exit_code":N,"reason":"...","msg":"..."}, and "dump":"..."
// when the record holds a dump.
std::string exit_json(const ExitReport& r);

}  // namespace c2c::sched
