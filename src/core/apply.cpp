// The transition function: one handler per event kind (spec/state-machine.md, "Events").
// Every handler validates first and mutates only after every check passed, so an Invalid or
// Ignored input leaves the state exactly as it was.
#include <absl/container/flat_hash_set.h>

#include <algorithm>

#include "core/core_impl.hpp"

namespace c2c {
namespace {

ApplyResult invalid(std::string field, std::string message) {
  ApplyResult r;
  r.status = ApplyResult::Status::Invalid;
  r.field = std::move(field);
  r.message = std::move(message);
  return r;
}

ApplyResult ignored(std::string message) {
  ApplyResult r;
  r.status = ApplyResult::Status::Ignored;
  r.message = std::move(message);
  return r;
}

ApplyResult invalid(const FieldError& e) { return invalid(e.field, e.message); }

std::string policy_key(PolicyKind k, const std::string& name) { return std::string(to_string(k)) + "/" + name; }

bool cgroup_within(const std::string& path, const std::string& root) {
  return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

}  // namespace

// ---- patterns ----------------------------------------------------------------------------------

std::shared_ptr<const RE2> compile_regex(const std::string& pattern) {
  if (pattern.empty()) return nullptr;
  RE2::Options opts;
  opts.set_log_errors(false);
  return std::make_shared<const RE2>(pattern, opts);
}

bool TitleAndComm::matches(const std::string& c, const std::string& t) const {
  if (empty()) return false;
  return (!comm || RE2::PartialMatch(c, *comm)) && (!title || RE2::PartialMatch(t, *title));
}

DraPolicyState DraPolicyState::of(const DraExecutionPolicy& p) {
  DraPolicyState st;
  st.policy = p;
  for (const auto& role : p.task_roles)
    st.role_regex.push_back(TitleAndComm{compile_regex(role.comm_regex), compile_regex(role.process_regex)});
  return st;
}

NodePolicyState NodePolicyState::of(const NodeSchedulingPolicy& p) {
  return NodePolicyState{p, TitleAndComm{compile_regex(p.command_regex), compile_regex(p.process_regex)}};
}

// ---- the task record ---------------------------------------------------------------------------

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

// ---- indexes ---------------------------------------------------------------------------------

const std::string& CoreImpl::resolve_pod(const std::string& cgroup) const {
  static const std::string none;
  // The deepest pod cgroup that contains the task's cgroup (prefixes are views: no copy per task).
  std::string_view path = cgroup;
  while (!path.empty()) {
    auto it = pod_by_cgroup.find(path);
    if (it != pod_by_cgroup.end()) return it->second;
    auto slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) break;
    path = path.substr(0, slash);
  }
  return none;
}

std::unordered_set<uint32_t> CoreImpl::tasks_under_cgroup(const std::string& cgroup) const {
  std::unordered_set<uint32_t> out;
  if (cgroup.empty()) return out;
  for (auto it = cgroups_in_order.lower_bound(cgroup); it != cgroups_in_order.end(); ++it) {
    if (it->compare(0, cgroup.size(), cgroup) != 0) break;
    if (!cgroup_within(*it, cgroup)) continue;
    const TidSet& members = tids_by_cgroup.at(strings.find(*it)).tids;
    out.insert(members.begin(), members.end());
  }
  return out;
}

void CoreImpl::add_thread_group(std::unordered_set<uint32_t>& tids, uint32_t tgid) const {
  auto it = tids_by_tgid.find(tgid);
  if (it != tids_by_tgid.end()) tids.insert(it->second.begin(), it->second.end());
}

void CoreImpl::add_thread_group(std::vector<uint32_t>& tids, uint32_t tgid) const {
  auto it = tids_by_tgid.find(tgid);
  if (it != tids_by_tgid.end()) tids.insert(tids.end(), it->second.begin(), it->second.end());
}

uint8_t CoreImpl::moved_keys(const TaskState& old, const Task& t) const {
  return static_cast<uint8_t>((comm_of(old) != t.comm ? kByComm : 0) | (title_of(old) != t.title ? kByTitle : 0) |
                              (old.tgid != t.tgid ? kByTgid : 0) | (cgroup_of(old) != t.cgroup ? kByCgroup : 0));
}

// The host plane does not observe roles: a re-observation of the same (tid, start) keeps the
// registered role; a new start is a new task and starts without it (INV-2).
static bool keeps_role(const TaskState& old, const Task& t) { return t.role.empty() && t.key.start == old.key.start; }

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

uint32_t CoreImpl::cgroup_pod(CgroupTasks& cg, const std::string& cgroup) {
  if (!cg.resolved) {
    cg.pod = intern(resolve_pod(cgroup));
    cg.resolved = true;
  }
  return cg.pod;
}

void CoreImpl::forget_cgroup_pods() {
  for (auto& [id, cg] : tids_by_cgroup) {
    strings.release(cg.pod);
    cg.pod = 0;
    cg.resolved = false;
  }
}

std::unordered_set<uint32_t> CoreImpl::tasks_of_pods(const std::unordered_set<std::string>& pod_uids) const {
  std::unordered_set<uint32_t> out;
  for (const auto& uid : pod_uids)
    if (auto it = pods.find(uid); it != pods.end()) add_tasks_of_pod(it->second, out);
  return out;
}

// A task's pod is the deepest bound pod whose cgroup holds the task's cgroup, so every task of a
// pod is under the pod's cgroup; of those, the ones whose record names another (nested) pod are not
// its own.
void CoreImpl::add_tasks_of_pod(const PodState& pod, std::unordered_set<uint32_t>& out) const {
  const uint32_t uid = strings.find(pod.pod.uid);
  if (uid == 0) return;  // no task holds the uid: none is in the pod
  for (uint32_t tid : tasks_under_cgroup(pod.pod.cgroup))
    if (tasks.at(tid).pod == uid) out.insert(tid);
}

// Each pattern's first regex runs once per distinct comm (or, for a title-only policy, per
// distinct title), not once per task; matched leaders pull in their thread groups (TGID strategy).
// A comm pattern that some comm passes costs one pass over the tasks (shared by every such
// pattern; a comm with many tasks keeps no member set: tasks_by_comm), its title regex once
// per distinct title.
std::unordered_set<uint32_t> CoreImpl::tasks_matching(const std::vector<const TitleAndComm*>& patterns) const {
  std::unordered_set<uint32_t> out;
  auto take = [&](uint32_t tid) {
    out.insert(tid);
    if (tasks.at(tid).tgid == tid) add_thread_group(out, tid);
  };
  struct ByComm {
    const TitleAndComm* pattern;
    absl::flat_hash_set<uint32_t> comms;         // the comm ids its comm regex passes that keep no members
    absl::flat_hash_map<uint32_t, bool> titles;  // its title regex, per title id seen
  };
  // The rest of the pattern for a task whose comm passed: its title regex, if any.
  auto title_passes = [&](ByComm& b, const TaskState& t) {
    if (!b.pattern->title) return true;
    auto [title, fresh] = b.titles.try_emplace(t.title, false);
    if (fresh) title->second = RE2::PartialMatch(title_of(t), *b.pattern->title);
    return title->second;
  };
  std::vector<ByComm> by_comm;
  for (const TitleAndComm* p : patterns) {
    if (!p || p->empty()) continue;
    if (p->comm) {
      ByComm b{p, {}, {}};
      for (const auto& [text, c] : tasks_by_comm) {
        if (!RE2::PartialMatch(text, *p->comm)) continue;
        if (!c.members_kept) {
          b.comms.insert(strings.find(text));
          continue;
        }
        for (uint32_t tid : c.members)
          if (title_passes(b, tasks.at(tid))) take(tid);
      }
      if (!b.comms.empty()) by_comm.push_back(std::move(b));
      continue;
    }
    const RE2& first = *p->title;
    for (const auto& [text, tids] : tids_by_title) {
      if (!RE2::PartialMatch(text, first)) continue;
      for (uint32_t tid : tids) {
        const TaskState& t = tasks.at(tid);
        if (p->matches(comm_of(t), title_of(t))) take(tid);
      }
    }
    if (RE2::PartialMatch("", first))  // the untitled tasks, which the title index leaves out
      for (const auto& [tid, t] : tasks)
        if (t.title == 0 && p->matches(comm_of(t), title_of(t))) take(tid);
  }
  if (by_comm.empty()) return out;
  for (const auto& [tid, t] : tasks)
    for (ByComm& b : by_comm) {
      if (!b.comms.contains(t.comm) || !title_passes(b, t)) continue;
      take(tid);
      break;
    }
  return out;
}

void CoreImpl::set_entry(uint32_t tid, DesiredEntry e) {
  auto cur = desired.find(tid);
  auto renew_at = [](const RuntimeValue& v) { return v.boost_until - v.max_boost / 2; };
  const bool had = cur != desired.end() && (cur->second.value.flags & kFlagBoost);
  const bool has = e.value.flags & kFlagBoost;
  // The lease index only moves when the renewal time does (most rewrites keep the lease).
  if (!(had && has && renew_at(cur->second.value) == renew_at(e.value))) {
    if (had) lease_renewals.erase({renew_at(cur->second.value), tid});
    if (has) lease_renewals.insert({renew_at(e.value), tid});
  }
  removal_reasons.erase(tid);
  if (cur != desired.end()) {
    if (cur->second.origin != e.origin) {
      unlink_origin(cur->second.origin.get(), tid);
      entries_by_origin[e.origin.get()].insert(tid);
    }
    cur->second = std::move(e);
  } else {
    entries_by_origin[e.origin.get()].insert(tid);
    desired.emplace(tid, std::move(e));
  }
  touch(tid);
}

void CoreImpl::erase_entry(uint32_t tid, const std::string& reason) {
  auto cur = desired.find(tid);
  if (cur == desired.end()) return;
  if (cur->second.value.flags & kFlagBoost)
    lease_renewals.erase({cur->second.value.boost_until - cur->second.value.max_boost / 2, tid});
  unlink_origin(cur->second.origin.get(), tid);
  desired.erase(cur);
  conflicts.erase(tid);
  // Only rederive() erases entries, never while iterating these maps.
  shrink_if_sparse(desired);
  shrink_if_sparse(conflicts);
  if (actual.count(tid)) removal_reasons[tid] = reason;
  touch(tid);
}

void CoreImpl::unlink_origin(const Origin* o, uint32_t tid) {
  auto it = entries_by_origin.find(o);
  if (it == entries_by_origin.end()) return;
  it->second.erase(tid);
  if (it->second.empty()) entries_by_origin.erase(it);
}

void CoreImpl::touch(uint32_t tid) {
  auto d = desired.find(tid);
  auto a = actual.find(tid);
  const bool in_d = d != desired.end(), in_a = a != actual.end();
  // A tid in neither table, or in both with the same value, has no op in plan() (plan_op),
  // whatever happened to it: it is neither unsynced nor dirty. (bpf_synced of a policy matching
  // 100k threads used to leave all of them dirty: the next delta walked 100k tids for no op, 28 ms
  // of the loop, issue #13.)
  const bool has_op = in_d != in_a || (in_d && !(d->second.value == a->second));
  if (!has_op) {
    dirty.erase(tid);
    unsynced.erase(tid);
    return;
  }
  dirty.insert(tid);
  unsynced.insert(tid);
}

// ---- handlers ----------------------------------------------------------------------------------

namespace {

struct Handlers {
  CoreImpl& s;

