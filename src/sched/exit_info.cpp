#include "sched/exit_info.hpp"

#include <cstring>

#include <nlohmann/json.hpp>

namespace c2c::sched {

// Values of enum scx_exit_kind in 6.12 (kernel/sched/ext.c).
std::string exit_kind_name(int32_t kind) {
  switch (kind) {
    case 0: return "NONE";
    case 1: return "DONE";
    case 64: return "UNREG";
    case 65: return "UNREG_BPF";
    case 66: return "UNREG_KERN";
    case 67: return "SYSRQ";
    case 1024: return "ERROR";
    case 1025: return "ERROR_BPF";
    case 1026: return "ERROR_STALL";
    default: return "KIND_" + std::to_string(kind);
  }
}

bool exit_kind_is_error(int32_t kind) { return kind >= 1024; }

static std::string bounded(const char* s, size_t cap) { return std::string(s, strnlen(s, cap)); }

ExitReport to_report(const UserExitInfo& raw) {
  ExitReport r;
  r.kind = raw.kind;
  r.exit_code = raw.exit_code;
  r.reason = bounded(raw.reason, sizeof raw.reason);
  r.msg = bounded(raw.msg, sizeof raw.msg);
  return r;
}

std::string exit_json(const ExitReport& r) {
  nlohmann::json j;
  j["exit_kind"] = exit_kind_name(r.kind);
  j["exit_code"] = r.exit_code;
  j["reason"] = r.reason;
  j["msg"] = r.msg;
  if (!r.dump.empty()) j["dump"] = r.dump;
  return j.dump();
}

}  // namespace c2c::sched
