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
#include "daemon/loop/throttle.hpp"
#include "daemon/process/config.hpp"
#include "host/cgroup.hpp"
#include "host/cgroup_resolver.hpp"
#include "host/process_title.hpp"
#include "host/task_events.hpp"
#include "host/task_snapshot.hpp"

namespace c2c::daemon {

class HostFeed {
 public:
  // events_fd: the map set's ring buffer (PinnedMaps::events_fd(); the programs write into it);
  // -1: a private one.
  HostFeed(TaskDiscovery mode, int events_fd);
  TaskDiscovery mode() const { return mode_; }
  // A sentence for Status and logs: which discovery runs and why (fallbacks included).
  const std::string& description() const { return description_; }
  int epoll_fd() const;  // -1 without an event stream
  // Whether a task event wakes the loop (TaskEventStream::set_wakeups; task_event_pacing.hpp).
  void set_wakeups(bool on);

  // The ring buffer's records as decoded, cheap; complete() turns each into core events when the
  // engine gets to it.
  void poll(std::deque<host::TaskEvent>& out);
  // One record -> the core events it means, appended to `out` (the one host -> core conversion):
  // TaskSeen with the task's cgroup and cpuset (from its cgroup id, else from /proc with the INV-2
  // check: a task that is gone or whose tid names another task becomes its TaskExited), plus, for
  // an exec by a non-leader thread, the TaskExited of the exec'ing thread's former tid. Every
  // TaskSeen carries its process title (issue #15); a rename that changed the title
  // (setproctitle renames the calling thread) sends every thread of the process again with the
  // new one (one /proc/<tgid>/task walk, only when the title changed; a process's renames read
  // its title at most every 10 ms, the rest owe the read: refresh_titles). `now_ns`: the loop's
  // clock (boottime).
  void complete(const Core& core, host::TaskEvent e, uint64_t now_ns, std::vector<Event>& out);
  // The title reads renames owed that are due by now_ns: every thread of a process whose title
  // changed, sent again (as complete() does for a rename read at once).
  void refresh_titles(const Core& core, uint64_t now_ns, std::vector<Event>& out);
  std::optional<uint64_t> title_deadline() const { return titles_.next_owed(); }
  // The stream lost records since the last look: a rescan is needed. The drop counter is read at
  // most every 10 ms (`now_ns`: any monotonic clock), not on every turn: a loss is then found
  // up to 10 ms later, and the rescan it starts supersedes everything polled meanwhile.
  bool lost_events(uint64_t now_ns);
  // When a look refused by the 10 ms limit is owed (the engine's timer wakes the loop for it).
  std::optional<uint64_t> drop_check_deadline() const { return drop_check_.deadline(); }
  // Every task now (completed): TaskSeen for each the core does not know as it is now (new,
  // changed, or last seen before a restart: Core::knows_task_as), TaskExited for tasks the core
  // has that are gone.
  // The ring buffer is drained (discarded) first: its records, like every record polled but not
  // yet completed, predate the snapshot, which supersedes them (the caller drops those).
  void rescan(const Core& core, std::vector<Event>& out);
  // Bytes of the ring buffer the programs write to (0 without a stream).
  uint32_t ringbuf_bytes() const { return stream_ ? stream_->ringbuf_bytes() : 0; }
  const host::CgroupResolver& cgroups() const { return cgroups_; }

  // The pod-level cgroup for a pod UID (walks the cgroup2 hierarchy), or "" when none.
  std::string find_pod_cgroup(const std::string& pod_uid) const;
  std::optional<CpuSet> cgroup_cpuset(const std::string& cgroup_path) const;

 private:
  void send_again(const Core& core, const std::vector<host::TaskInfo>& threads, uint64_t now_ns, std::vector<Event>& out);
  TaskDiscovery mode_;
  std::string description_;
  std::unique_ptr<host::TaskEventStream> stream_;
  std::unique_ptr<host::TaskSnapshotter> snapshotter_;
  std::optional<host::CgroupMounts> mounts_;
  host::CgroupResolver cgroups_{nullptr};
  // Process titles (argv[0]), read once per process: re-read on exec and rename, dropped with the
  // leader, all re-read by each rescan (host/process_title.hpp).
  host::ProcessTitles titles_;
  uint64_t dropped_seen_ = 0;
  Throttle drop_check_{10'000'000ull};
  bool withheld_logged_ = false;
};

}  // namespace c2c::daemon