  ApplyResult operator()(const NodeInfoEvent& ev) {
    if (ev.node == s.node) return ignored("node info unchanged");
    s.node = ev.node;
    ApplyResult r;
    std::unordered_set<uint32_t> all;
    for (const auto& [tid, t] : s.tasks) all.insert(tid);
    s.rederive(all, r, "node identity or topology changed");
    return r;
  }

  // Only node policies read the labels, and only those whose selection flips reach new tasks: each
  // is re-derived on the tasks its patterns match (spec/state-machine.md, "Node labels").
  ApplyResult operator()(const NodeLabels& ev) {
    if (ev.labels == s.node.labels) return ignored("node labels unchanged");
    std::vector<const TitleAndComm*> flipped;
    std::vector<std::pair<const NodePolicyState*, bool>> before;
    for (const auto& [name, st] : s.node_policies)
      if (!st.policy.node_selectors.empty() || !st.policy.node_selector_expressions.empty())
        before.emplace_back(&st, s.node_selected(st.policy));
    s.node.labels = ev.labels;
    for (const auto& [st, was] : before)
      if (s.node_selected(st->policy) != was) flipped.push_back(&st->regex);
    ApplyResult r;
    if (!flipped.empty()) s.rederive(s.tasks_matching(flipped), r, "node labels changed");
    return r;
  }

