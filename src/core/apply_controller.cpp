// The controllers' events (issue 46; spec/state-machine.md, "The controller"): a signal window
// of one policy's controller, and the ticks a time_advance gives every controller. The decision
// itself is controller.cpp's pure function; this file keeps its state per policy.
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
    if (d.next.level != st.level) out.decisions.push_back(record(key.first, key.second, now, st.level, std::nullopt, d));
    st = d.next;
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
  st = d.next;
  return r;
}

}  // namespace c2c
