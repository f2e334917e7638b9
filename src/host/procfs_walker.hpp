// Task discovery method (a): a walk over /proc/<tgid>/task/<tid>/{stat,comm}.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "host/cgroup.hpp"
#include "host/parse_error.hpp"
#include "host/task_info.hpp"

namespace c2c::host {

struct ProcfsWalkOptions {
  std::filesystem::path proc_root = "/proc";
  std::optional<uint32_t> only_tgid;   // walk one process only
  bool read_cgroup = false;            // fill TaskInfo::cgroup from /proc/<tgid>/task/<tid>/cgroup
  const CgroupMounts* cpuset_mounts = nullptr;  // when set (and read_cgroup), fill TaskInfo::cpuset
};

struct ProcfsWalkStats {
  size_t processes = 0;
  size_t tasks = 0;
  size_t vanished = 0;   // tasks that exited between listing and reading (tolerated)
  size_t malformed = 0;  // stat or cgroup content that did not parse (first error kept)
  ParseError first_error;
};

// Tasks that exit during the walk are skipped, never reported half-read. The comm comes from the
// `comm` file; start_ticks from stat field 22.
std::vector<TaskInfo> walk_procfs(const ProcfsWalkOptions& opts = {}, ProcfsWalkStats* stats = nullptr);

// The numeric entries of proc_root: every process (thread-group id) alive during the listing.
std::vector<uint32_t> list_proc_tgids(const std::filesystem::path& proc_root = "/proc");

// Reads one task; nullopt if it is gone (or malformed, with *err set).
std::optional<TaskInfo> read_proc_task(const std::filesystem::path& proc_root, uint32_t tgid, uint32_t tid,
                                       ParseError* err = nullptr);

}  // namespace c2c::host
