#include "host/task_snapshot.hpp"

namespace c2c::host {

const char* to_string(SnapshotSource s) { return s == SnapshotSource::BpfIterator ? "bpf-iterator" : "procfs"; }

TaskSnapshotter::TaskSnapshotter(bool allow_bpf) {
  if (!allow_bpf) {
    fallback_reason_ = "BPF disabled by configuration";
    return;
  }
  iter_ = BpfTaskIterator::open(&fallback_reason_);
}

std::vector<TaskInfo> TaskSnapshotter::snapshot(std::optional<uint32_t> tgid) {
  if (iter_) {
    std::string err;
    if (auto tasks = iter_->snapshot(&err, tgid)) return std::move(*tasks);
    fallback_reason_ = "task iterator failed: " + err;
    iter_.reset();
  }
  ProcfsWalkOptions o;
  o.only_tgid = tgid;
  return walk_procfs(o);
}

}  // namespace c2c::host
