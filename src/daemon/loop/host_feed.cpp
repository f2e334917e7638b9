#include "daemon/loop/host_feed.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <unordered_map>

#include "host/core_events.hpp"
#include "host/procfs_walker.hpp"
#include "host/task_cgroup.hpp"

namespace c2c::daemon {

HostFeed::HostFeed(TaskDiscovery mode, int events_fd) : mode_(mode) {
  host::ParseError perr;
  mounts_ = host::CgroupMounts::discover(&perr);
  if (!mounts_) spdlog::warn("cgroup mounts not found ({}): tasks get no cgroup or cpuset", perr.to_string());
  cgroups_ = host::CgroupResolver(mounts_ ? &*mounts_ : nullptr);
  if (mode_ == TaskDiscovery::Off) {
    description_ = "task discovery off (task_discovery: off): no task is matched";
    return;
  }
  // The programs report the id of the cgroup the resolver maps (v2, or the v1 cpuset one).
  snapshotter_ = std::make_unique<host::TaskSnapshotter>(true, cgroups_.id_of());
  std::string snap = std::string("snapshots by ") + host::to_string(snapshotter_->source()) +
                     (snapshotter_->fallback_reason().empty() ? "" : " (" + snapshotter_->fallback_reason() + ")");
  if (mode_ == TaskDiscovery::Events) {
    std::string err;
    stream_ = events_fd >= 0 ? host::TaskEventStream::open_on_map(&err, events_fd, {}, cgroups_.id_of())
                             : host::TaskEventStream::open(&err, {}, {}, 0, cgroups_.id_of());
    if (!stream_) {
      spdlog::warn("task event stream unavailable ({}); falling back to periodic rescans", err);
      mode_ = TaskDiscovery::Scan;
      description_ = "periodic rescans only, the ring buffer could not be opened: " + err + "; " + snap;
      return;
    }
    description_ = "BPF tracepoints (fork/exec/exit/rename) via the " + std::string(events_fd >= 0 ? "pinned " : "") +
                   "ring buffer (" + std::to_string(stream_->ringbuf_bytes()) + " bytes); " + snap +
                   (!cgroups_.by_id() ? "; cgroups from /proc (a v1 cpu hierarchy without cpuset)"
                    : cgroups_.id_of() == host::CgroupIdOf::Cpuset ? "; cgroups by the v1 cpuset cgroup's id"
                                                                    : "; cgroups by the v2 cgroup id");
    return;
  }
  description_ = "periodic rescans only (task_discovery: scan); " + snap;
}

int HostFeed::epoll_fd() const { return stream_ ? stream_->epoll_fd() : -1; }

void HostFeed::set_wakeups(bool on) {
  if (!stream_) return;
  // A failed switch costs only efficiency: off, the loop still polls; on, it still reads.
  if (std::string e = stream_->set_wakeups(on); !e.empty()) spdlog::warn("task events: {}", e);
}

void HostFeed::send_again(const Core& core, const std::vector<host::TaskInfo>& threads, uint64_t now_ns,
                          std::vector<Event>& out) {
  for (const auto& t : threads) {
    if (validate(host::to_core_task(t))) continue;  // procfs shows kworkers' long names
    host::TaskEvent again;
    again.kind = host::TaskEventKind::Snapshot;
    again.task = t;
    complete(core, again, now_ns, out);
  }
}

void HostFeed::refresh_titles(const Core& core, uint64_t now_ns, std::vector<Event>& out) {
  send_again(core, titles_.refresh_owed(now_ns), now_ns, out);
}

void HostFeed::complete(const Core& core, host::TaskEvent e, uint64_t now_ns, std::vector<Event>& out) {
  if (auto old = host::exec_retired_tid(e)) {
    // The exec'ing thread's former tid is gone; the core knows its start.
    if (auto key = core.task_key(*old)) out.push_back(TaskExited{*key});
  }
  // A rename may have changed the process title: its threads are sent again, completed.
  const auto resend = titles_.after_event(e, now_ns);
  if (e.kind == host::TaskEventKind::Rename || e.kind == host::TaskEventKind::Exit) {
    out.push_back(host::to_core_event(e));
    send_again(core, resend, now_ns, out);
    return;
  }
  host::TaskInfo& t = e.task;
  // The record's cgroup id is the task's cgroup at the time of the record, read from the same
  // task_struct as its tid and start: no /proc read, so no tid reuse to guard against. A record
  // of a task that died since is followed by its exit record, or the loss is counted and the
  // rescan that follows drops it (rescan()).
  if (!cgroups_.fill(t)) {
    host::ParseError err;
    if (!host::fill_cgroup_from_proc(t, mounts_ ? &*mounts_ : nullptr, &err)) {
      // Gone already, or the tid now names another task (INV-2): the task is dead, whatever its
      // exit record says or whether there is one. It leaves at once; a successor under the same
      // tid has its own event.
      const auto now = host::read_proc_task("/proc", t.tgid, t.tid);
      if (!now || now->start_ticks != t.start_ticks) {
        out.push_back(TaskExited{TaskKey{t.tid, t.start_ticks}});
        return;
      }
      // alive, only its cgroup or cpuset could not be read: keep what the record said
    }
  }
  if (t.cpuset && t.cpuset->empty()) t.cpuset.reset();
  Event ev = host::to_core_event(e);
  if (auto* seen = std::get_if<TaskSeen>(&ev)) seen->task.title = titles_.get(t.tgid, t.tid == t.tgid ? t.start_ticks : 0);
  out.push_back(std::move(ev));
}

void HostFeed::poll(std::deque<host::TaskEvent>& out) {
  if (!stream_) return;
  cgroups_.begin_batch(static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  stream_->poll(0, [&](const host::TaskEvent& te) { out.push_back(te); });
}

bool HostFeed::lost_events(uint64_t now_ns) {
  if (!stream_ || !drop_check_.due(now_ns)) return false;
  uint64_t d = stream_->dropped();
  if (d == dropped_seen_) return false;
  spdlog::warn("task event ring buffer dropped {} records: rescanning", d - dropped_seen_);
  dropped_seen_ = d;
  return true;
}

void HostFeed::rescan(const Core& core, std::vector<Event>& out) {
  if (!snapshotter_) return;
  if (stream_) {
    // Everything written so far predates the pass below: discarded, as are the drops so far.
    stream_->poll(0, [](const host::TaskEvent&) {});
    dropped_seen_ = stream_->dropped();
  }
  cgroups_.begin_pass();
  auto tasks = snapshotter_->snapshot();
  titles_.clear();  // every process's title is read once more (an argv rewrite fires no event)
  if (!withheld_logged_ && !snapshotter_->last_withheld().empty()) {
    // Once: on some kernels the iterator never returns some processes (src/host/README.md).
    std::string list;
    for (uint32_t g : snapshotter_->last_withheld()) list += (list.empty() ? "" : ", ") + std::to_string(g);
    spdlog::info("task snapshot: processes the BPF iterator did not return (withheld by the kernel, or started "
                 "after the pass) were read from /proc: {}",
                 list);
    withheld_logged_ = true;
  }
  std::unordered_map<uint32_t, uint64_t> start_of;
  start_of.reserve(tasks.size());
  for (auto& t : tasks) {
    start_of[t.tid] = t.start_ticks;
    // Iterator records carry the cgroup id (no /proc read); procfs-walked ones do not.
    if (!cgroups_.fill(t)) {
      host::ParseError err;
      host::fill_cgroup_from_proc(t, mounts_ ? &*mounts_ : nullptr, &err);
    }
    auto task = host::to_core_task(t);
    task.title = titles_.get(t.tgid, t.tid == t.tgid ? t.start_ticks : 0);
    if (task.cpuset && task.cpuset->empty()) task.cpuset.reset();
    if (validate(task)) continue;  // e.g. a comm longer than 15 bytes from procfs: skip, logged by the count
    // Only what the core does not know yet: at 100k tasks, sending every task as it is cost the
    // loop ~0.3 s of TaskSeen no-ops per rescan (issue #13).
    if (core.knows_task_as(task)) continue;
    out.push_back(TaskSeen{std::move(task)});
  }
  for (const auto& key : core.task_keys()) {
    auto it = start_of.find(key.tid);
    if (it == start_of.end() || it->second != key.start) out.push_back(TaskExited{key});
  }
}

std::string HostFeed::find_pod_cgroup(const std::string& pod_uid) const {
  if (!mounts_) return "";
  // Task cgroup paths are the v1 cpuset hierarchy's on a v1/hybrid host (primary_cgroup_path).
  std::optional<host::CgroupMount> mount = mounts_->v1("cpuset");
  if (!mount) mount = mounts_->unified();
  if (!mount) return "";
  const auto& m = *mount;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(m.mount_point, std::filesystem::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it.depth() > 4) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_directory(ec)) continue;
    std::string rel = "/" + std::filesystem::relative(it->path(), m.mount_point, ec).string();
    std::string path = (m.root == "/" ? "" : m.root) + rel;
    auto pc = host::parse_pod_cgroup(path);
    if (pc && pc->pod_uid == pod_uid && pc->container_id.empty()) return pc->pod_cgroup;
  }
  return "";
}

std::optional<CpuSet> HostFeed::cgroup_cpuset(const std::string& cgroup_path) const {
  if (!mounts_ || cgroup_path.empty()) return std::nullopt;
  // The same path in the v1 cpuset hierarchy (when mounted) and in the unified one.
  host::CgroupLine v1{1, {"cpuset"}, cgroup_path};
  host::CgroupLine v2{0, {}, cgroup_path};
  std::vector<host::CgroupLine> lines;
  if (mounts_->v1("cpuset")) lines.push_back(v1);
  lines.push_back(v2);
  auto s = host::effective_cpuset(*mounts_, lines);
  if (s && s->empty()) return std::nullopt;
  return s;
}

}  // namespace c2c::daemon