  ApplyResult upsert_claim(const Claim& c) {
    auto hw = s.claim_high_water.find(c.uid);
    auto live = s.claims.find(c.uid);
    if (hw != s.claim_high_water.end()) {
      if (c.generation < hw->second)
        return ignored("INV-3: claim " + c.uid + " generation " + std::to_string(c.generation) +
                       " is older than " + std::to_string(hw->second));
      if (c.generation == hw->second) {
        if (live != s.claims.end()) {
          if (live->second.claim == c) return ignored("claim " + c.uid + " unchanged");
          return invalid("claim.generation", "claim " + c.uid + " changed but its generation " +
                                                 std::to_string(c.generation) + " did not increase");
        }
        if (s.claim_tombstones.count(c.uid))
          return ignored("INV-3: claim " + c.uid + " was deallocated at generation " + std::to_string(hw->second) +
                         "; a new allocation needs a newer generation");
        // Neither live nor deallocated: it was live before a restart and is re-listed at the
        // generation it had (INV-7: a restart rebuilds all the state that is still valid).
      }
    }
    std::unordered_set<std::string> pods_hit(c.reserved_for.begin(), c.reserved_for.end());
    if (live != s.claims.end())
      pods_hit.insert(live->second.claim.reserved_for.begin(), live->second.claim.reserved_for.end());
    if (auto it = s.pods_by_claim.find(c.uid); it != s.pods_by_claim.end())
      pods_hit.insert(it->second.begin(), it->second.end());

    s.claims[c.uid] = ClaimState{c, s.epoch};
    s.claim_high_water[c.uid] = c.generation;
    s.claim_tombstones.erase(c.uid);

    ApplyResult r;
    if (!s.node.name.empty() && !c.node.empty() && c.node != s.node.name)
      r.warnings.push_back("claim " + c.uid + " is allocated for node " + c.node + ", not " + s.node.name);
    if (c.reserved_for.empty()) r.warnings.push_back("claim " + c.uid + " is reserved for no pod");
    auto affected = s.tasks_of_pods(pods_hit);
    add_dra_selected(affected);
    s.rederive(affected, r, "claim " + c.uid + " updated to generation " + std::to_string(c.generation));
    return r;
  }
  ApplyResult operator()(const ClaimAllocated& ev) { return upsert_claim(ev.claim); }
  ApplyResult operator()(const ClaimUpdated& ev) { return upsert_claim(ev.claim); }

