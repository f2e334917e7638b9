#include "daemon/node_state/policy_facts.hpp"

namespace c2c::daemon {

uint32_t PolicyFacts::index_of(const PolicyId& id) {
  auto [it, fresh] = index_.emplace(id, static_cast<uint32_t>(policies_.size()));
  if (fresh) {
    policies_.push_back(id);
    counts_.emplace_back();
  }
  return it->second;
}

void PolicyFacts::add(uint32_t tid, const Core& core, const Slot* was) {
  const auto& desired = core.desired();
  auto d = desired.find(tid);
  if (d == desired.end() || !d->second.origin) return;
  Slot s;
  s.policy = index_of({d->second.origin->kind, d->second.origin->policy});
  s.generation = d->second.origin->policy_generation;
  auto a = core.actual().find(tid);
  s.in_map = a != core.actual().end() && a->second == d->second.value;
  // Still the entry a read-back saw for this policy generation (rewritten at most: a lease renewal).
  s.confirmed = s.in_map && was && was->confirmed && was->policy == s.policy && was->generation == s.generation;
  auto& c = counts_[s.policy];
  ++c.matched;
  if (s.in_map) ++c.in_map;
  if (s.confirmed) ++c.confirmed;
  slots_.emplace(tid, s);
}

void PolicyFacts::remove(uint32_t tid) {
  auto it = slots_.find(tid);
  if (it == slots_.end()) return;
  auto& c = counts_[it->second.policy];
  --c.matched;
  if (it->second.in_map) --c.in_map;
  if (it->second.confirmed) --c.confirmed;
  slots_.erase(it);
  // Buckets are not given back by erase: once mostly empty (a mass exit), shrink the array.
  if (slots_.bucket_count() > 1024 && slots_.size() * 8 < slots_.bucket_count()) slots_.rehash(0);
}

void PolicyFacts::recount(const Core& core) {
  auto before = std::move(slots_);
  slots_.clear();
  for (auto& c : counts_) c = PolicyApplyFacts{};
  for (const auto& [tid, e] : core.desired()) {
    auto was = before.find(tid);
    add(tid, core, was == before.end() ? nullptr : &was->second);
  }
}

bool PolicyFacts::update(const Core& core, const std::vector<uint32_t>& tids) {
  bool moved = false;
  for (uint32_t tid : tids) {
    auto before = slots_.find(tid);
    std::optional<Slot> old;
    if (before != slots_.end()) old = before->second;
    remove(tid);
    add(tid, core, old ? &*old : nullptr);
    auto after = slots_.find(tid);
    bool now = after != slots_.end();
    if (now != old.has_value() ||
        (now && (after->second.policy != old->policy || after->second.in_map != old->in_map ||
                 after->second.confirmed != old->confirmed)))
      moved = true;
  }
  return moved;
}

bool PolicyFacts::confirm() {
  bool moved = false;
  for (auto& [tid, s] : slots_) {
    if (!s.in_map || s.confirmed) continue;
    s.confirmed = true;
    ++counts_[s.policy].confirmed;
    moved = true;
  }
  return moved;
}

std::map<PolicyId, PolicyApplyFacts> PolicyFacts::facts() const {
  std::map<PolicyId, PolicyApplyFacts> out;
  for (size_t i = 0; i < policies_.size(); ++i)
    if (counts_[i].matched > 0) out.emplace(policies_[i], counts_[i]);
  return out;
}

}  // namespace c2c::daemon
