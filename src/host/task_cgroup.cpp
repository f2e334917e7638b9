#include "host/task_cgroup.hpp"

#include <sys/stat.h>

#include <system_error>

#include "host/procfs_walker.hpp"

namespace c2c::host {

namespace fs = std::filesystem;

bool fill_cgroup_from_proc(TaskInfo& t, const CgroupMounts* mounts, ParseError* err, const fs::path& proc_root) {
  const fs::path dir = proc_root / std::to_string(t.tgid) / "task" / std::to_string(t.tid);
  const auto text = read_file(dir / "cgroup");
  if (!text) {
    set_error(err, "task", "tid " + std::to_string(t.tid) + " is gone");
    return false;
  }
  const auto lines = parse_proc_cgroup(*text, err);
  if (!lines) return false;
  std::optional<CpuSet> cpuset;
  if (mounts != nullptr) {
    ParseError cpuset_err;
    cpuset = effective_cpuset(*mounts, *lines, &cpuset_err);
    if (!cpuset) {
      if (err) *err = cpuset_err;
      return false;
    }
  }
  // The cgroup file was read by tid: make sure it still was the same task (INV-2).
  const auto now = read_proc_task(proc_root, t.tgid, t.tid);
  if (!now || now->start_ticks != t.start_ticks) {
    set_error(err, "task",
              "tid " + std::to_string(t.tid) + " no longer has start_ticks " + std::to_string(t.start_ticks));
    return false;
  }
  t.cgroup = primary_cgroup_path(*lines);
  if (mounts != nullptr) t.cpuset = cpuset;
  return true;
}

CgroupIdIndex CgroupIdIndex::build(const CgroupMount& mount) {
  CgroupIdIndex idx;
  const std::string root = mount.root == "/" ? std::string{} : mount.root;
  auto add = [&](const fs::path& dir, const std::string& path) {
    struct stat st{};
    if (::stat(dir.c_str(), &st) == 0) idx.paths_[static_cast<uint64_t>(st.st_ino)] = path.empty() ? "/" : path;
  };
  add(mount.mount_point, root);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(mount.mount_point, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    add(it->path(), root + "/" + fs::relative(it->path(), mount.mount_point, ec).string());
  }
  return idx;
}

std::optional<std::string> CgroupIdIndex::path(uint64_t id) const {
  const auto it = paths_.find(id);
  if (it == paths_.end()) return std::nullopt;
  return it->second;
}

}  // namespace c2c::host
