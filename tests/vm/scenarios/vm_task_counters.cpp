#include "vm_task_counters.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <bpf/bpf.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL  // include/uapi/linux/pidfd.h (6.9): a pidfd for a thread, not a process
#endif

namespace c2c::vm {

std::optional<c2c_task_counters> read_task_counters(pid_t tid, const std::string& pin_root, std::string* why) {
  const std::string path = pin_root + "/" + C2C_TASK_CNT_MAP_NAME;
  const int map = bpf_obj_get(path.c_str());
  if (map < 0) {
    *why = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  // A process's pidfd is what pidfd_open gives a thread-group leader; another thread needs
  // PIDFD_THREAD (the task storage lookup takes the pidfd's task, not its group).
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, tid, 0));
  if (pidfd < 0 && errno == EINVAL) pidfd = static_cast<int>(syscall(SYS_pidfd_open, tid, PIDFD_THREAD));
  if (pidfd < 0) {
    *why = "pidfd_open " + std::to_string(tid) + ": " + std::strerror(errno);
    close(map);
    return std::nullopt;
  }
  c2c_task_value c{};
  const int rc = bpf_map_lookup_elem(map, &pidfd, &c);
  const int err = errno;
  close(pidfd);
  close(map);
  if (rc != 0) {
    *why = "c2c_task_cnt lookup of " + std::to_string(tid) + ": " + std::strerror(err);
    return std::nullopt;
  }
  return c.counters;
}

c2c_task_counters counters_since(const c2c_task_counters& now, const c2c_task_counters& then) {
  c2c_task_counters d{};
  d.runtime_ns = now.runtime_ns - then.runtime_ns;
  d.preferred_ns = now.preferred_ns - then.preferred_ns;
  for (unsigned i = 0; i < C2C_MAX_NODES; ++i) d.node_ns[i] = now.node_ns[i] - then.node_ns[i];
  d.runs = now.runs - then.runs;
  d.migrations = now.migrations - then.migrations;
  d.numa_migrations = now.numa_migrations - then.numa_migrations;
  d.spills = now.spills - then.spills;
  return d;
}

nlohmann::json counters_json(const c2c_task_counters& c, int device_node) {
  nlohmann::json nodes = nlohmann::json::array();
  for (unsigned i = 0; i < C2C_MAX_NODES; ++i) nodes.push_back(c.node_ns[i]);
  nlohmann::json j{{"runtime_ns", c.runtime_ns}, {"preferred_ns", c.preferred_ns}, {"node_ns", nodes},
                   {"runs", c.runs},             {"migrations", c.migrations},     {"numa_migrations", c.numa_migrations},
                   {"spills", c.spills}};
  if (device_node >= 0 && device_node < static_cast<int>(C2C_MAX_NODES)) {
    const __u64 local = c.node_ns[device_node];
    j["device_node"] = device_node;
    j["device_local_ns"] = local;
    j["device_local_share"] = c.runtime_ns ? static_cast<double>(local) / static_cast<double>(c.runtime_ns) : 0.0;
  }
  return j;
}

}  // namespace c2c::vm