  // Node policies with draSelectors depend on which devices the node holds.
  void add_dra_selected(std::unordered_set<uint32_t>& affected) const {
    std::vector<const TitleAndComm*> res;
    for (const auto& [name, st] : s.node_policies)
      if (!st.policy.dra_selectors.empty()) res.push_back(&st.regex);
    if (!res.empty()) {
      auto more = s.tasks_matching(res);
      affected.insert(more.begin(), more.end());
    }
  }

  ApplyResult operator()(const ClaimDeallocated& ev) {
    auto live = s.claims.find(ev.uid);
    auto hw = s.claim_high_water.find(ev.uid);
    if (live == s.claims.end()) {
      // A claim this node never saw leaves nothing behind: there is no entry to remove and no
      // allocation a tombstone could stop (the observer delivers a claim's versions in order).
      if (hw == s.claim_high_water.end()) return ignored("claim " + ev.uid + " was never allocated on this node");
      if (s.claim_tombstones.count(ev.uid) && ev.generation <= hw->second)
        return ignored("claim " + ev.uid + " is already deallocated (generation " + std::to_string(hw->second) + ")");
      // Known but not re-listed since a restart (or deallocated again at a newer generation): the
      // tombstone keeps its last allocation from coming back (INV-3).
      hw->second = std::max(hw->second, ev.generation);
      s.claim_tombstones.insert(ev.uid);
      ApplyResult r;
      r.message = "claim " + ev.uid + " not allocated; tombstone recorded at generation " + std::to_string(hw->second);
      return r;
    }
    if (ev.generation != 0 && ev.generation < live->second.claim.generation)
      return ignored("INV-3: deallocation of generation " + std::to_string(ev.generation) + " but claim " + ev.uid +
                     " is at generation " + std::to_string(live->second.claim.generation));
    std::unordered_set<std::string> pods_hit(live->second.claim.reserved_for.begin(),
                                             live->second.claim.reserved_for.end());
    if (auto it = s.pods_by_claim.find(ev.uid); it != s.pods_by_claim.end())
      pods_hit.insert(it->second.begin(), it->second.end());
    hw->second = std::max({hw->second, ev.generation, live->second.claim.generation});
    s.claim_tombstones.insert(ev.uid);
    s.claims.erase(live);
    ApplyResult r;
    auto affected = s.tasks_of_pods(pods_hit);
    add_dra_selected(affected);
    s.rederive(affected, r, "claim " + ev.uid + " deallocated (INV-1)");
    return r;
  }

