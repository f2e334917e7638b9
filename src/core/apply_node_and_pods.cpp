// The node and pod events (spec/state-machine.md, "Events"): the node's identity, topology and
// labels; pods bound and removed, after which the tasks under the pod's cgroup resolve their pod
// again.
#include "core/event_handlers.hpp"

namespace c2c {

ApplyResult EventHandlers::operator()(const NodeInfoEvent& ev) {
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
ApplyResult EventHandlers::operator()(const NodeLabels& ev) {
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

ApplyResult EventHandlers::operator()(const PodBound& ev) {
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
  for (const auto& [role, pattern] : p.task_roles) ps.role_regex.emplace_back(role, compile_regex(pattern, compiled));
  if (!p.cgroup.empty()) s.pod_by_cgroup[p.cgroup] = p.uid;
  for (const auto& [name, claim_uid] : p.claims) s.pods_by_claim[claim_uid].insert(p.uid);
  auto moved = s.tasks_under_cgroup(p.cgroup);
  affected.insert(moved.begin(), moved.end());
  reresolve(affected);
  ApplyResult r;
  s.rederive(affected, r, "pod " + p.uid + " changed");
  return r;
}

void EventHandlers::detach_pod(const Pod& p) {
  if (!p.cgroup.empty()) s.pod_by_cgroup.erase(p.cgroup);
  for (const auto& [name, claim_uid] : p.claims) {
    auto it = s.pods_by_claim.find(claim_uid);
    if (it == s.pods_by_claim.end()) continue;
    it->second.erase(p.uid);
    if (it->second.empty()) s.pods_by_claim.erase(it);
  }
}

// Re-resolves which pod each task belongs to after pod cgroups changed.
void EventHandlers::reresolve(const std::unordered_set<uint32_t>& tids) {
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

ApplyResult EventHandlers::operator()(const PodRemoved& ev) {
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

}  // namespace c2c
