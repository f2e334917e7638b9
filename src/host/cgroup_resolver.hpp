// A discovered task's cgroup path and cpuset envelope from the cgroup id the BPF programs report
// (the kernfs id of its cgroup v2 directory), looked up in a CgroupIdIndex built once, so the
// iterator and event paths read nothing per task from /proc. Used where that id names the path
// primary_cgroup_path() would pick: a cgroup v2 only host (no v1 cpuset or cpu hierarchy).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "host/cgroup.hpp"
#include "host/task_cgroup.hpp"
#include "host/task_info.hpp"

namespace c2c::host {

class CgroupResolver {
 public:
  // `mounts` must outlive the resolver; nullptr (no cgroup mounts found): nothing is resolved.
  explicit CgroupResolver(const CgroupMounts* mounts);
  // Whether ids can be resolved at all on this host (see above).
  bool by_id() const { return unified_.has_value(); }

  // Starts a pass (a rescan, or one batch of ring-buffer records): within a pass a cgroup's
  // cpuset file is read once, and an unknown id re-walks the hierarchy at most once (a cgroup
  // created since the last walk, e.g. a new pod's).
  void begin_pass();
  // Sets t.cgroup and t.cpuset (as fill_cgroup_from_proc would) from t.cgroup_id. false, t unchanged, when the
  // id is 0, unknown after the re-walk, or its cpuset cannot be read: the caller reads /proc.
  bool fill(TaskInfo& t);

  size_t walks() const { return walks_; }       // hierarchy walks so far (the first included)
  size_t cpuset_reads() const { return cpuset_reads_; }

 private:
  const CgroupMounts* mounts_;
  std::optional<CgroupMount> unified_;
  std::optional<CgroupIdIndex> index_;
  std::unordered_map<uint64_t, std::optional<CpuSet>> cpusets_;  // this pass's, by cgroup id
  bool walked_this_pass_ = false;
  size_t walks_ = 0, cpuset_reads_ = 0;
};

}  // namespace c2c::host
