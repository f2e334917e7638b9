#include "daemon/node_state/intents.hpp"

namespace c2c::daemon {

const char* to_string(IntentState s) {
  switch (s) {
    case IntentState::Pending: return "PENDING";
    case IntentState::Sent: return "SENT";
    case IntentState::Applied: return "APPLIED";
    case IntentState::Failed: return "FAILED";
  }
  return "UNKNOWN";
}

std::optional<IntentState> intent_state_from_string(const std::string& s) {
  for (auto st : {IntentState::Pending, IntentState::Sent, IntentState::Applied, IntentState::Failed})
    if (s == to_string(st)) return st;
  return std::nullopt;
}

namespace {

std::string entries(uint32_t n) { return std::to_string(n) + (n == 1 ? " entry" : " entries"); }

std::string with(std::string head, const std::string& diagnosis) {
  return diagnosis.empty() ? head : head + "; " + diagnosis;
}

}  // namespace

void IntentTable::accepted(PolicyKind kind, const std::string& name, int64_t generation, const std::string& node,
                           std::vector<std::string> warnings, int64_t now_ms) {
  Slot s;
  s.intent.kind = kind;
  s.intent.policy = name;
  s.intent.generation = generation;
  s.intent.node = node;
  s.intent.state = IntentState::Pending;
  s.intent.reason = "accepted, not yet written to the pinned map";
  s.intent.warnings = std::move(warnings);
  s.intent.updated_unix_ms = now_ms;
  by_policy_[{kind, name}] = std::move(s);
  ++version_;
}

void IntentTable::removed(PolicyKind kind, const std::string& name) {
  if (by_policy_.erase({kind, name}) > 0) ++version_;
}

void IntentTable::waiting(PolicyKind kind, const std::string& name, const std::string& reason, int64_t now_ms) {
  auto it = by_policy_.find({kind, name});
  if (it == by_policy_.end()) return;
  auto& in = it->second.intent;
  if (!it->second.waiting || in.state != IntentState::Pending || in.reason != reason) in.updated_unix_ms = now_ms;
  ++version_;
  it->second.waiting = true;
  in.state = IntentState::Pending;
  in.reason = reason;
  in.matched_tasks = 0;
  in.applied_entries = 0;
}

void IntentTable::diagnosed(PolicyKind kind, const std::string& name, std::string why) {
  if (auto it = by_policy_.find({kind, name}); it != by_policy_.end()) it->second.diagnosis = std::move(why);
}

void IntentTable::settled(const std::map<PolicyId, PolicyApplyFacts>& facts, const std::string& owed_error,
                          int64_t now_ms) {
  for (auto& [id, s] : by_policy_) {
    if (s.waiting) {
      s.waiting = false;  // re-evaluated by the next waiting() call; state stays PENDING
      continue;
    }
    auto& in = s.intent;
    PolicyApplyFacts f;
    if (auto it = facts.find(id); it != facts.end()) f = it->second;
    IntentState next;
    std::string reason;
    if (!f.failure.empty()) {
      next = IntentState::Failed;
      reason = f.failure;
    } else if (!owed_error.empty() && f.in_map < f.matched) {
      next = IntentState::Failed;
      reason = owed_error;
    } else if (f.matched == 0) {
      // Nothing to write is not "applied": the reason names why (the diagnosis) or says so.
      next = IntentState::Pending;
      reason = s.diagnosis.empty() ? "matches no task on this node" : s.diagnosis;
    } else if (f.confirmed == f.matched) {
      next = IntentState::Applied;
      reason = with("every matched task's entry (" + entries(f.matched) + ") read back from the pinned map",
                    s.diagnosis);
    } else {
      next = IntentState::Sent;
      reason = with(entries(f.in_map) + " of " + std::to_string(f.matched) +
                        " written to the pinned map, not yet read back",
                    s.diagnosis);
    }
    if (in.state != next || in.reason != reason || in.matched_tasks != f.matched || in.applied_entries != f.in_map) {
      in.updated_unix_ms = now_ms;
      ++version_;
    }
    in.state = next;
    in.reason = reason;
    in.matched_tasks = f.matched;
    in.applied_entries = f.in_map;
  }
}

const Intent* IntentTable::find(PolicyKind kind, const std::string& name) const {
  auto it = by_policy_.find({kind, name});
  return it == by_policy_.end() ? nullptr : &it->second.intent;
}

std::vector<Intent> IntentTable::list(const std::string& policy_filter, std::optional<PolicyKind> kind) const {
  std::vector<Intent> out;
  for (const auto& [id, s] : by_policy_) {
    if (!policy_filter.empty() && id.second != policy_filter) continue;
    if (kind && id.first != *kind) continue;
    out.push_back(s.intent);
  }
  return out;
}

void IntentTable::restore(std::vector<Intent> intents) {
  by_policy_.clear();
  for (auto& in : intents) {
    Slot s;
    s.intent = std::move(in);
    by_policy_[{s.intent.kind, s.intent.policy}] = std::move(s);
  }
  ++version_;
}

size_t IntentTable::count(IntentState st) const {
  size_t n = 0;
  for (const auto& [id, s] : by_policy_) n += s.intent.state == st;
  return n;
}

}  // namespace c2c::daemon
