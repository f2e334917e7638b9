#include "host/cgroup_resolver.hpp"

namespace c2c::host {

CgroupResolver::CgroupResolver(const CgroupMounts* mounts) : mounts_(mounts) {
  // With a v1 cpuset or cpu hierarchy the primary path is the v1 one, which the id does not name.
  if (mounts_ != nullptr && mounts_->unified() && !mounts_->v1("cpuset") && !mounts_->v1("cpu"))
    unified_ = *mounts_->unified();
}

void CgroupResolver::begin_pass() {
  cpusets_.clear();
  walked_this_pass_ = false;
}

bool CgroupResolver::fill(TaskInfo& t) {
  if (!unified_ || t.cgroup_id == 0) return false;
  if (!index_) {
    index_ = CgroupIdIndex::build(*unified_);
    ++walks_;
    walked_this_pass_ = true;
  }
  auto path = index_->path(t.cgroup_id);
  if (!path && !walked_this_pass_) {
    index_ = CgroupIdIndex::build(*unified_);
    ++walks_;
    walked_this_pass_ = true;
    path = index_->path(t.cgroup_id);
  }
  if (!path) return false;
  auto it = cpusets_.find(t.cgroup_id);
  if (it == cpusets_.end()) {
    ++cpuset_reads_;
    it = cpusets_.emplace(t.cgroup_id, effective_cpuset(*mounts_, {CgroupLine{0, {}, *path}})).first;
  }
  if (!it->second) return false;  // e.g. the cgroup was removed meanwhile: /proc says the rest
  t.cgroup = std::move(*path);
  t.cpuset = it->second;
  return true;
}

}  // namespace c2c::host