  ApplyResult operator()(const PodBound& ev) {
    const Pod& p = ev.pod;
    auto existing = s.pods.find(p.uid);
    if (existing != s.pods.end() && existing->second.pod == p) return ignored("pod " + p.uid + " unchanged");
    if (!p.cgroup.empty())
      if (auto owner = s.pod_by_cgroup.find(p.cgroup); owner != s.pod_by_cgroup.end() && owner->second != p.uid)
        return invalid("pod.cgroup", "cgroup " + p.cgroup + " already belongs to pod " + owner->second);

    std::unordered_set<uint32_t> affected;
    if (existing != s.pods.end()) {
      s.add_tasks_of_pod(existing->second, affected);
      detach_pod(existing->second.pod);
    }
    PodState& ps = s.pods[p.uid] = PodState{p, s.epoch, {}};
    for (const auto& [role, pattern] : p.task_roles) ps.role_regex.emplace_back(role, compile_regex(pattern));
    if (!p.cgroup.empty()) s.pod_by_cgroup[p.cgroup] = p.uid;
    for (const auto& [name, claim_uid] : p.claims) s.pods_by_claim[claim_uid].insert(p.uid);
    auto moved = s.tasks_under_cgroup(p.cgroup);
    affected.insert(moved.begin(), moved.end());
    reresolve(affected);
    ApplyResult r;
    s.rederive(affected, r, "pod " + p.uid + " changed");
    return r;
  }

  void detach_pod(const Pod& p) {
    if (!p.cgroup.empty()) s.pod_by_cgroup.erase(p.cgroup);
    for (const auto& [name, claim_uid] : p.claims) {
      auto it = s.pods_by_claim.find(claim_uid);
      if (it == s.pods_by_claim.end()) continue;
      it->second.erase(p.uid);
      if (it->second.empty()) s.pods_by_claim.erase(it);
    }
  }

  // Re-resolves which pod each task belongs to after pod cgroups changed.
  void reresolve(const std::unordered_set<uint32_t>& tids) {
    s.forget_cgroup_pods();
    for (uint32_t tid : tids) {
      auto it = s.tasks.find(tid);
      if (it == s.tasks.end()) continue;
      TaskState& t = it->second;
      const uint32_t was = t.pod;
      t.pod = s.cgroup_pod(s.tids_by_cgroup.at(t.cgroup), s.cgroup_of(t));
      s.strings.retain(t.pod);
      s.strings.release(was);
    }
  }

  ApplyResult operator()(const PodRemoved& ev) {
    auto existing = s.pods.find(ev.uid);
    if (existing == s.pods.end()) return ignored("pod " + ev.uid + " is not bound");
    std::unordered_set<uint32_t> affected;
    s.add_tasks_of_pod(existing->second, affected);
    detach_pod(existing->second.pod);
    s.pods.erase(existing);
    reresolve(affected);
    ApplyResult r;
    s.rederive(affected, r, "pod " + ev.uid + " removed");
    return r;
  }

