#include "host/task_snapshot.hpp"

#include <algorithm>
#include <unordered_set>

namespace c2c::host {

std::vector<uint32_t> withheld_tgids(const std::vector<TaskInfo>& iterated, std::vector<uint32_t> proc_tgids) {
  std::unordered_set<uint32_t> seen;
  seen.reserve(iterated.size());
  for (const auto& t : iterated) seen.insert(t.tgid);
  std::erase_if(proc_tgids, [&](uint32_t g) { return seen.count(g) != 0; });
  std::sort(proc_tgids.begin(), proc_tgids.end());
  return proc_tgids;
}

const char* to_string(SnapshotSource s) { return s == SnapshotSource::BpfIterator ? "bpf-iterator" : "procfs"; }

TaskSnapshotter::TaskSnapshotter(bool allow_bpf, CgroupIdOf cgroup_id_of) {
  if (!allow_bpf) {
    fallback_reason_ = "BPF disabled by configuration";
    return;
  }
  iter_ = BpfTaskIterator::open(&fallback_reason_, {}, cgroup_id_of);
}

std::vector<TaskInfo> TaskSnapshotter::snapshot(std::optional<uint32_t> tgid) {
  withheld_.clear();
  if (iter_) {
    std::string err;
    if (auto tasks = iter_->snapshot(&err, tgid)) {
      // The /proc listing comes after the pass: a process in it with no thread in the pass was
      // withheld by the kernel, started since, or (one of these) exited meanwhile (walks empty).
      std::vector<uint32_t> listed;
      if (!tgid)
        listed = list_proc_tgids();
      else if (std::filesystem::exists("/proc/" + std::to_string(*tgid)))
        listed.push_back(*tgid);
      withheld_ = withheld_tgids(*tasks, std::move(listed));
      for (uint32_t g : withheld_) {
        ProcfsWalkOptions o;
        o.only_tgid = g;
        auto more = walk_procfs(o);
        tasks->insert(tasks->end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
      }
      return std::move(*tasks);
    }
    fallback_reason_ = "task iterator failed: " + err;
    iter_.reset();
  }
  ProcfsWalkOptions o;
  o.only_tgid = tgid;
  return walk_procfs(o);
}

}  // namespace c2c::host
