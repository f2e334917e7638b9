// A discovered task's cgroup path and cpuset envelope from the cgroup id the BPF programs report
// (the kernfs id, i.e. inode number, of its cgroup directory), looked up in a CgroupIdIndex built
// once, so the iterator and event paths read nothing per task from /proc. The id must name the
// path primary_cgroup_path() would pick: with a v1 cpuset hierarchy mounted that is the cpuset
// controller's cgroup (the programs are loaded with id_of() = Cpuset), else on a host without a v1
// cpu hierarchy the cgroup v2 directory (DefaultHierarchy); with v1 cpu but no v1 cpuset, none.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "host/cgroup.hpp"
#include "host/cgroup_id_of.hpp"
#include "host/task_cgroup.hpp"
#include "host/task_info.hpp"

namespace c2c::host {

class CgroupResolver {
 public:
  // `mounts` must outlive the resolver; nullptr (no cgroup mounts found): nothing is resolved.
  explicit CgroupResolver(const CgroupMounts* mounts);
  // Whether ids can be resolved at all on this host, and which ids (see above): the task programs
  // must be loaded with id_of().
  bool by_id() const { return mount_.has_value(); }
  CgroupIdOf id_of() const { return id_of_; }

  // Starts a pass (a rescan, or one batch of ring-buffer records): within a pass a cgroup's
  // cpuset file is read once, and an unknown id re-walks the hierarchy at most once (a cgroup
  // created since the last walk, e.g. a new pod's).
  void begin_pass();
  // Starts one batch of ring-buffer records at `now_ns` (any monotonic clock): like begin_pass(),
  // but the cpusets read less than `max_age_ns` ago are kept. Under steady churn a batch holds a
  // few records, and re-reading the cpuset files for every batch was a fifth of the daemon's CPU
  // per event (perf, 100k tasks); a task that starts within max_age_ns of a cpuset change may get
  // the previous one, as every task already keeps its cpuset until its next event or rescan.
  void begin_batch(uint64_t now_ns, uint64_t max_age_ns = 100'000'000ull);
  // Sets t.cgroup and t.cpuset (as fill_cgroup_from_proc would) from t.cgroup_id. false, t unchanged, when the
  // id is 0, unknown after the re-walk, or its cpuset cannot be read: the caller reads /proc.
  bool fill(TaskInfo& t);

  size_t walks() const { return walks_; }       // hierarchy walks so far (the first included)
  size_t cpuset_reads() const { return cpuset_reads_; }

 private:
  const CgroupMounts* mounts_;
  std::optional<CgroupMount> mount_;  // the hierarchy the ids are of
  CgroupIdOf id_of_ = CgroupIdOf::DefaultHierarchy;
  std::optional<CgroupIdIndex> index_;
  std::unordered_map<uint64_t, std::optional<CpuSet>> cpusets_;  // this pass's, by cgroup id
  bool walked_this_pass_ = false;
  uint64_t cpusets_since_ns_ = 0;  // when cpusets_ was last emptied by begin_batch
  bool cpusets_fresh_ = false;     // cpusets_ started by begin_batch (begin_pass: never kept)
  size_t walks_ = 0, cpuset_reads_ = 0;
};

}  // namespace c2c::host
