// The task table: a task's record (TaskState: an observed task's values interned into the core's
// pools, and the Task given back from it), and the table's indexes by comm, title, thread group and
// cgroup (what a re-observation moves; adding or dropping a task in each index).
#include "core/core_impl.hpp"

namespace c2c {

TaskState CoreImpl::make_task_state(const Task& t) {
  TaskState r;
  r.key = t.key;
  r.tgid = t.tgid;
  r.epoch = epoch;
  r.comm = intern(t.comm);
  r.cgroup = intern_cgroup(t);
  r.title = intern(t.title);
  r.role = intern(t.role);
  if (t.cpuset) r.cpuset = cpusets.acquire(*t.cpuset);
  return r;
}

uint64_t CoreImpl::cgroup_path_hash(const std::string& path) { return absl::Hash<std::string>{}(path); }

uint32_t CoreImpl::intern_cgroup(const Task& t) {
  if (t.cgroup_id != 0 && !t.cgroup.empty()) {
    auto known = cgroup_by_id.find(t.cgroup_id);
    if (known != cgroup_by_id.end() && known->second.size == t.cgroup.size() &&
        known->second.hash == cgroup_path_hash(t.cgroup)) {
      strings.retain(known->second.path);
      return known->second.path;
    }
  }
  return intern(t.cgroup);
}

void CoreImpl::release_task_state(const TaskState& t) {
  for (uint32_t id : {t.comm, t.cgroup, t.title, t.role, t.pod}) strings.release(id);
  cpusets.release(t.cpuset);
}

Task CoreImpl::task_of(const TaskState& t) const {
  Task out;
  out.key = t.key;
  out.tgid = t.tgid;
  out.comm = str(t.comm);
  out.cgroup = str(t.cgroup);
  // The id the path was first seen with (the core keeps one per path, not one per task).
  if (auto cg = tids_by_cgroup.find(t.cgroup); cg != tids_by_cgroup.end()) out.cgroup_id = cg->second.id;
  out.role = str(t.role);
  if (t.cpuset) out.cpuset = cpusets[t.cpuset];
  out.title = str(t.title);
  return out;
}

uint8_t CoreImpl::moved_keys(const TaskState& old, const Task& t) const {
  return static_cast<uint8_t>((comm_of(old) != t.comm ? kByComm : 0) | (title_of(old) != t.title ? kByTitle : 0) |
                              (old.tgid != t.tgid ? kByTgid : 0) | (cgroup_of(old) != t.cgroup ? kByCgroup : 0));
}

// The host plane does not observe roles: a re-observation of the same (tid, start) keeps the
// registered role; a new start is a new task and starts without it (INV-2).
bool CoreImpl::keeps_role(const TaskState& old, const Task& t) { return t.role.empty() && t.key.start == old.key.start; }

uint8_t CoreImpl::moved_keys(const TaskState& old, const TaskState& fresh) {
  return static_cast<uint8_t>((old.comm != fresh.comm ? kByComm : 0) | (old.title != fresh.title ? kByTitle : 0) |
                              (old.tgid != fresh.tgid ? kByTgid : 0) | (old.cgroup != fresh.cgroup ? kByCgroup : 0));
}

bool CoreImpl::same_observation(const TaskState& old, const Task& t) const {
  // A new start (TID reuse) or epoch is decided without reading an interned value (each read of
  // the pools is a cache miss at 100k tasks).
  if (old.key != t.key || old.epoch != epoch) return false;
  const std::string& role = keeps_role(old, t) ? str(old.role) : t.role;
  const CpuSet* old_cpuset = cpuset_of(old);
  const bool same_cpuset = old_cpuset ? (t.cpuset && *t.cpuset == *old_cpuset) : !t.cpuset;
  return moved_keys(old, t) == 0 && role == str(old.role) && same_cpuset;
}

void CoreImpl::index_task(uint32_t tid, uint8_t keys, uint64_t cgroup_id) {
  TaskState& t = tasks.at(tid);
  if (keys & kByComm) count_comm(comm_of(t), tid);
  // Untitled tasks (most threads on a node where nothing sets a title) are not indexed: one set of
  // every task would cost each task event a cache miss in a 100k-member array; tasks_matching
  // finds them by a scan in the rare case that a title-only pattern matches the empty title.
  if ((keys & kByTitle) && t.title != 0) tids_by_title[title_of(t)].insert(tid);
  if (keys & kByTgid) tids_by_tgid[t.tgid].insert(tid);
  if (!(keys & kByCgroup)) return;
  const std::string& cgroup = cgroup_of(t);
  auto [cg, fresh] = tids_by_cgroup.try_emplace(t.cgroup);
  if (fresh) cgroups_in_order.insert(cgroup);
  cg->second.tids.insert(tid);
  // The first id a path is seen with names it (a later, other id for the same path is not recorded:
  // its tasks take the slow path); an id already naming another path is taken over by this one.
  if (cgroup_id != 0 && cg->second.id == 0 && !cgroup.empty()) {
    cg->second.id = cgroup_id;
    cgroup_by_id[cgroup_id] = CgroupPath{t.cgroup, static_cast<uint32_t>(cgroup.size()), cgroup_path_hash(cgroup)};
  }
  // The record's pod: a moved cgroup starts without one (TaskSeen), so nothing is released here.
  t.pod = cgroup_pod(cg->second, cgroup);
  strings.retain(t.pod);
}

void CoreImpl::unindex_task(uint32_t tid, uint8_t keys) {
  const TaskState& t = tasks.at(tid);
  auto drop = [tid](auto& index, const auto& key) {
    auto it = index.find(key);
    if (it == index.end()) return;
    it->second.erase(tid);
    if (it->second.empty()) {
      index.erase(it);
      shrink_if_sparse(index);
    }
  };
  if (keys & kByComm) uncount_comm(comm_of(t), tid);
  if ((keys & kByTitle) && t.title != 0) drop(tids_by_title, title_of(t));
  if (keys & kByTgid) drop(tids_by_tgid, t.tgid);
  if (!(keys & kByCgroup)) return;
  if (auto cg = tids_by_cgroup.find(t.cgroup); cg != tids_by_cgroup.end()) {
    cg->second.tids.erase(tid);
    if (cg->second.tids.empty()) {
      if (auto id = cgroup_by_id.find(cg->second.id); id != cgroup_by_id.end() && id->second.path == t.cgroup) {
        cgroup_by_id.erase(id);
        shrink_if_sparse(cgroup_by_id);
      }
      strings.release(cg->second.pod);
      cgroups_in_order.erase(cgroup_of(t));
      tids_by_cgroup.erase(cg);
      shrink_if_sparse(tids_by_cgroup);
    }
  }
}

void CoreImpl::count_comm(const std::string& comm, uint32_t tid) {
  CommTasks& c = tasks_by_comm[comm];
  ++c.count;
  if (!c.members_kept) return;
  if (c.count <= kCommMembersKept) {
    c.members.insert(tid);
  } else {
    c.members_kept = false;  // found by a pass over the tasks from now on (tasks_matching)
    c.members.clear();
  }
}

void CoreImpl::uncount_comm(const std::string& comm, uint32_t tid) {
  auto it = tasks_by_comm.find(comm);
  if (it == tasks_by_comm.end()) return;
  if (--it->second.count == 0) {
    tasks_by_comm.erase(it);
    return;
  }
  if (it->second.members_kept) it->second.members.erase(tid);
}

}  // namespace c2c
