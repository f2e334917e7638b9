// The controllers' events (issue 46; spec/state-machine.md, "The controller"): a signal window
// of one policy's controller, and the ticks a time_advance gives every controller. The decision
// itself is controller.cpp's pure function; this file keeps its state per policy and writes each
// level into the entries of the threads the controller acts on.
#include "core/event_handlers.hpp"

namespace c2c {

const ControllerSpec* CoreImpl::controller_spec(PolicyKind kind, const std::string& name) const {
  if (kind == PolicyKind::Dra) {
    auto it = dra_policies.find(name);
    return it == dra_policies.end() || !it->second.policy.controller ? nullptr : &*it->second.policy.controller;
  }
  auto it = node_policies.find(name);
  return it == node_policies.end() || !it->second.policy.controller ? nullptr : &*it->second.policy.controller;
}

// A new generation may change every bound of the spec: its controller starts again at level 0,
// the static policy, which is always within every bound (fail closed).
void CoreImpl::reset_controller(PolicyKind kind, const std::string& name, const std::optional<ControllerSpec>& spec) {
  if (spec)
    controllers[{kind, name}] = ControllerState{};
  else
    controllers.erase({kind, name});
}

bool controller_acts_on(const Origin& o, PolicyKind kind, const std::string& name, const ControllerSpec& spec) {
  // A DRA policy's controller measures and acts on its one role (spec.controller.role).
  return o.kind == kind && o.policy == name && (kind != PolicyKind::Dra || o.role == spec.role);
}

void CoreImpl::apply_level(const Origin& o, RuntimeValue& v) const {
  auto it = controllers.find({o.kind, o.policy});
  if (it == controllers.end() || it->second.level == 0) return;
  const ControllerSpec* spec = controller_spec(o.kind, o.policy);
  if (!spec || !controller_acts_on(o, o.kind, o.policy, *spec)) return;
  // INV-6: the level's CPUs are cut to the entry's own allowed CPUs, never the spec's as given.
  const std::optional<CpuSet> allowed = (v.flags & kFlagAllowedCpus) ? std::optional<CpuSet>(v.allowed) : std::nullopt;
  const LevelAction a = level_action(*spec, it->second.level, allowed);
  if (a.boost) {
    // The scheduler boosts only the boosting classes (bpf/c2c_guards.h, INV-8): a boost written
    // on a normal class would do nothing. A raised level with a boost is what a node policy of
    // priority > 0 writes: latency-critical, with a lease the daemon renews while the level lasts
    // and that runs out by itself when it stops (a dead daemon leaves nothing raised).
    v.exec_class = ExecClass::LatencyCritical;
    v.flags |= kFlagBoost;
    if (o.kind == PolicyKind::Dra) {
      auto p = dra_policies.find(o.policy);
      v.max_boost = p != dra_policies.end() ? p->second.policy.max_boost : node.default_max_boost;
    } else {
      v.max_boost = node.default_max_boost;
    }
  }
  if (a.slice) {
    v.slice_ns = *a.slice;
    v.flags |= kFlagCustomSlice;
  }
  if (a.preferred) {
    v.preferred = *a.preferred;
    v.flags |= kFlagPreferredCpus;
  }
}

void CoreImpl::rederive_controlled(PolicyKind kind, const std::string& name, ApplyResult& out) {
  std::vector<uint32_t> tids;
  for (const auto& [origin, members] : entries_by_origin)
    if (origin->kind == kind && origin->policy == name) tids.insert(tids.end(), members.begin(), members.end());
  if (tids.empty()) return;
  // The policy still wins these tasks: a level never removes an entry (the reason is for form).
  rederive(std::move(tids), out, [] { return std::string("controller level changed"); });
}

namespace {

ControllerDecisionRecord record(PolicyKind kind, const std::string& name, Nanos at, uint32_t from,
                                std::optional<Nanos> signal, const ControllerDecision& d) {
  return {kind, name, at, from, d.next.level, signal, d.rule, d.reason};
}

}  // namespace

void CoreImpl::tick_controllers(ApplyResult& out) {
  for (auto& [key, st] : controllers) {
    const ControllerSpec* spec = controller_spec(key.first, key.second);
    if (!spec) continue;
    ControllerDecision d = decide(*spec, st, ControllerInput{now, false, std::nullopt});
    const bool changed = d.next.level != st.level;
    if (changed) out.decisions.push_back(record(key.first, key.second, now, st.level, std::nullopt, d));
    st = d.next;
    if (changed) rederive_controlled(key.first, key.second, out);
  }
}

ApplyResult EventHandlers::operator()(const ControllerWindow& ev) {
  const std::string key = std::string(to_string(ev.kind)) + "/" + ev.policy;
  const ControllerSpec* spec = s.controller_spec(ev.kind, ev.policy);
  // A window for a policy that is gone, or lost its controller, is a stale input (its source
  // measured under an older state): nothing changes.
  if (!spec) {
    const bool exists = ev.kind == PolicyKind::Dra ? s.dra_policies.count(ev.policy) : s.node_policies.count(ev.policy);
    return ignored(key + (exists ? " has no controller" : " does not exist"));
  }
  ControllerState& st = s.controllers[{ev.kind, ev.policy}];
  ControllerDecision d = decide(*spec, st, ControllerInput{s.now, true, ev.signal});
  ApplyResult r;
  r.decisions.push_back(record(ev.kind, ev.policy, s.now, st.level, ev.signal, d));
  const bool changed = d.next.level != st.level;
  st = d.next;
  // The level acts: the entries of the threads the controller acts on follow it (CTL-1).
  if (changed) s.rederive_controlled(ev.kind, ev.policy, r);
  return r;
}

}  // namespace c2c
