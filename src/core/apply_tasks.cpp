// The task events: seen (a new task, a re-observation or a TID reuse), renamed, exited and a
// registered role (spec/state-machine.md, "Events"; INV-2).
#include "core/event_handlers.hpp"

namespace c2c {

ApplyResult EventHandlers::operator()(const TaskSeen& ev) {
  const Task& t = ev.task;
  const uint32_t tid = t.key.tid, tgid = t.tgid;
  auto existing = s.tasks.find(tid);
  bool reused = false;
  uint8_t moved = CoreImpl::kAllKeys;  // the index keys that change
  std::vector<uint32_t> affected{tid};
  if (existing != s.tasks.end()) {
    const TaskState& old = existing->second;
    const bool keep_role = CoreImpl::keeps_role(old, t);
    if (s.same_observation(old, t)) return ignored("task " + std::to_string(t.key.tid) + " unchanged");
    if (t.key.start < old.key.start)
      return ignored("INV-2: task " + std::to_string(t.key.tid) + " start " + std::to_string(t.key.start) +
                     " is older than the live task's start " + std::to_string(old.key.start));
    reused = t.key.start != old.key.start;
    if (old.key.tid == old.tgid) s.add_thread_group(affected, old.tgid);
    // New values are interned before the old are released, so an unchanged one stays in place
    // (and has the old one's id: the moved keys compare ids).
    TaskState fresh = s.make_task_state(t);
    moved = CoreImpl::moved_keys(old, fresh);
    s.unindex_task(tid, moved);
    if (keep_role) {
      fresh.role = old.role;
      s.strings.retain(old.role);
    }
    // The same cgroup resolves to the same pod (pod bindings did not change in this event).
    if (!(moved & CoreImpl::kByCgroup)) {
      fresh.pod = old.pod;
      s.strings.retain(old.pod);
    }
    s.release_task_state(old);
    existing->second = fresh;
  } else {
    s.tasks.emplace(tid, s.make_task_state(t));
  }
  s.index_task(tid, moved, t.cgroup_id);
  if (tid == tgid) s.add_thread_group(affected, tgid);
  ApplyResult r;
  s.rederive(std::move(affected), r, [&] {
    return reused ? "tid " + std::to_string(tid) + " reused by a new task (INV-2)" : std::string("task changed");
  });
  return r;
}

ApplyResult EventHandlers::operator()(const TaskRenamed& ev) {
  auto it = s.tasks.find(ev.key.tid);
  if (it == s.tasks.end() || it->second.key.start != ev.key.start)
    return ignored("INV-2: rename of task (" + std::to_string(ev.key.tid) + ", " + std::to_string(ev.key.start) +
                   ") which is not live");
  if (s.comm_of(it->second) == ev.comm) return ignored("comm unchanged");
  // Only the comm index depends on the name.
  s.uncount_comm(s.comm_of(it->second), ev.key.tid);
  const uint32_t was = it->second.comm;
  it->second.comm = s.intern(ev.comm);
  s.strings.release(was);
  s.count_comm(ev.comm, ev.key.tid);
  std::vector<uint32_t> affected{ev.key.tid};
  if (ev.key.tid == it->second.tgid) s.add_thread_group(affected, ev.key.tid);
  ApplyResult r;
  s.rederive(std::move(affected), r, [&] { return "task renamed to '" + name_text(ev.comm) + "'"; });
  return r;
}

ApplyResult EventHandlers::operator()(const TaskExited& ev) {
  auto it = s.tasks.find(ev.key.tid);
  if (it == s.tasks.end() || it->second.key.start != ev.key.start)
    return ignored("INV-2: exit of task (" + std::to_string(ev.key.tid) + ", " + std::to_string(ev.key.start) +
                   ") which is not live");
  const uint32_t tgid = it->second.tgid;
  s.unindex_task(ev.key.tid);
  s.release_task_state(it->second);
  s.tasks.erase(it);
  shrink_if_sparse(s.tasks);
  s.memo.fit(s.tasks.size());
  std::vector<uint32_t> affected{ev.key.tid};
  if (ev.key.tid == tgid) s.add_thread_group(affected, tgid);
  ApplyResult r;
  s.rederive(std::move(affected), r, [&] { return "task " + std::to_string(ev.key.tid) + " exited"; });
  return r;
}

ApplyResult EventHandlers::operator()(const TaskRoleSet& ev) {
  auto it = s.tasks.find(ev.key.tid);
  if (it == s.tasks.end() || it->second.key.start != ev.key.start)
    return ignored("INV-2: role of task (" + std::to_string(ev.key.tid) + ", " + std::to_string(ev.key.start) +
                   ") which is not live");
  if (s.str(it->second.role) == ev.role) return ignored("role unchanged");
  const uint32_t was = it->second.role;
  it->second.role = s.intern(ev.role);
  s.strings.release(was);
  // Only DRA task roles read the role, and only of the task itself (the TGID fallback is for
  // node policies, which have no role selector).
  ApplyResult r;
  s.rederive(std::vector<uint32_t>{ev.key.tid}, r,
             [&] { return ev.role.empty() ? std::string("role unregistered") : "role '" + ev.role + "' registered"; });
  return r;
}

}  // namespace c2c
