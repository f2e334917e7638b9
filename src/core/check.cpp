// Invariant checker: INV-1..INV-8 as predicates over the state and the actual kernel entries
// (spec/state-machine.md, "Invariants"). It reads the state only; it never repairs it.
#include <algorithm>
#include <unordered_set>

#include "core/core_impl.hpp"

namespace c2c {

namespace {

template <class Map>
std::vector<uint32_t> sorted_keys(const Map& m) {
  std::vector<uint32_t> keys;
  keys.reserve(m.size());
  for (const auto& kv : m) keys.push_back(kv.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The envelope of a task (spec §3 "CPU sets"), computed here from the raw state and not with
// CoreImpl::envelope() or the pod indexes, so that a bug in either cannot hide from INV-6: the
// task's own cpuset, else that of the pod whose cgroup is the deepest ancestor of the task's,
// else the node's CPUs; nullopt when none is known.
std::optional<CpuSet> independent_envelope(const Task& t, const std::unordered_map<std::string, PodState>& pods,
                                           const NodeInfo& node) {
  if (t.cpuset) return t.cpuset;
  const Pod* best = nullptr;
  for (const auto& [uid, ps] : pods) {
    const std::string& c = ps.pod.cgroup;
    const bool contains = !c.empty() && (t.cgroup == c || (t.cgroup.size() > c.size() &&
                                                           t.cgroup.compare(0, c.size(), c) == 0 &&
                                                           t.cgroup[c.size()] == '/'));
    if (contains && (!best || c.size() > best->cgroup.size())) best = &ps.pod;
  }
  if (best && best->cpuset) return best->cpuset;
  if (!node.cpus.empty()) return node.cpus;
  return std::nullopt;
}

}  // namespace

std::vector<Violation> CoreImpl::check() const {
  std::vector<Violation> out;
  auto report = [&](const char* inv, uint32_t tid, std::string msg) {
    out.push_back(Violation{inv, std::move(msg), desired.count(tid) ? lineage(tid) : std::nullopt, tid});
  };
  const std::string tid_s = "tid ";

  for (uint32_t tid : sorted_keys(desired)) {
    const DesiredEntry& e = desired.at(tid);
    const Origin& o = *e.origin;
    const RuntimeValue& v = e.value;
    const std::string who = tid_s + std::to_string(tid);
    auto t = tasks.find(tid);

    // INV-2: the entry belongs to the live task with exactly this (tid, start).
    if (t == tasks.end()) report("INV-2", tid, who + ": entry for a task that is not live");
    else if (t->second.task.key.start != v.start)
      report("INV-2", tid, who + ": entry start " + std::to_string(v.start) + " but the live task started at " +
                               std::to_string(t->second.task.key.start));

    // INV-1: every claim in the lineage is allocated, at that generation, for that pod, here.
    for (const auto& ref : o.claims) {
      auto c = claims.find(ref.uid);
      if (c == claims.end()) {
        report("INV-1", tid, who + ": derived from claim " + ref.uid + " which is not allocated");
      } else if (c->second.claim.generation != ref.generation) {
        report("INV-1", tid, who + ": derived from claim " + ref.uid + " generation " + std::to_string(ref.generation) +
                                 " but the claim is at " + std::to_string(c->second.claim.generation));
      } else if (!claim_live_for(ref.uid, o.pod_uid)) {
        report("INV-1", tid, who + ": claim " + ref.uid + " is not reserved for pod " + o.pod_uid + " on this node");
      }
    }
    if (o.kind == PolicyKind::Dra) {
      if (o.claims.empty()) report("INV-1", tid, who + ": DRA-derived entry without a live claim");
      auto pol = dra_policies.find(o.policy);
      auto pod = pods.find(o.pod_uid);
      if (pol != dra_policies.end() && pod != pods.end() && pol->second.policy.fail_closed_on_stale_claim) {
        for (const auto& name : pol->second.policy.resource_claims) {
          auto cit = pod->second.pod.claims.find(name);
          if (cit == pod->second.pod.claims.end() || !claim_live_for(cit->second, o.pod_uid))
            report("INV-1", tid, who + ": claim '" + name + "' is stale but failClosedOnStaleClaim keeps no entry");
        }
      }
      if (pod == pods.end()) report("INV-1", tid, who + ": derived through pod " + o.pod_uid + " which is gone");
      else if (t != tasks.end() && t->second.pod_uid != o.pod_uid)
        report("INV-1", tid, who + ": task is no longer in pod " + o.pod_uid);
    }

    // INV-3: the entry comes from the policy's current generation (never an older or deleted one).
    int64_t current = -1;
    bool previewed = true;
    if (o.kind == PolicyKind::Dra) {
      if (auto p = dra_policies.find(o.policy); p != dra_policies.end()) {
        current = p->second.policy.generation;
        previewed = p->second.active();
      }
    } else if (auto p = node_policies.find(o.policy); p != node_policies.end()) {
      current = p->second.policy.generation;
    }
    if (current < 0) report("INV-3", tid, who + ": policy " + o.policy + " was deleted but its entry remains");
    else if (current != o.policy_generation)
      report("INV-3", tid, who + ": derived from policy generation " + std::to_string(o.policy_generation) +
                               " but " + o.policy + " is at " + std::to_string(current));
    else if (!previewed)
      report("INV-3", tid, who + ": generation " + std::to_string(current) + " of " + o.policy +
                               " is live without the preview it requires");

    // INV-4: no entry carries a generation the node has not reached.
    if (v.generation == 0 || v.generation > generation)
      report("INV-4", tid, who + ": entry generation " + std::to_string(v.generation) + " outside (0, " +
                               std::to_string(generation) + "]");

    // INV-6: allowed CPUs within the envelope (and the allocated CPUs), preferred within allowed.
    if (t != tasks.end()) {
      auto env = independent_envelope(t->second.task, pods, node);
      if (env && !v.allowed.subset_of(*env))
        report("INV-6", tid, who + ": allowed CPUs " + v.allowed.to_string() + " widen the envelope " + env->to_string());
      if (env && !(v.flags & kFlagAllowedCpus))
        report("INV-6", tid, who + ": the envelope " + env->to_string() + " is known but the entry does not carry it");
    }
    if (!v.preferred.subset_of(v.allowed))
      report("INV-6", tid, who + ": preferred CPUs " + v.preferred.to_string() + " outside allowed " + v.allowed.to_string());
    if (o.kind == PolicyKind::Dra) {
      auto pol = dra_policies.find(o.policy);
      if (pol != dra_policies.end() && pol->second.policy.respect_allocated_cpuset) {
        // The entry's claims together allocated these CPUs; allowed must stay inside them.
        std::optional<CpuSet> allocated;
        for (const auto& ref : o.claims)
          if (auto c = claims.find(ref.uid); c != claims.end())
            for (const auto& d : c->second.claim.devices)
              if (d.cpus) allocated = allocated ? (*allocated | *d.cpus) : *d.cpus;
        if (allocated && !v.allowed.subset_of(*allocated))
          report("INV-6", tid, who + ": allowed CPUs " + v.allowed.to_string() +
                                   " outside the CPUs its claims allocated (" + allocated->to_string() + ")");
      }
    }

    // INV-7: everything in the lineage was observed after the last restart.
    if (e.restart_epoch != epoch) report("INV-7", tid, who + ": entry derived before the last restart");
    if (t != tasks.end() && t->second.epoch != epoch) report("INV-7", tid, who + ": task not re-observed since the restart");
    if (auto pod = pods.find(o.pod_uid); pod != pods.end() && pod->second.epoch != epoch)
      report("INV-7", tid, who + ": pod not re-observed since the restart");
    for (const auto& ref : o.claims)
      if (auto c = claims.find(ref.uid); c != claims.end() && c->second.epoch != epoch)
        report("INV-7", tid, who + ": claim " + ref.uid + " not re-observed since the restart");

    // INV-8: a boost is a lease no longer than maxBoostDuration that has not run out.
    if (v.flags & kFlagBoost) {
      if (!class_boosts(v.exec_class)) report("INV-8", tid, who + ": boost on a class that never boosts");
      if (v.max_boost < kMinBoostNs || v.max_boost > kMaxBoostNs)
        report("INV-8", tid, who + ": maxBoostDuration " + std::to_string(v.max_boost) + " ns out of bounds");
      if (v.boost_until <= now) report("INV-8", tid, who + ": boost lease expired at " + std::to_string(v.boost_until) + " but still boosted");
      else if (v.boost_until - now > v.max_boost)
        report("INV-8", tid, who + ": boost lease runs " + std::to_string(v.boost_until - now) +
                                 " ns, longer than maxBoostDuration " + std::to_string(v.max_boost));
    } else if (v.boost_until != 0 || v.max_boost != 0) {
      report("INV-8", tid, who + ": unboosted entry carries a boost lease");
    }
  }

  // INV-3: generations never fall below what was seen (high-water marks include tombstones).
  for (const auto& [uid, cs] : claims) {
    auto hw = claim_high_water.find(uid);
    if (hw == claim_high_water.end() || hw->second != cs.claim.generation)
      out.push_back({"INV-3", "claim " + uid + " generation " + std::to_string(cs.claim.generation) +
                                  " is not its newest generation seen", std::nullopt, 0});
  }
  auto check_policy_hw = [&](PolicyKind k, const std::string& name, int64_t gen) {
    auto hw = policy_high_water.find(std::string(to_string(k)) + "/" + name);
    if (hw == policy_high_water.end() || hw->second != gen)
      out.push_back({"INV-3", std::string(to_string(k)) + "/" + name + " generation " + std::to_string(gen) +
                                  " is not its newest generation seen", std::nullopt, 0});
  };
  for (const auto& [name, st] : dra_policies) check_policy_hw(PolicyKind::Dra, name, st.policy.generation);
  for (const auto& [name, st] : node_policies) check_policy_hw(PolicyKind::Node, name, st.policy.generation);

  // Kernel side. The plan is what the mirror will execute; an actual entry is fine when it equals
  // its desired entry or the plan rewrites/removes it (or, while loading, defers its removal).
  const Plan p = plan();
  std::unordered_set<uint32_t> covered(p.deferred_deletes.begin(), p.deferred_deletes.end());
  for (const auto& op : p.ops) {
    covered.insert(op.tid);
    auto d = desired.find(op.tid);
    if (op.kind == PlanOp::Kind::Delete && d != desired.end())
      report("INV-5", op.tid, "plan deletes tid " + std::to_string(op.tid) + " whose entry is explained");
    if (op.kind != PlanOp::Kind::Delete && (d == desired.end() || d->second.value != op.value))
      report("INV-5", op.tid, "plan writes tid " + std::to_string(op.tid) + " a value the desired table does not hold");
    if (op.kind == PlanOp::Kind::Delete && loading)
      report("INV-7", op.tid, "plan prunes tid " + std::to_string(op.tid) + " before the desired state is loaded");
  }
  if (!loading && !p.deferred_deletes.empty())
    out.push_back({"INV-5", "deletes deferred although the desired state is loaded", std::nullopt, 0});
  for (uint32_t tid : sorted_keys(actual)) {
    const RuntimeValue& v = actual.at(tid);
    auto d = desired.find(tid);
    if (d != desired.end() && d->second.value == v) continue;
    if (covered.count(tid)) continue;
    const std::string who = "kernel entry for tid " + std::to_string(tid);
    auto why = removal_reasons.find(tid);
    if (why != removal_reasons.end() && why->second.find("INV-1") != std::string::npos)
      report("INV-1", tid, who + " outlives its deallocated claim and no plan removes it");
    if (auto t = tasks.find(tid); t != tasks.end() && t->second.task.key.start != v.start)
      report("INV-2", tid, who + " (start " + std::to_string(v.start) + ") would apply to the task that reused the tid");
    report("INV-5", tid, who + " is unexplained and no plan op covers it");
  }
  for (uint32_t tid : sorted_keys(actual))
    if (actual.at(tid).generation > generation)
      out.push_back({"INV-4", "kernel entry for tid " + std::to_string(tid) + " has generation " +
                                  std::to_string(actual.at(tid).generation) + " beyond the node generation " +
                                  std::to_string(generation), std::nullopt, tid});
  return out;
}

}  // namespace c2c
