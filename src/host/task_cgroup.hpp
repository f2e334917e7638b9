// Filling in a discovered task's cgroup path and cpuset envelope, whichever method found it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>

#include "host/cgroup.hpp"
#include "host/parse_error.hpp"
#include "host/task_info.hpp"

namespace c2c::host {

// Reads /proc/<tgid>/task/<tid>/cgroup and sets t.cgroup (primary path) and, when `mounts` is
// given, t.cpuset. The stat file is re-read afterwards: if the tid now belongs to a task with
// another start time (the task exited and the tid was reused, INV-2) nothing is changed and
// false is returned with err->field "task". Also false (t unchanged) if the task is gone.
bool fill_cgroup_from_proc(TaskInfo& t, const CgroupMounts* mounts, ParseError* err = nullptr,
                           const std::filesystem::path& proc_root = "/proc");

// cgroup v2 id (what BPF reports as cgroup_id: the kernfs node id, which is the directory's
// inode number on 64-bit kernels) -> cgroup path, by walking the cgroup2 mount once.
class CgroupIdIndex {
 public:
  // `mount` is the cgroup2 mount (CgroupMounts::unified()); paths are relative to its root.
  static CgroupIdIndex build(const CgroupMount& mount);
  std::optional<std::string> path(uint64_t id) const;
  size_t size() const { return paths_.size(); }

 private:
  std::unordered_map<uint64_t, std::string> paths_;
};

}  // namespace c2c::host
