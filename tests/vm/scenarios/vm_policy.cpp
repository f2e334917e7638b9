#include "vm_policy.hpp"

#include <bpf/bpf.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "vm_proc.hpp"

namespace c2c::vm {

uint8_t parse_class(const std::string& name) {
  if (name == "lc" || name == "latency-critical") return C2C_CLASS_LATENCY_CRITICAL;
  if (name == "comm" || name == "comm-progress") return C2C_CLASS_COMM_PROGRESS;
  if (name == "throughput") return C2C_CLASS_THROUGHPUT;
  if (name == "background") return C2C_CLASS_BACKGROUND;
  if (name == "normal") return C2C_CLASS_NORMAL;
  throw std::invalid_argument("policy.class: unknown execution class '" + name + "'");
}

c2c_policy_value make_value(const PolicySpec& spec, pid_t tgid, uint64_t start_ticks) {
  c2c_policy_value v{};
  v.start_ticks = start_ticks;
  v.generation = spec.generation;
  v.tgid = static_cast<uint32_t>(tgid);
  v.abi_version = C2C_ABI_VERSION;
  v.exec_class = spec.exec_class;
  if (spec.slice_ns) {
    v.slice_ns = spec.slice_ns;
    v.flags |= C2C_F_CUSTOM_SLICE;
  }
  if (spec.boost_ns) {
    timespec now{};
    clock_gettime(CLOCK_BOOTTIME, &now);  // same clock as bpf_ktime_get_boot_ns
    const uint64_t now_ns = static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
    v.boost_until_ns = now_ns + spec.boost_ns;
    v.max_boost_ns = spec.boost_ns;
    v.flags |= C2C_F_BOOST;
  }
  if (spec.allowed) {
    for (unsigned i = 0; i < C2C_CPUMASK_WORDS; ++i) v.allowed_cpus[i] = spec.allowed->words()[i];
    v.flags |= C2C_F_ALLOWED_CPUS;
  }
  if (spec.preferred) {
    for (unsigned i = 0; i < C2C_CPUMASK_WORDS; ++i) v.preferred_cpus[i] = spec.preferred->words()[i];
    v.flags |= C2C_F_PREFERRED_CPUS;
  }
  return v;
}

PolicyMap::PolicyMap(const std::string& pin) : fd_(bpf_obj_get(pin.c_str())) {
  if (fd_ < 0)
    throw std::runtime_error("policy map " + pin + ": " + std::strerror(errno) + " (is the scheduler loaded?)");
}

PolicyMap::~PolicyMap() {
  if (fd_ >= 0) close(fd_);
}

void PolicyMap::put(uint32_t tid, const c2c_policy_value& v) {
  if (bpf_map_update_elem(fd_, &tid, &v, BPF_ANY) != 0)
    throw std::runtime_error("policy map update tid " + std::to_string(tid) + ": " + std::strerror(errno));
}

void PolicyMap::del(uint32_t tid) {
  if (bpf_map_delete_elem(fd_, &tid) != 0 && errno != ENOENT)
    throw std::runtime_error("policy map delete tid " + std::to_string(tid) + ": " + std::strerror(errno));
}

void PolicyMap::put_task(pid_t tgid, pid_t tid, const PolicySpec& spec) {
  auto st = read_task_stat(tgid, tid);
  if (!st) throw std::runtime_error("task " + std::to_string(tid) + ": cannot read /proc stat");
  put(static_cast<uint32_t>(tid), make_value(spec, tgid, st->start_ticks));
}

}  // namespace c2c::vm
