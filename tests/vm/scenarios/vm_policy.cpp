#include "vm_policy.hpp"

#include <time.h>

#include <stdexcept>

#include "mirror/applier.hpp"
#include "mirror/policy_value.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/pinned_maps.hpp"
#include "vm_proc.hpp"

namespace c2c::vm {

uint8_t parse_class(const std::string& name) {
  if (name == "lc" || name == "latency-critical") return C2C_CLASS_LATENCY_CRITICAL;
  if (name == "comm" || name == "communication-progress") return C2C_CLASS_COMM_PROGRESS;
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
  v.flags = spec.extra_flags;
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

struct PolicyMap::Impl {
  std::unique_ptr<mirror::PinnedMaps> maps;
  std::unique_ptr<mirror::KernelPolicyMap> io;
  std::unique_ptr<mirror::Applier> applier;
  std::map<uint32_t, RuntimeValue> written;  // expected values for compare-before-delete

  void apply(PlanOp op) {
    Plan plan;
    plan.ops.push_back(std::move(op));
    const mirror::ApplyReport rep = applier->apply(plan);
    if (!rep.error.empty()) throw std::runtime_error("mirror apply: " + rep.error);
    for (const auto& st : rep.ops)
      if (!st.success()) throw std::runtime_error("mirror apply: " + mirror::describe(st));
  }
};

PolicyMap::PolicyMap(const std::string& pin_root) : impl_(std::make_unique<Impl>()) {
  mirror::PinOptions opts;
  opts.pin_root = pin_root;
  opts.create = false;  // the pins belong to the mirror (c2c-mirror-tool open) and the scheduler
  auto maps = mirror::PinnedMaps::open(opts);
  if (!maps) throw std::runtime_error("policy maps " + pin_root + ": " + maps.error());
  impl_->maps = std::move(maps.value());
  impl_->io = std::make_unique<mirror::KernelPolicyMap>(impl_->maps->policy_fd(), impl_->maps->policy_max_entries());
  impl_->applier = std::make_unique<mirror::Applier>(*impl_->io);
}

PolicyMap::~PolicyMap() = default;

void PolicyMap::put(uint32_t tid, const c2c_policy_value& v) {
  PlanOp op;
  op.kind = PlanOp::Kind::Add;
  op.tid = tid;
  op.value = mirror::from_abi(v);
  op.reason = "vm scenario";
  impl_->apply(op);
  impl_->written[tid] = op.value;
}

void PolicyMap::del(uint32_t tid) {
  PlanOp op;
  op.kind = PlanOp::Kind::Delete;
  op.tid = tid;
  op.reason = "vm scenario done";
  if (auto it = impl_->written.find(tid); it != impl_->written.end()) {
    op.value = it->second;
  } else {
    c2c_policy_value cur{};
    if (impl_->io->lookup(tid, &cur) != 0) return;  // absent (or unreadable): nothing to delete
    op.value = mirror::from_abi(cur);
  }
  impl_->apply(op);
  impl_->written.erase(tid);
}

void PolicyMap::put_task(pid_t tgid, pid_t tid, const PolicySpec& spec) {
  auto st = read_task_stat(tgid, tid);
  if (!st) throw std::runtime_error("task " + std::to_string(tid) + ": cannot read /proc stat");
  put(static_cast<uint32_t>(tid), make_value(spec, tgid, st->start_ticks));
}

size_t PolicyMap::entries() const {
  size_t n = 0;
  uint32_t key = 0, next = 0;
  for (const uint32_t* prev = nullptr; impl_->io->next_key(prev, &next) == 0; prev = &key) {
    key = next;
    ++n;
  }
  return n;
}

}  // namespace c2c::vm
