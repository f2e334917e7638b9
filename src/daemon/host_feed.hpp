// The host adapters that feed the engine's core (spec/daemon.md, "Task discovery"): task
// lifecycle events from the BPF ring buffer, full snapshots (BPF iterator, else procfs) at start,
// periodically and whenever the ring buffer dropped records, each task completed with its cgroup
// and effective cpuset (INV-6 envelope); pod cgroups found by pod UID. Runs on the loop thread.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "daemon/config.hpp"
#include "host/cgroup.hpp"
#include "host/task_events.hpp"
#include "host/task_snapshot.hpp"

namespace c2c::daemon {

class HostFeed {
 public:
  // events_pin: the pinned ring buffer of the map set (the programs write into it).
  HostFeed(TaskDiscovery mode, const std::string& events_pin);
  TaskDiscovery mode() const { return mode_; }
  // A sentence for Status and logs: which discovery runs and why (fallbacks included).
  const std::string& description() const { return description_; }
  int epoll_fd() const;  // -1 without an event stream

  // Ring-buffer events -> core events, cheap: TaskSeen still lacks cgroup and cpuset, which
  // complete() adds (reads /proc) when the engine gets to the event.
  void poll(const Core& core, std::deque<Event>& out);
  Event complete(const Event& e) const;
  // The stream lost records since the last call: a rescan is needed.
  bool lost_events();
  // Every task now (completed): TaskSeen for each, TaskExited for tasks the core has that are gone.
  void rescan(const Core& core, std::vector<Event>& out);

  // The pod-level cgroup for a pod UID (walks the cgroup2 hierarchy), or "" when none.
  std::string find_pod_cgroup(const std::string& pod_uid) const;
  std::optional<CpuSet> cgroup_cpuset(const std::string& cgroup_path) const;

 private:
  TaskDiscovery mode_;
  std::string description_;
  std::unique_ptr<host::TaskEventStream> stream_;
  std::unique_ptr<host::TaskSnapshotter> snapshotter_;
  std::optional<host::CgroupMounts> mounts_;
  uint64_t dropped_seen_ = 0;
  bool withheld_logged_ = false;
};

}  // namespace c2c::daemon
