// The policy events: DRA and node policy upserts, deletes and preview acknowledgements
// (spec/state-machine.md, "Events", "Generations").
#include <algorithm>

#include "core/event_handlers.hpp"

namespace c2c {

namespace {

std::string policy_key(PolicyKind k, const std::string& name) { return std::string(to_string(k)) + "/" + name; }

}  // namespace

// Shared generation rules of both policy kinds (INV-3): an older generation is ignored, an
// unchanged one is a duplicate, a changed spec needs a newer generation; 0 means "next".
template <class P>
std::optional<ApplyResult> EventHandlers::policy_generation(PolicyKind kind, P& p, const P* existing) {
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

std::unordered_set<uint32_t> EventHandlers::dra_reach(const DraExecutionPolicy& p) const {
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

ApplyResult EventHandlers::operator()(const DraPolicyUpsert& ev) {
  DraExecutionPolicy p = ev.policy;
  auto existing = s.dra_policies.find(p.name);
  const DraExecutionPolicy* old = existing == s.dra_policies.end() ? nullptr : &existing->second.policy;
  if (auto early = policy_generation(PolicyKind::Dra, p, old)) return *early;

  DraPolicyState st = DraPolicyState::of(p, compiled);
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
  s.reset_controller(PolicyKind::Dra, p.name, p.controller);
  ApplyResult r;
  if (p.require_preview) r.warnings.push_back("DRAExecutionPolicy/" + p.name + " generation " +
                                              std::to_string(p.generation) + " waits for a preview (requirePreview)");
  s.rederive(affected, r, "DRAExecutionPolicy/" + p.name + " changed");
  return r;
}

ApplyResult EventHandlers::operator()(const NodePolicyUpsert& ev) {
  NodeSchedulingPolicy p = ev.policy;
  auto existing = s.node_policies.find(p.name);
  const NodeSchedulingPolicy* old = existing == s.node_policies.end() ? nullptr : &existing->second.policy;
  if (auto early = policy_generation(PolicyKind::Node, p, old)) return *early;

  NodePolicyState st = NodePolicyState::of(p, compiled);
  std::vector<const TitleAndComm*> res{&st.regex};
  if (old) res.push_back(&existing->second.regex);
  std::unordered_set<uint32_t> affected = s.tasks_matching(res);
  s.node_policies[p.name] = std::move(st);
  s.policy_high_water[policy_key(PolicyKind::Node, p.name)] = p.generation;
  s.reset_controller(PolicyKind::Node, p.name, p.controller);
  ApplyResult r;
  if (affected.empty()) r.warnings.push_back("NodeSchedulingPolicy/" + p.name + ": matches no task");
  s.rederive(affected, r, "NodeSchedulingPolicy/" + p.name + " changed");
  return r;
}

ApplyResult EventHandlers::operator()(const PolicyDelete& ev) {
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
  s.reset_controller(ev.kind, ev.name, std::nullopt);
  ApplyResult r;
  s.rederive(affected, r, key + " deleted");
  return r;
}

ApplyResult EventHandlers::operator()(const PreviewAck& ev) {
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

}  // namespace c2c
