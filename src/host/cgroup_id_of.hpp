// Which cgroup's id the task programs put into a record (bpf/task_cgroup_id.bpf.h): chosen at load
// time by whoever maps ids to paths (CgroupResolver::id_of()).
#pragma once

#include <cstdint>

namespace c2c::host {

enum class CgroupIdOf : uint32_t {
  DefaultHierarchy = 0,  // C2C_CGROUP_ID_DEFAULT: the cgroup v2 directory (the default)
  Cpuset = 1,            // C2C_CGROUP_ID_CPUSET: the cpuset controller's cgroup (a v1 hierarchy)
};

}  // namespace c2c::host
