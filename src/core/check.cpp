// Invariant checker: INV-1..INV-8 as predicates over the state and the actual kernel entries
// (spec/state-machine.md, "Invariants"). It reads the state only; it never repairs it.
// One function per invariant and side (entry, kernel, generations); check() runs them over every
// key, check_step() (core.cpp) over the keys an event touched.
#include <algorithm>
#include <unordered_set>

#include "core/core_impl.hpp"

namespace c2c {

namespace {

// The envelope of a task (spec §3 "CPU sets"), computed here from the raw state and not with
// CoreImpl::envelope() or the pod indexes, so that a bug in either cannot hide from INV-6: the
// task's own cpuset, else that of the pod whose cgroup is the deepest ancestor of the task's,
// else the node's CPUs; nullopt when none is known. (A walk over the pods: there are few.)
std::optional<CpuSet> independent_envelope(const CoreImpl& s, const TaskState& task) {
  if (const CpuSet* own = s.cpuset_of(task)) return *own;
  const std::string& cgroup = s.cgroup_of(task);
  const Pod* best = nullptr;
  for (const auto& [uid, ps] : s.pods) {
    const std::string& c = ps.pod.cgroup;
    const bool contains = !c.empty() && (cgroup == c || (cgroup.size() > c.size() &&
                                                         cgroup.compare(0, c.size(), c) == 0 &&
                                                         cgroup[c.size()] == '/'));
    if (contains && (!best || c.size() > best->cgroup.size())) best = &ps.pod;
  }
  if (best && best->cpuset) return best->cpuset;
  if (!s.node.cpus.empty()) return s.node.cpus;
  return std::nullopt;
}

// Collects violations; `lineage` is attached to every report about a tid that has an entry.
struct Reporter {
  const CoreImpl& s;
  std::vector<Violation>& out;
  void operator()(const char* inv, uint32_t tid, std::string msg) const {
    out.push_back(Violation{inv, std::move(msg), s.desired.count(tid) ? s.lineage(tid) : std::nullopt, tid});
  }
  void global(const char* inv, std::string msg, uint32_t tid = 0) const {
    out.push_back(Violation{inv, std::move(msg), std::nullopt, tid});
  }
};

std::string who(uint32_t tid) { return "tid " + std::to_string(tid); }

using TaskIt = decltype(CoreImpl::tasks)::const_iterator;

// INV-2: the entry belongs to the live task with exactly this (tid, start).
void entry_inv2(const CoreImpl& s, uint32_t tid, const DesiredEntry& e, TaskIt t, const Reporter& report) {
  if (t == s.tasks.end()) report("INV-2", tid, who(tid) + ": entry for a task that is not live");
  else if (t->second.key.start != e.value.start)
    report("INV-2", tid, who(tid) + ": entry start " + std::to_string(e.value.start) +
                             " but the live task started at " + std::to_string(t->second.key.start));
}

// INV-1: every claim in the lineage is allocated, at that generation, for that pod, here.
void entry_inv1(const CoreImpl& s, uint32_t tid, const DesiredEntry& e, TaskIt t, const Reporter& report) {
  const Origin& o = *e.origin;
  for (const auto& ref : o.claims) {
    auto c = s.claims.find(ref.uid);
    if (c == s.claims.end()) {
      report("INV-1", tid, who(tid) + ": derived from claim " + ref.uid + " which is not allocated");
    } else if (c->second.claim.generation != ref.generation) {
      report("INV-1", tid, who(tid) + ": derived from claim " + ref.uid + " generation " +
                               std::to_string(ref.generation) + " but the claim is at " +
                               std::to_string(c->second.claim.generation));
    } else if (!s.claim_live_for(ref.uid, o.pod_uid)) {
      report("INV-1", tid, who(tid) + ": claim " + ref.uid + " is not reserved for pod " + o.pod_uid + " on this node");
    }
  }
  if (o.kind != PolicyKind::Dra) return;
  if (o.claims.empty()) report("INV-1", tid, who(tid) + ": DRA-derived entry without a live claim");
  auto pol = s.dra_policies.find(o.policy);
  auto pod = s.pods.find(o.pod_uid);
  if (pol != s.dra_policies.end() && pod != s.pods.end() && pol->second.policy.fail_closed_on_stale_claim) {
    for (const auto& name : pol->second.policy.resource_claims) {
      auto cit = pod->second.pod.claims.find(name);
      if (cit == pod->second.pod.claims.end() || !s.claim_live_for(cit->second, o.pod_uid))
        report("INV-1", tid, who(tid) + ": claim '" + name + "' is stale but failClosedOnStaleClaim keeps no entry");
    }
  }
  if (pod == s.pods.end()) report("INV-1", tid, who(tid) + ": derived through pod " + o.pod_uid + " which is gone");
  else if (t != s.tasks.end() && s.pod_of(t->second) != o.pod_uid)
    report("INV-1", tid, who(tid) + ": task is no longer in pod " + o.pod_uid);
}

// INV-3: the entry comes from the policy's current generation (never an older or deleted one).
void entry_inv3(const CoreImpl& s, uint32_t tid, const DesiredEntry& e, const Reporter& report) {
  const Origin& o = *e.origin;
  int64_t current = -1;
  bool previewed = true;
  if (o.kind == PolicyKind::Dra) {
    if (auto p = s.dra_policies.find(o.policy); p != s.dra_policies.end()) {
      current = p->second.policy.generation;
      previewed = p->second.active();
    }
  } else if (auto p = s.node_policies.find(o.policy); p != s.node_policies.end()) {
    current = p->second.policy.generation;
  }
  if (current < 0) report("INV-3", tid, who(tid) + ": policy " + o.policy + " was deleted but its entry remains");
  else if (current != o.policy_generation)
    report("INV-3", tid, who(tid) + ": derived from policy generation " + std::to_string(o.policy_generation) +
                             " but " + o.policy + " is at " + std::to_string(current));
  else if (!previewed)
    report("INV-3", tid, who(tid) + ": generation " + std::to_string(current) + " of " + o.policy +
                             " is live without the preview it requires");
}

// INV-4: no entry carries a generation the node has not reached.
void entry_inv4(const CoreImpl& s, uint32_t tid, const DesiredEntry& e, const Reporter& report) {
  if (e.value.generation == 0 || e.value.generation > s.generation)
    report("INV-4", tid, who(tid) + ": entry generation " + std::to_string(e.value.generation) + " outside (0, " +
                             std::to_string(s.generation) + "]");
}

// INV-6: allowed CPUs within the envelope (and the allocated CPUs), preferred within allowed.
void entry_inv6(const CoreImpl& s, uint32_t tid, const DesiredEntry& e, TaskIt t, const Reporter& report) {
  const RuntimeValue& v = e.value;
  if (t != s.tasks.end()) {
    auto env = independent_envelope(s, t->second);
    if (env && !v.allowed.subset_of(*env))
      report("INV-6", tid, who(tid) + ": allowed CPUs " + v.allowed.to_string() + " widen the envelope " + env->to_string());
    if (env && !(v.flags & kFlagAllowedCpus))
      report("INV-6", tid, who(tid) + ": the envelope " + env->to_string() + " is known but the entry does not carry it");
  }
  if (!v.preferred.subset_of(v.allowed))
    report("INV-6", tid, who(tid) + ": preferred CPUs " + v.preferred.to_string() + " outside allowed " +
                             v.allowed.to_string());
  const Origin& o = *e.origin;
  if (o.kind != PolicyKind::Dra) return;
  auto pol = s.dra_policies.find(o.policy);
  if (pol == s.dra_policies.end() || !pol->second.policy.respect_allocated_cpuset) return;
  // The entry's claims together allocated these CPUs; allowed must stay inside them.
  std::optional<CpuSet> allocated;
  for (const auto& ref : o.claims)
    if (auto c = s.claims.find(ref.uid); c != s.claims.end())
      for (const auto& d : c->second.claim.devices)
        if (d.cpus) allocated = allocated ? (*allocated | *d.cpus) : *d.cpus;
  if (allocated && !v.allowed.subset_of(*allocated))
    report("INV-6", tid, who(tid) + ": allowed CPUs " + v.allowed.to_string() +
                             " outside the CPUs its claims allocated (" + allocated->to_string() + ")");
}

// INV-7: everything in the lineage was observed after the last restart.
void entry_inv7(const CoreImpl& s, uint32_t tid, const DesiredEntry& e, TaskIt t, const Reporter& report) {
  const Origin& o = *e.origin;
  if (e.restart_epoch != s.epoch) report("INV-7", tid, who(tid) + ": entry derived before the last restart");
  if (t != s.tasks.end() && t->second.epoch != s.epoch)
    report("INV-7", tid, who(tid) + ": task not re-observed since the restart");
  if (auto pod = s.pods.find(o.pod_uid); pod != s.pods.end() && pod->second.epoch != s.epoch)
    report("INV-7", tid, who(tid) + ": pod not re-observed since the restart");
  for (const auto& ref : o.claims)
    if (auto c = s.claims.find(ref.uid); c != s.claims.end() && c->second.epoch != s.epoch)
      report("INV-7", tid, who(tid) + ": claim " + ref.uid + " not re-observed since the restart");
}

// INV-8: a boost is a lease no longer than maxBoostDuration that has not run out.
void entry_inv8(const CoreImpl& s, uint32_t tid, const DesiredEntry& e, const Reporter& report) {
  const RuntimeValue& v = e.value;
  if (v.flags & kFlagBoost) {
    if (!class_boosts(v.exec_class)) report("INV-8", tid, who(tid) + ": boost on a class that never boosts");
    if (v.max_boost < kMinBoostNs || v.max_boost > kMaxBoostNs)
      report("INV-8", tid, who(tid) + ": maxBoostDuration " + std::to_string(v.max_boost) + " ns out of bounds");
    if (v.boost_until <= s.now)
      report("INV-8", tid, who(tid) + ": boost lease expired at " + std::to_string(v.boost_until) + " but still boosted");
    else if (v.boost_until - s.now > v.max_boost)
      report("INV-8", tid, who(tid) + ": boost lease runs " + std::to_string(v.boost_until - s.now) +
                               " ns, longer than maxBoostDuration " + std::to_string(v.max_boost));
  } else if (v.boost_until != 0 || v.max_boost != 0) {
    report("INV-8", tid, who(tid) + ": unboosted entry carries a boost lease");
  }
  // Boost inheritance (issue 43 item 3): passed on only from a boosted run, at most two deep.
  if ((v.flags & (kFlagWakeeBoost | kFlagWakeeDepth2)) && !(v.flags & kFlagBoost))
    report("INV-8", tid, who(tid) + ": boost inheritance on an entry that does not boost");
  if ((v.flags & kFlagWakeeDepth2) && !(v.flags & kFlagWakeeBoost))
    report("INV-8", tid, who(tid) + ": boost inheritance depth 2 without its depth 1");
}

void check_entry(const CoreImpl& s, uint32_t tid, const DesiredEntry& e, const Reporter& report) {
  auto t = s.tasks.find(tid);
  entry_inv2(s, tid, e, t, report);
  entry_inv1(s, tid, e, t, report);
  entry_inv3(s, tid, e, report);
  entry_inv4(s, tid, e, report);
  entry_inv6(s, tid, e, t, report);
  entry_inv7(s, tid, e, t, report);
  entry_inv8(s, tid, e, report);
}

// INV-3: generations never fall below what was seen (high-water marks include tombstones).
void claim_at_high_water(const CoreImpl& s, const std::string& uid, const Reporter& report) {
  auto cs = s.claims.find(uid);
  if (cs == s.claims.end()) return;
  auto hw = s.claim_high_water.find(uid);
  if (hw == s.claim_high_water.end() || hw->second != cs->second.claim.generation)
    report.global("INV-3", "claim " + uid + " generation " + std::to_string(cs->second.claim.generation) +
                               " is not its newest generation seen");
}

void policy_at_high_water(const CoreImpl& s, PolicyKind k, const std::string& name, const Reporter& report) {
  int64_t gen = 0;
  if (k == PolicyKind::Dra) {
    auto it = s.dra_policies.find(name);
    if (it == s.dra_policies.end()) return;
    gen = it->second.policy.generation;
  } else {
    auto it = s.node_policies.find(name);
    if (it == s.node_policies.end()) return;
    gen = it->second.policy.generation;
  }
  const std::string key = std::string(to_string(k)) + "/" + name;
  auto hw = s.policy_high_water.find(key);
  if (hw == s.policy_high_water.end() || hw->second != gen)
    report.global("INV-3", key + " generation " + std::to_string(gen) + " is not its newest generation seen");
}

// Kernel side. The plan is what the mirror will execute; an actual entry is fine when it equals
// its desired entry or the plan rewrites/removes it (or, while loading, defers its removal).
// INV-5/INV-7 on the plan's ops; returns whether any delete of these tids is deferred.
bool kernel_plan_ops(const CoreImpl& s, const std::vector<uint32_t>& tids, const Reporter& report) {
  bool any_deferred = false;
  for (uint32_t tid : tids) {
    bool deferred = false;
    auto op = s.plan_op(tid, &deferred);
    any_deferred |= deferred;
    if (!op) continue;
    auto d = s.desired.find(tid);
    if (op->kind == PlanOp::Kind::Delete && d != s.desired.end())
      report("INV-5", tid, "plan deletes tid " + std::to_string(tid) + " whose entry is explained");
    if (op->kind != PlanOp::Kind::Delete && (d == s.desired.end() || d->second.value != op->value))
      report("INV-5", tid, "plan writes tid " + std::to_string(tid) + " a value the desired table does not hold");
    if (op->kind == PlanOp::Kind::Delete && s.loading)
      report("INV-7", tid, "plan prunes tid " + std::to_string(tid) + " before the desired state is loaded");
  }
  return any_deferred;
}

// INV-1/INV-2/INV-5 for kernel entries that differ from D and that no plan op covers.
void kernel_uncovered(const CoreImpl& s, const std::vector<uint32_t>& tids, const Reporter& report) {
  for (uint32_t tid : tids) {
    auto a = s.actual.find(tid);
    if (a == s.actual.end()) continue;
    const RuntimeValue& v = a->second;
    auto d = s.desired.find(tid);
    if (d != s.desired.end() && d->second.value == v) continue;
    bool deferred = false;
    if (s.plan_op(tid, &deferred) || deferred) continue;
    const std::string what = "kernel entry for tid " + std::to_string(tid);
    auto why = s.removal_reasons.find(tid);
    if (why != s.removal_reasons.end() && why->second.find("INV-1") != std::string::npos)
      report("INV-1", tid, what + " outlives its deallocated claim and no plan removes it");
    if (auto t = s.tasks.find(tid); t != s.tasks.end() && t->second.key.start != v.start)
      report("INV-2", tid, what + " (start " + std::to_string(v.start) + ") would apply to the task that reused the tid");
    report("INV-5", tid, what + " is unexplained and no plan op covers it");
  }
}

// INV-4: no kernel entry carries a generation beyond the node's.
void kernel_inv4(const CoreImpl& s, const std::vector<uint32_t>& tids, const Reporter& report) {
  for (uint32_t tid : tids)
    if (auto a = s.actual.find(tid); a != s.actual.end() && a->second.generation > s.generation)
      report.global("INV-4", "kernel entry for tid " + std::to_string(tid) + " has generation " +
                                 std::to_string(a->second.generation) + " beyond the node generation " +
                                 std::to_string(s.generation), tid);
}

}  // namespace

// The controller's state predicates (spec/state-machine.md, "The controller"): the level within
// its bounds (CTL-1), a raised level younger than maxRaised (CTL-4) and fed by a signal within
// windowsWithoutSignal windows (CTL-5). The transition properties (CTL-2, CTL-3, CTL-6) are
// checked on traces (tests/property/controller_test.cpp).
void CoreImpl::check_controller(PolicyKind kind, const std::string& name, std::vector<Violation>& out) const {
  auto it = controllers.find({kind, name});
  const ControllerSpec* spec = controller_spec(kind, name);
  const std::string who = std::string(to_string(kind)) + "/" + name + " controller";
  if (it == controllers.end()) {
    if (spec) out.push_back({"CTL-1", who + ": the policy has a controller but no state"});
    return;
  }
  if (!spec) {
    out.push_back({"CTL-1", who + ": a state without a controller (policy gone or without spec.controller)"});
    return;
  }
  const ControllerState& st = it->second;
  if (st.level > max_level(*spec))
    out.push_back({"CTL-1", who + ": level " + std::to_string(st.level) + " above the highest " +
                                std::to_string(max_level(*spec))});
  if (st.level == 0) return;
  if (now < st.raised_since || now - st.raised_since >= spec->max_raised)
    out.push_back({"CTL-4", who + ": level " + std::to_string(st.level) + " raised since " +
                                std::to_string(st.raised_since) + ", maxRaised passed at " + std::to_string(now)});
  if (!st.last_signal || now - *st.last_signal >= spec->window * spec->windows_without_signal)
    out.push_back({"CTL-5", who + ": level " + std::to_string(st.level) + " kept without a signal for " +
                                std::to_string(spec->windows_without_signal) + " windows"});
}

std::vector<Violation> CoreImpl::check_scope(const CheckScope& scope) const {
  std::vector<Violation> out;
  const Reporter report{*this, out};
  for (uint32_t tid : scope.tids)
    if (auto e = desired.find(tid); e != desired.end()) check_entry(*this, tid, e->second, report);
  for (const auto& uid : scope.claims) claim_at_high_water(*this, uid, report);
  for (const auto& [kind, name] : scope.policies) {
    policy_at_high_water(*this, kind, name, report);
    check_controller(kind, name, out);
  }
  const bool deferred = kernel_plan_ops(*this, scope.tids, report);
  if (!loading && deferred) report.global("INV-5", "deletes deferred although the desired state is loaded");
  kernel_uncovered(*this, scope.tids, report);
  kernel_inv4(*this, scope.tids, report);
  // INV-4's bound: the node generation never passes 2^53 (a restart ignores entries beyond it).
  if (generation > static_cast<uint64_t>(kMaxGeneration))
    report.global("INV-4", "the node generation " + std::to_string(generation) + " is beyond the bound 2^53");
  return out;
}

std::vector<Violation> CoreImpl::check() const {
  CheckScope all;
  all.tids.reserve(desired.size() + actual.size());
  for (const auto& [tid, e] : desired) all.tids.push_back(tid);
  for (const auto& [tid, v] : actual) all.tids.push_back(tid);
  std::sort(all.tids.begin(), all.tids.end());
  all.tids.erase(std::unique(all.tids.begin(), all.tids.end()), all.tids.end());
  for (const auto& [uid, cs] : claims) all.claims.push_back(uid);
  std::sort(all.claims.begin(), all.claims.end());
  for (const auto& [name, st] : dra_policies) all.policies.emplace_back(PolicyKind::Dra, name);
  for (const auto& [name, st] : node_policies) all.policies.emplace_back(PolicyKind::Node, name);
  return check_scope(all);
}

std::vector<Violation> CoreImpl::check_keys(std::vector<uint32_t> tids) const {
  std::sort(tids.begin(), tids.end());
  tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
  CheckScope scope;
  scope.tids = std::move(tids);
  return check_scope(scope);
}

std::vector<Violation> CoreImpl::check_named() const {
  CheckScope scope;
  for (const auto& [uid, cs] : claims) scope.claims.push_back(uid);
  std::sort(scope.claims.begin(), scope.claims.end());
  for (const auto& [name, st] : dra_policies) scope.policies.emplace_back(PolicyKind::Dra, name);
  for (const auto& [name, st] : node_policies) scope.policies.emplace_back(PolicyKind::Node, name);
  return check_scope(scope);
}

}  // namespace c2c
