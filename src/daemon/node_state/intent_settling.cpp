#include "daemon/node_state/intent_settling.hpp"

#include "daemon/node_state/intent_reasons.hpp"

namespace c2c::daemon {

void IntentFacts::bring_up_to_date(const Core& core, bool* moved) {
  if (recount_) {
    counts_.recount(core);
    *moved = true;
  } else {
    *moved = counts_.update(core, dirty_);
  }
  recount_ = false;
}

void IntentFacts::drifted(const Core& core) {
  counts_.recount(core);
  recount_ = true;
}

bool IntentFacts::settle(const Core& core) {
  bool moved = false;
  bring_up_to_date(core, &moved);
  dirty_.clear();
  return moved;
}

void IntentFacts::confirm(const Core& core) {
  bool moved = false;
  bring_up_to_date(core, &moved);
  counts_.confirm();
}

std::map<PolicyId, PolicyApplyFacts> IntentFacts::facts(const Core& core, const mirror::ApplyReport* report) const {
  auto f = counts_.facts();
  if (!report) return f;
  for (const auto& op : report->ops) {
    if (op.success()) continue;
    auto it = core.desired().find(op.tid);
    if (it == core.desired().end() || !it->second.origin) continue;
    auto& x = f[{it->second.origin->kind, it->second.origin->policy}];
    if (x.failure.empty()) x.failure = mirror::describe(op);
  }
  return f;
}

void refresh_preview_waits(const DurableState& durable, IntentTable& intents, int64_t now_ms) {
  for (const auto& p : durable.policies) {
    const auto* d = std::get_if<DraExecutionPolicy>(&p);
    if (!d || !d->require_preview) continue;
    auto it = durable.preview_acks.find({PolicyKind::Dra, d->name});
    if (it != durable.preview_acks.end() && it->second == d->generation) continue;
    intents.waiting(PolicyKind::Dra, d->name,
                    "requirePreview: waiting for an acknowledged preview of generation " +
                        std::to_string(d->generation) + " (Preview with acknowledge=true)",
                    now_ms);
  }
}

void settle_intents(IntentTable& intents, const DurableState& durable,
                    const std::map<PolicyId, PolicyApplyFacts>& facts, const std::string& owed_error, int64_t now_ms) {
  refresh_preview_waits(durable, intents, now_ms);  // a policy still waiting for its preview stays PENDING, saying so
  intents.settled(facts, owed_error, now_ms);
}

bool selects_this_node(const Core& core, const AnyPolicy& p, std::string* why) {
  const auto* n = std::get_if<NodeSchedulingPolicy>(&p);
  if (!n) return true;  // a DRA policy reaches the node through its pods
  auto no = core.node_not_selected(*n);
  if (no && why) *why = *no;
  return !no;
}

void refresh_intents(IntentTable& intents, const Core& core, const DurableState& durable, const std::string& node,
                     int64_t now_ms) {
  const auto lost = lost_conflicts(core.conflicts());
  for (const auto& p : durable.policies) {
    auto [kind, name] = policy_id(p);
    const auto* in = intents.find(kind, name);
    if (!selects_this_node(core, p, nullptr)) {
      if (in) intents.removed(kind, name);
      continue;
    }
    if (!in || in->generation != policy_generation(p))
      intents.accepted(kind, name, policy_generation(p), node, {}, now_ms);
    std::vector<std::string> stale;
    if (const auto* d = std::get_if<DraExecutionPolicy>(&p)) stale = core.stale_claims(*d);
    intents.diagnosed(kind, name, intent_diagnosis(std::string(to_string(kind)) + "/" + name, stale, lost));
  }
}

}  // namespace c2c::daemon
