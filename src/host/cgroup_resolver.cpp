#include "host/cgroup_resolver.hpp"

#include "claim2core_abi.hpp"

namespace c2c::host {

static_assert(static_cast<uint32_t>(CgroupIdOf::DefaultHierarchy) == C2C_CGROUP_ID_DEFAULT &&
                  static_cast<uint32_t>(CgroupIdOf::Cpuset) == C2C_CGROUP_ID_CPUSET,
              "CgroupIdOf mirrors C2C_CGROUP_ID_* (bpf/claim2core_abi.h)");

CgroupResolver::CgroupResolver(const CgroupMounts* mounts) : mounts_(mounts) {
  if (mounts_ == nullptr) return;
  // primary_cgroup_path() picks the cpuset line, then the cpu line, then the unified one.
  if (auto cpuset = mounts_->v1("cpuset")) {
    mount_ = *cpuset;
    id_of_ = CgroupIdOf::Cpuset;
  } else if (mounts_->unified() && !mounts_->v1("cpu")) {
    mount_ = *mounts_->unified();
  }
}

void CgroupResolver::begin_pass() {
  cpusets_.clear();
  walked_this_pass_ = false;
  cpusets_fresh_ = false;
}

void CgroupResolver::begin_batch(uint64_t now_ns, uint64_t max_age_ns) {
  walked_this_pass_ = false;
  if (cpusets_fresh_ && now_ns >= cpusets_since_ns_ && now_ns - cpusets_since_ns_ < max_age_ns) return;
  cpusets_.clear();
  cpusets_since_ns_ = now_ns;
  cpusets_fresh_ = true;
}

bool CgroupResolver::fill(TaskInfo& t) {
  if (!mount_ || t.cgroup_id == 0) return false;
  if (!index_) {
    index_ = CgroupIdIndex::build(*mount_);
    ++walks_;
    walked_this_pass_ = true;
  }
  auto path = index_->path(t.cgroup_id);
  if (!path && !walked_this_pass_) {
    index_ = CgroupIdIndex::build(*mount_);
    ++walks_;
    walked_this_pass_ = true;
    path = index_->path(t.cgroup_id);
  }
  if (!path) return false;
  auto it = cpusets_.find(t.cgroup_id);
  if (it == cpusets_.end()) {
    ++cpuset_reads_;
    const CgroupLine line = id_of_ == CgroupIdOf::Cpuset ? CgroupLine{1, {"cpuset"}, *path} : CgroupLine{0, {}, *path};
    it = cpusets_.emplace(t.cgroup_id, effective_cpuset(*mounts_, {line})).first;
  }
  if (!it->second) return false;  // e.g. the cgroup was removed meanwhile: /proc says the rest
  t.cgroup = std::move(*path);
  t.cpuset = it->second;
  return true;
}

}  // namespace c2c::host