  ApplyResult operator()(const TaskSeen& ev) {
    const Task& t = ev.task;
    const uint32_t tid = t.key.tid, tgid = t.tgid;
    auto existing = s.tasks.find(tid);
    bool reused = false;
    uint8_t moved = CoreImpl::kAllKeys;  // the index keys that change
    std::vector<uint32_t> affected{tid};
    if (existing != s.tasks.end()) {
      const TaskState& old = existing->second;
      const bool keep_role = keeps_role(old, t);
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

  ApplyResult operator()(const TaskRenamed& ev) {
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
    s.rederive(std::move(affected), r, [&] { return "task renamed to '" + ev.comm + "'"; });
    return r;
  }

  ApplyResult operator()(const TaskExited& ev) {
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

  ApplyResult operator()(const TaskRoleSet& ev) {
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

  // Shared generation rules of both policy kinds (INV-3): an older generation is ignored, an
  // unchanged one is a duplicate, a changed spec needs a newer generation; 0 means "next".
  template <class P>
  std::optional<ApplyResult> policy_generation(PolicyKind kind, P& p, const P* existing) {
    const std::string key = policy_key(kind, p.name);
    auto hw = s.policy_high_water.find(key);
    if (p.generation == 0) {
      if (existing) {
        P same = p;
        same.generation = existing->generation;
        if (same == *existing) return ignored(key + " unchanged");
      }
      const int64_t next = hw == s.policy_high_water.end() ? 1 : hw->second + 1;
      if (next > kMaxGeneration)
        return invalid("metadata.generation", key + " is at the largest generation (2^53); it cannot change any more");
      p.generation = next;
      return std::nullopt;
    }
    if (hw == s.policy_high_water.end() || p.generation > hw->second) return std::nullopt;
    if (p.generation < hw->second)
      return ignored("INV-3: " + key + " generation " + std::to_string(p.generation) + " is older than " +
                     std::to_string(hw->second));
    if (!existing)
      return ignored("INV-3: " + key + " was deleted at generation " + std::to_string(hw->second) +
                     "; re-creating it needs a newer generation");
    if (*existing == p) return ignored(key + " unchanged");
    return invalid("metadata.generation", key + " changed but its generation " + std::to_string(p.generation) +
                                              " did not increase");
  }

  std::unordered_set<uint32_t> dra_reach(const DraExecutionPolicy& p) const {
    std::unordered_set<std::string> hit;
    for (const auto& [uid, ps] : s.pods) {
      bool match = true;
      for (const auto& [k, v] : p.match_labels) {
        auto it = ps.pod.labels.find(k);
        match = match && it != ps.pod.labels.end() && it->second == v;
      }
      if (match) hit.insert(uid);
    }
    return s.tasks_of_pods(hit);
  }

  ApplyResult operator()(const DraPolicyUpsert& ev) {
    DraExecutionPolicy p = ev.policy;
    auto existing = s.dra_policies.find(p.name);
    const DraExecutionPolicy* old = existing == s.dra_policies.end() ? nullptr : &existing->second.policy;
    if (auto early = policy_generation(PolicyKind::Dra, p, old)) return *early;

    DraPolicyState st = DraPolicyState::of(p);
    std::unordered_set<uint32_t> affected = dra_reach(p);
    if (old) {
      if (old->match_labels != p.match_labels) {  // the reach depends on the selector only
        auto before = dra_reach(*old);
        affected.insert(before.begin(), before.end());
      }
      st.previewed_generation = existing->second.previewed_generation;
    }
    s.dra_policies[p.name] = std::move(st);
    s.policy_high_water[policy_key(PolicyKind::Dra, p.name)] = p.generation;
    ApplyResult r;
    if (p.require_preview) r.warnings.push_back("DRAExecutionPolicy/" + p.name + " generation " +
                                                std::to_string(p.generation) + " waits for a preview (requirePreview)");
    s.rederive(affected, r, "DRAExecutionPolicy/" + p.name + " changed");
    return r;
  }

  ApplyResult operator()(const NodePolicyUpsert& ev) {
    NodeSchedulingPolicy p = ev.policy;
    auto existing = s.node_policies.find(p.name);
    const NodeSchedulingPolicy* old = existing == s.node_policies.end() ? nullptr : &existing->second.policy;
    if (auto early = policy_generation(PolicyKind::Node, p, old)) return *early;

    NodePolicyState st = NodePolicyState::of(p);
    std::vector<const TitleAndComm*> res{&st.regex};
    if (old) res.push_back(&existing->second.regex);
    std::unordered_set<uint32_t> affected = s.tasks_matching(res);
    s.node_policies[p.name] = std::move(st);
    s.policy_high_water[policy_key(PolicyKind::Node, p.name)] = p.generation;
    ApplyResult r;
    if (affected.empty()) r.warnings.push_back("NodeSchedulingPolicy/" + p.name + ": matches no task");
    s.rederive(affected, r, "NodeSchedulingPolicy/" + p.name + " changed");
    return r;
  }

  ApplyResult operator()(const PolicyDelete& ev) {
    const std::string key = policy_key(ev.kind, ev.name);
    int64_t current = 0;
    std::unordered_set<uint32_t> affected;
    if (ev.kind == PolicyKind::Dra) {
      auto it = s.dra_policies.find(ev.name);
      if (it == s.dra_policies.end()) return ignored(key + " does not exist");
      current = it->second.policy.generation;
      if (ev.generation != 0 && ev.generation < current)
        return ignored("INV-3: delete of " + key + " generation " + std::to_string(ev.generation) +
                       " but it is at " + std::to_string(current));
      affected = dra_reach(it->second.policy);
      s.dra_policies.erase(it);
    } else {
      auto it = s.node_policies.find(ev.name);
      if (it == s.node_policies.end()) return ignored(key + " does not exist");
      current = it->second.policy.generation;
      if (ev.generation != 0 && ev.generation < current)
        return ignored("INV-3: delete of " + key + " generation " + std::to_string(ev.generation) +
                       " but it is at " + std::to_string(current));
      affected = s.tasks_matching({&it->second.regex});
      s.node_policies.erase(it);
    }
    auto& hw = s.policy_high_water[key];
    hw = std::max({hw, current, ev.generation});
    ApplyResult r;
    s.rederive(affected, r, key + " deleted");
    return r;
  }

  ApplyResult operator()(const PreviewAck& ev) {
    if (ev.kind != PolicyKind::Dra) return ignored("node policies do not require a preview");
    auto it = s.dra_policies.find(ev.name);
    if (it == s.dra_policies.end()) return ignored("DRAExecutionPolicy/" + ev.name + " does not exist");
    if (ev.generation != it->second.policy.generation)
      return ignored("INV-3: preview of generation " + std::to_string(ev.generation) + " but the policy is at " +
                     std::to_string(it->second.policy.generation));
    if (it->second.previewed_generation == ev.generation) return ignored("already previewed");
    it->second.previewed_generation = ev.generation;
    ApplyResult r;
    if (it->second.policy.require_preview)
      s.rederive(dra_reach(it->second.policy), r, "DRAExecutionPolicy/" + ev.name + " previewed");
    return r;
  }

  ApplyResult operator()(const TimeAdvance& ev) {
    if (ev.now < s.now)
      return invalid("now", "time went backwards: " + std::to_string(ev.now) + " < " + std::to_string(s.now));
    if (ev.now == s.now) return ignored("time unchanged");
    s.now = ev.now;
    // Leases are renewed at half-life; only live entries hold leases, so a renewal never
    // extends a boost whose lineage is gone (INV-8).
    std::vector<uint32_t> due;
    for (const auto& [renew_at, tid] : s.lease_renewals.due(s.now)) due.push_back(tid);
    ApplyResult r;
    if (due.empty()) return r;
    ++s.generation;
    for (uint32_t tid : due) {
      DesiredEntry e = s.desired.at(tid);
      e.value.boost_until = s.now + e.value.max_boost;
      e.value.generation = s.generation;
      s.set_entry(tid, std::move(e));
      r.changed_tids.push_back(tid);
    }
    return r;
  }

  ApplyResult operator()(const DaemonRestart& ev) {
    uint64_t highest_actual = 0;
    ApplyResult r;
    for (const auto& [tid, v] : s.actual) {
      // A foreign entry beyond the bound must not carry G past it (or wrap it): it is unexplained
      // and the plan removes it (INV-5).
      if (v.generation > static_cast<uint64_t>(kMaxGeneration)) {
        r.warnings.push_back("kernel entry for tid " + std::to_string(tid) + " has generation " +
                             std::to_string(v.generation) + " beyond 2^53; not counted for the restart generation");
        continue;
      }
      highest_actual = std::max(highest_actual, v.generation);
    }
    if (ev.persisted_generation != 0 && ev.persisted_generation < s.generation)
      r.warnings.push_back("persisted generation " + std::to_string(ev.persisted_generation) +
                           " lags the generation in use " + std::to_string(s.generation) + " (INV-4)");
    const uint64_t base = ev.persisted_generation != 0 ? ev.persisted_generation : s.generation;
    s.generation = std::max(base, highest_actual) + 1;
    ++s.epoch;
    s.loading = true;
    for (const auto& [tid, e] : s.desired) r.changed_tids.push_back(tid);
    std::sort(r.changed_tids.begin(), r.changed_tids.end());
    s.claims.clear();
    s.pods.clear();
    s.tasks.clear();
    s.strings.clear();
    s.cpusets.clear();
    s.tasks_by_comm.clear();
    s.tids_by_title.clear();
    s.tids_by_tgid.clear();
    s.tids_by_cgroup.clear();
    s.cgroup_by_id.clear();
    s.cgroups_in_order.clear();
    s.pod_by_cgroup.clear();
    s.pods_by_claim.clear();
    s.desired.clear();
    s.entries_by_origin.clear();
    s.lease_renewals.clear();
    s.conflicts.clear();
    for (const auto& [tid, v] : s.actual) s.removal_reasons[tid] = "not re-derived after the restart (INV-7)";
    // Every former entry and every kernel entry has a new op now (deferred deletes, while loading).
    for (uint32_t tid : r.changed_tids) s.touch(tid);
    for (const auto& [tid, v] : s.actual) s.touch(tid);
    return r;
  }

  ApplyResult operator()(const SyncComplete&) {
    if (!s.loading) return ignored("not loading");
    s.loading = false;
    // The deferred deletes become deletes.
    std::vector<uint32_t> deferred;
    for (uint32_t tid : s.unsynced)
      if (!s.desired.count(tid)) deferred.push_back(tid);
    for (uint32_t tid : deferred) s.touch(tid);
    return {};
  }

  ApplyResult operator()(const BpfObserved& ev) {
    Core::ActualTable next;
    for (size_t i = 0; i < ev.entries.size(); ++i) {
      const auto& e = ev.entries[i];
      std::string f = "entries[" + std::to_string(i) + "]";
      if (e.tid == 0) return invalid(f + ".tid", "must be positive");
      if (!next.emplace(e.tid, e.value).second) return invalid(f + ".tid", "duplicate tid " + std::to_string(e.tid));
    }
    if (next == s.actual) return ignored("actual state unchanged");
    std::vector<uint32_t> before;
    before.reserve(s.actual.size());
    for (const auto& [tid, v] : s.actual) before.push_back(tid);
    s.actual = std::move(next);
    forget_reasons();
    // Pinned entries found while the desired state is still loading predate this daemon.
    if (s.loading)
      for (const auto& [tid, v] : s.actual)
        if (!s.desired.count(tid)) s.removal_reasons.emplace(tid, "not re-derived after the restart (INV-7)");
    // A read-back is the truth about the whole map: every tid it or the previous view held, and
    // every entry it lacks, gets its op again (the caller's earlier writes may not have landed).
    for (uint32_t tid : before) s.touch(tid);
    for (const auto& [tid, v] : s.actual) s.touch(tid);
    for (const auto& [tid, e] : s.desired) s.touch(tid);
    return {};
  }

  // Executes plan() without building it: exactly the tids where D and A differ.
  ApplyResult operator()(const BpfSynced&) {
    std::vector<uint32_t> todo;
    for (uint32_t tid : s.unsynced)
      if (s.desired.count(tid) || !s.loading) todo.push_back(tid);
    if (todo.empty()) return ignored("nothing to apply");
    for (uint32_t tid : todo) {
      if (auto d = s.desired.find(tid); d != s.desired.end()) {
        s.actual[tid] = d->second.value;
      } else {
        s.actual.erase(tid);
        s.removal_reasons.erase(tid);
      }
      s.touch(tid);
    }
    // Entries gone from the map give their slots back, as the desired table's do (issue #13).
    shrink_if_sparse(s.actual);
    shrink_if_sparse(s.removal_reasons);
    return {};
  }

  void forget_reasons() {
    for (auto it = s.removal_reasons.begin(); it != s.removal_reasons.end();) {
      if (s.actual.count(it->first)) ++it;
      else s.removal_reasons.erase(it++);  // a flat map's erase leaves the other iterators valid
    }
    shrink_if_sparse(s.removal_reasons);
  }
};

}  // namespace

// Invalid never depends on the tasks, their indexes, the tables or the kernel side (the handlers
// refuse on the event alone, or on the node, time, policies, claims, pods and marks), so a dry run
// on this copy refuses exactly what the real state would.
CoreImpl CoreImpl::validity_skeleton() const {
  CoreImpl t;
  t.node = node;
  t.generation = generation;
  t.epoch = epoch;
  t.dra_policies = dra_policies;
  t.node_policies = node_policies;
  t.policy_high_water = policy_high_water;
  t.claim_high_water = claim_high_water;
  t.claim_tombstones = claim_tombstones;
  t.loading = loading;
  t.now = now;
  t.claims = claims;
  for (const auto& [uid, p] : pods) t.pods.emplace(uid, PodState{p.pod, p.epoch, p.role_regex});
  t.pod_by_cgroup = pod_by_cgroup;
  t.pods_by_claim = pods_by_claim;
  return t;
}

// Events that change no policy, pod, claim or node state (DeriveMemo's keys and results).
static bool is_task_event(const Event& e) {
  return std::holds_alternative<TaskSeen>(e) || std::holds_alternative<TaskRenamed>(e) ||
         std::holds_alternative<TaskExited>(e) || std::holds_alternative<TaskRoleSet>(e) ||
         std::holds_alternative<TimeAdvance>(e) || std::holds_alternative<BpfSynced>(e) ||
         std::holds_alternative<BpfObserved>(e) || std::holds_alternative<SyncComplete>(e);
}

ApplyResult CoreImpl::apply(const Event& e) {
  // Stateless validation first (the same function the trace decoder runs on every line), so that
  // no handler can mutate anything before its input was checked.
  if (auto err = validate(e)) return invalid(*err);
  // The memo's keys are the policies', pods' and node's states, which only task events leave alone.
  if (!is_task_event(e)) memo.clear();
  return std::visit(Handlers{*this}, e);
}

}  // namespace c2c
