// Who wakes whom among a workload's threads, and how each runs (issue 46 item 4): the reader of
// bpf/wakeup_edges.bpf.c. BTF tracepoints (sched_waking, sched_switch), so it works on any kernel
// with BTF, sched_ext or not. The counts are cumulative since open(); core/activity.hpp's
// activity_window() turns two readings into a window, core/role_proposals.hpp proposes roles.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/activity.hpp"
#include "host/cgroup_id_of.hpp"
#include "kernel/bpf_object.hpp"


namespace c2c::host {

// C2C_WE_MAX_FILTER (bpf/wakeup_edges_abi.h; wakeup_edges.cpp asserts they agree), for users
// that do not include the BPF side's header.
inline constexpr size_t kActivityMaxFilter = 1024;

// Which threads are watched: those of the TGIDs, and those in the cgroups (kernfs ids, the
// hierarchy `cgroup_id_of` says). At most C2C_WE_MAX_FILTER of each.
struct ActivityFilter {
  std::vector<uint32_t> tgids;
  std::vector<uint64_t> cgroup_ids;
  CgroupIdOf cgroup_id_of = CgroupIdOf::DefaultHierarchy;
};

struct ActivityReading {
  std::vector<ThreadActivity> threads;  // sorted by tid
  std::vector<WakeEdge> edges;          // sorted by (waker, wakee)
  uint64_t dropped_threads = 0;         // threads the map had no room for (C2C_WE_MAX_THREADS)
  uint64_t dropped_edges = 0;           // edges the map had no room for (C2C_WE_MAX_EDGES)
};

class WakeupEdgeTracer {
 public:
  // Loads wakeup_edges.bpf.o (`object`, or found by find_bpf_object), fills the filter and attaches.
  // nullptr with *err naming what failed (an empty filter too: it would watch nothing).
  static std::unique_ptr<WakeupEdgeTracer> open(std::string* err, const ActivityFilter& filter,
                                                const std::filesystem::path& object = {});
  ~WakeupEdgeTracer() = default;  // links detach first (declared after obj_), then the object closes
  WakeupEdgeTracer(const WakeupEdgeTracer&) = delete;
  WakeupEdgeTracer& operator=(const WakeupEdgeTracer&) = delete;

  // The counts so far. Threads that no longer exist under `proc_root` (/proc/<tgid>/task/<tid>)
  // are removed from the maps after this reading, with their edges, so that the maps hold the
  // live threads and a reused tid starts from 0. Empty and *err set when a map cannot be read.
  ActivityReading read(std::string* err = nullptr, const std::string& proc_root = "/proc");

  // Watch exactly these TGIDs from now on (the daemon's watched processes change as policies and
  // threads come and go): the ones no longer named leave the filter, new ones enter it. The
  // counts of threads already seen stay (read() forgets them when they exit). "" or why not.
  std::string set_tgids(std::vector<uint32_t> tgids);

 private:
  WakeupEdgeTracer() = default;
  kernel::BpfObject obj_;
  std::vector<kernel::BpfLink> links_;
  int threads_fd_ = -1, edges_fd_ = -1, drops_fd_ = -1, tgids_fd_ = -1;
  std::vector<uint32_t> tgids_;  // what c2c_we_tgids holds, sorted
};

}  // namespace c2c::host
