// The tasks a cgroup, a pod or a thread group holds, and the pod a cgroup resolves to (cached per
// cgroup until pod bindings change).
#include "core/core_impl.hpp"

namespace c2c {

namespace {

bool cgroup_within(const std::string& path, const std::string& root) {
  return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

}  // namespace

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

}  // namespace c2c
