// Task discovery method (b): the BPF task iterator (bpf/task_iter.bpf.c), read in one pass.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/cgroup_id_of.hpp"
#include "host/task_info.hpp"
#include "kernel/bpf_object.hpp"

namespace c2c::host {

class BpfTaskIterator {
 public:
  // Opens and loads task_iter.bpf.o (found with find_bpf_object unless a path is given) and
  // attaches the iterator. Needs CAP_BPF/CAP_PERFMON (root). nullptr with *err on failure.
  // `cgroup_id_of`: which cgroup's id the records carry (TaskInfo::cgroup_id).
  static std::unique_ptr<BpfTaskIterator> open(std::string* err, const std::filesystem::path& object = {},
                                               CgroupIdOf cgroup_id_of = CgroupIdOf::DefaultHierarchy);
  BpfTaskIterator(const BpfTaskIterator&) = delete;
  BpfTaskIterator& operator=(const BpfTaskIterator&) = delete;

  // Every thread of the system, or only the threads of `tgid`. Threads that exit during the
  // pass are simply absent. The cgroup path is not filled (cgroup_id is).
  std::optional<std::vector<TaskInfo>> snapshot(std::string* err, std::optional<uint32_t> tgid = std::nullopt);

 private:
  BpfTaskIterator() = default;
  std::optional<std::vector<TaskInfo>> read_link(const kernel::BpfLink& link, std::string* err);
  kernel::BpfObject obj_;
  kernel::BpfLink all_;  // the unfiltered iterator link, reused for every full snapshot (goes before obj_)
};

}  // namespace c2c::host
