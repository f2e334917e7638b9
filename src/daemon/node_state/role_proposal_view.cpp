#include "daemon/node_state/role_proposal_view.hpp"

#include <map>

namespace c2c::daemon {

std::optional<ClassifyMode> classify_of(const Core& core, PolicyKind kind, const std::string& name) {
  if (kind == PolicyKind::Dra) {
    if (auto p = core.dra_policy(name)) return p->classify;
  } else if (auto p = core.node_policy(name)) {
    return p->classify;
  }
  return std::nullopt;
}

std::vector<ProposalView> view_proposals(const Core& core, const ActivityWindow& w) {
  // The window's threads' lineages, and per process the lowest tid with one.
  std::map<uint32_t, Lineage> lineage;
  std::map<uint32_t, uint32_t> tgid_of, process_policy_tid;
  for (const auto& t : w.threads) {
    tgid_of.emplace(t.tid, t.tgid);
    if (auto l = core.explain(t.tid)) {
      lineage.emplace(t.tid, *l);
      process_policy_tid.emplace(t.tgid, t.tid);  // threads are sorted by tid: the first is the lowest
    }
  }
  std::vector<ProposalView> out;
  for (const auto& p : propose_roles(w)) {
    // Each proposed thread's own task (its registered role, its start): one lookup, not a copy of
    // every task of the node once a window.
    const std::optional<Task> task = core.task(p.tid);
    const Lineage* own = nullptr;
    if (auto it = lineage.find(p.tid); it != lineage.end()) own = &it->second;
    const Lineage* of_policy = own;
    if (of_policy == nullptr) {
      auto pt = process_policy_tid.find(tgid_of[p.tid]);
      if (pt == process_policy_tid.end()) continue;  // no policy's thread
      of_policy = &lineage.at(pt->second);
    }
    auto mode = classify_of(core, of_policy->policy_kind, of_policy->policy);
    if (!mode) continue;
    ThreadRoleFacts facts;
    facts.registered_role = (task && !task->role.empty()) || (own && !own->role_source.empty());
    facts.explicit_selector = own != nullptr && own->strategy == Strategy::ExactTid;
    ProposalView v;
    v.proposal = p;
    v.kind = of_policy->policy_kind;
    v.policy = of_policy->policy;
    v.facts = facts;
    v.tgid = tgid_of[p.tid];
    v.start = task ? task->key.start : 0;
    if (auto shown = under_mode(std::move(v), *mode)) out.push_back(std::move(*shown));  // none under classify: off
  }
  return out;
}

std::optional<ProposalView> under_mode(ProposalView v, ClassifyMode mode) {
  if (mode == ClassifyMode::Off) return std::nullopt;
  v.mode = mode;
  v.outcome = proposal_outcome(mode, v.facts);
  v.text = std::string(to_string(v.outcome)) + ": " + describe(v.proposal) + " [" +
           (v.kind == PolicyKind::Dra ? "DRAExecutionPolicy/" : "NodeSchedulingPolicy/") + v.policy +
           ", classify: " + to_string(mode) + "]";
  return v;
}

}  // namespace c2c::daemon
