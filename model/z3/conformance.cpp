// Projection of a concrete core step onto the model's witness key, checked against T_e.
#include "conformance.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>

#include "z3_model.hpp"

namespace c2c::z3m {

namespace {

struct PolicyRef {
  PolicyKind kind = PolicyKind::Node;
  std::string name;
  bool operator==(const PolicyRef&) const = default;
};

// What the model's single policy and single claim of w stand for in the real core.
struct Witness {
  uint32_t tid = 0;
  std::optional<PolicyRef> policy;
  std::string claim;          // the lineage claim the model's claim fields stand for ("" = none)
  bool single_claim = false;  // the lineage has exactly this one claim (its CPUs are the claim CPUs)
};

z3::expr cpus(z3::context& c, const CpuSet& s) {
  // Most significant word first: concat builds the 256-bit value.
  z3::expr v = c.bv_val(s.words()[CpuSet::kWords - 1], 64);
  for (int i = static_cast<int>(CpuSet::kWords) - 2; i >= 0; --i) v = z3::concat(v, c.bv_val(s.words()[i], 64));
  return v;
}

z3::expr num(z3::context& c, uint64_t v) { return c.int_val(static_cast<int64_t>(v)); }

const DesiredEntry* desired_at(const Core& core, uint32_t tid) {
  auto it = core.desired().find(tid);
  return it == core.desired().end() ? nullptr : &it->second;
}

std::optional<Task> task_at(const Core& core, uint32_t tid) {
  for (const Task& t : core.tasks())
    if (t.key.tid == tid) return t;
  return std::nullopt;
}

// Pins every field of `s` that `core` exposes for witness `w`.
void pin(z3::solver& sol, const Core& core, const Witness& w, const State& s) {
  z3::context& c = sol.ctx();
  sol.add(s["G"] == num(c, core.generation()));
  sol.add(s["epoch"] == num(c, core.restart_epoch()));
  sol.add(s["loading"] == c.bool_val(core.loading()));
  sol.add(s["now"] == num(c, core.now()));

  auto pin_value = [&](const char* e, const RuntimeValue& v) {
    std::string p = std::string(e) + "_";
    sol.add(s[p + "s"] == num(c, v.start));
    sol.add(s[p + "g"] == num(c, v.generation));
    sol.add(s[p + "al"] == cpus(c, v.allowed));
    sol.add(s[p + "bo"] == c.bool_val((v.flags & kFlagBoost) != 0));
    sol.add(s[p + "u"] == num(c, v.boost_until));
    sol.add(s[p + "m"] == num(c, v.max_boost));
  };
  const DesiredEntry* d = desired_at(core, w.tid);
  sol.add(s["d_p"] == c.bool_val(d != nullptr));
  if (d) {
    pin_value("d", d->value);
    sol.add(s["d_chg"] == num(c, d->value.generation));
    sol.add(s["d_ep"] == num(c, d->restart_epoch));
    sol.add(s["d_pg"] == c.int_val(d->origin->policy_generation));
    int64_t cg = 0;
    for (const auto& ref : d->origin->claims)
      if (ref.uid == w.claim) cg = ref.generation;
    if (d->origin->kind == PolicyKind::Node || !w.claim.empty()) sol.add(s["d_cg"] == c.int_val(cg));
  }
  auto a = core.actual().find(w.tid);
  sol.add(s["a_p"] == c.bool_val(a != core.actual().end()));
  if (a != core.actual().end()) pin_value("a", a->second);

  const std::optional<Task> t = task_at(core, w.tid);
  sol.add(s["tl"] == c.bool_val(t.has_value()));
  if (t) {
    sol.add(s["ts"] == num(c, t->key.start));
    if (t->cpuset) sol.add(s["tenvk"] && s["tenv"] == cpus(c, *t->cpuset));
  }

  if (w.policy) {
    sol.add(s["pnode"] == c.bool_val(w.policy->kind == PolicyKind::Node));
    if (w.policy->kind == PolicyKind::Dra) {
      auto p = core.dra_policy(w.policy->name);
      sol.add(s["pl"] == c.bool_val(p.has_value()));
      if (p) {
        sol.add(s["pg"] == c.int_val(p->generation));
        sol.add(s["preq"] == c.bool_val(p->require_preview));
        sol.add(s["pmax"] == num(c, p->max_boost));
      }
    } else {
      auto p = core.node_policy(w.policy->name);
      sol.add(s["pl"] == c.bool_val(p.has_value()));
      if (p) {
        sol.add(s["pg"] == c.int_val(p->generation));
        sol.add(!s["preq"]);
        sol.add(s["pboost"] == c.bool_val(p->priority > 0));
        sol.add(s["pmax"] == num(c, core.node().default_max_boost));
      }
    }
  }
  if (!w.claim.empty()) {
    auto cl = core.claim(w.claim);
    sol.add(s["cl"] == c.bool_val(cl.has_value()));
    if (cl) {
      sol.add(s["cg"] == c.int_val(cl->generation));
      // The model narrows to the claim's CPUs (respectAllocatedCPUSet); otherwise leave them free.
      bool respects = true;
      if (w.policy && w.policy->kind == PolicyKind::Dra)
        if (auto dp = core.dra_policy(w.policy->name)) respects = dp->respect_allocated_cpuset;
      if (w.single_claim && respects) {
        std::optional<CpuSet> u;
        for (const auto& dev : cl->devices)
          if (dev.cpus) u = u ? (*u | *dev.cpus) : *dev.cpus;
        sol.add(s["ccpuk"] == c.bool_val(u.has_value()));
        if (u) sol.add(s["ccpu"] == cpus(c, *u));
      }
    }
  }
}

bool same_value_and_presence(const DesiredEntry* a, const DesiredEntry* b) {
  if (!a || !b) return a == b;
  return a->value == b->value;
}

// Events the model does not describe field by field: the generation rule still holds (INV-4).
std::optional<std::string> generic_check(const Core& pre, const Core& post, uint32_t tid) {
  if (post.generation() < pre.generation()) return "the node generation went back";
  const DesiredEntry* a = desired_at(pre, tid);
  const DesiredEntry* b = desired_at(post, tid);
  if (!same_value_and_presence(a, b) && b &&
      (b->value.generation != post.generation() || post.generation() <= pre.generation()))
    return "a changed entry does not carry a new node generation";
  return std::nullopt;
}

bool raised_level(const Core& core, const PolicyRef& policy) {
  for (const ControllerStatus& c : core.controllers())
    if (c.kind == policy.kind && c.policy == policy.name) return c.state.level > 0;
  return false;
}

std::string describe_key(const Core& core, uint32_t tid) {
  std::ostringstream os;
  const DesiredEntry* d = desired_at(core, tid);
  os << "G=" << core.generation() << " epoch=" << core.restart_epoch() << " loading=" << core.loading()
     << " now=" << core.now();
  if (d)
    os << " D={start=" << d->value.start << " gen=" << d->value.generation << " allowed=" << d->value.allowed.to_string()
       << " boost_until=" << d->value.boost_until << " policy=" << d->origin->policy << "@"
       << d->origin->policy_generation << " epoch=" << d->restart_epoch << "}";
  else
    os << " D=absent";
  auto a = core.actual().find(tid);
  if (a != core.actual().end()) os << " A={start=" << a->second.start << " gen=" << a->second.generation << "}";
  else os << " A=absent";
  if (auto t = task_at(core, tid)) os << " task={start=" << t->key.start << "}";
  return os.str();
}

}  // namespace

ConformanceResult check_conformance(const Core& pre, const c2c::Event& e, const Core& post) {
  set_cpu_bits(kFullCpuBits);
  ConformanceResult out;

  std::set<uint32_t> keys;
  for (const Core* core : {&pre, &post}) {
    for (const auto& [tid, d] : core->desired()) keys.insert(tid);
    for (const auto& [tid, v] : core->actual()) keys.insert(tid);
    for (const Task& t : core->tasks()) keys.insert(t.key.tid);
  }

  for (uint32_t tid : keys) {
    const DesiredEntry* d0 = desired_at(pre, tid);
    const DesiredEntry* d1 = desired_at(post, tid);
    auto skip = [&](const std::string& why) {
      ++out.keys_skipped;
      out.skipped.push_back("tid " + std::to_string(tid) + ": " + why);
    };
    // A step this model has no field-by-field transition for is held to the generation rule (INV-4).
    auto generation_rule_only = [&] {
      ++out.keys_checked;
      if (auto why = generic_check(pre, post, tid)) {
        out.ok = false;
        out.failures.push_back(std::string(event_kind(e)) + " at tid " + std::to_string(tid) + ": " + *why);
      }
    };
    if ((d0 && d0->strategy == Strategy::Tgid) || (d1 && d1->strategy == Strategy::Tgid)) {
      skip("TGID inheritance is not modelled");
      continue;
    }
    Witness w;
    w.tid = tid;
    auto ref_of = [](const DesiredEntry* d) { return PolicyRef{d->origin->kind, d->origin->policy}; };
    if (d0 && d1 && !(ref_of(d0) == ref_of(d1))) {
      skip("the winning policy changed (conflict resolution is not modelled)");
      continue;
    }
    if (d0) w.policy = ref_of(d0);
    if (d1) w.policy = ref_of(d1);
    // A raised controller level rewrites the entry (boost, slice, preferred CPUs: CTL-1), and a
    // time_advance may lower it; this model describes the static entry only, so such a step is
    // held to the generation rule alone (INV-4). The level's own rules are checked by
    // property.controller against its naive ladder and by mutants.controller.
    if (w.policy && (raised_level(pre, *w.policy) || raised_level(post, *w.policy))) {
      generation_rule_only();
      continue;
    }

    // The event's own policy or claim, when it concerns w's lineage.
    std::string event_claim;
    std::visit(
        [&](const auto& ev) {
          using T = std::decay_t<decltype(ev)>;
          if constexpr (std::is_same_v<T, ClaimAllocated> || std::is_same_v<T, ClaimUpdated>) event_claim = ev.claim.uid;
          if constexpr (std::is_same_v<T, ClaimDeallocated>) event_claim = ev.uid;
          if constexpr (std::is_same_v<T, DraPolicyUpsert>)
            if (!w.policy) w.policy = PolicyRef{PolicyKind::Dra, ev.policy.name};
          if constexpr (std::is_same_v<T, NodePolicyUpsert>)
            if (!w.policy) w.policy = PolicyRef{PolicyKind::Node, ev.policy.name};
        },
        e);
    std::vector<std::string> lineage_claims;
    for (const DesiredEntry* d : {d0, d1})
      if (d)
        for (const auto& ref : d->origin->claims)
          if (std::find(lineage_claims.begin(), lineage_claims.end(), ref.uid) == lineage_claims.end())
            lineage_claims.push_back(ref.uid);
    if (!event_claim.empty() && std::find(lineage_claims.begin(), lineage_claims.end(), event_claim) != lineage_claims.end())
      w.claim = event_claim;
    else if (!lineage_claims.empty())
      w.claim = lineage_claims.front();
    w.single_claim = lineage_claims.size() == 1;

    z3::context c;
    State s = fresh_state(c, "pre_");
    State n = fresh_state(c, "post_");
    Params p = fresh_params(c, "p_");
    z3::solver sol(c);
    pin(sol, pre, w, s);
    pin(sol, post, w, n);
    auto policy_hit = [&](PolicyKind k, const std::string& name) {
      return w.policy && w.policy->kind == k && w.policy->name == name;
    };

    std::optional<z3m::Event> me;
    std::visit(
        [&](const auto& ev) {
          using T = std::decay_t<decltype(ev)>;
          if constexpr (std::is_same_v<T, ClaimAllocated> || std::is_same_v<T, ClaimUpdated>) {
            me = z3m::Event::ClaimUpsert;
            bool hit = !w.claim.empty() && ev.claim.uid == w.claim;
            sol.add(p["hit"] == c.bool_val(hit));
            sol.add(p["g"] == c.int_val(ev.claim.generation));
            if (hit && w.single_claim) {
              std::optional<CpuSet> u;
              for (const auto& dev : ev.claim.devices)
                if (dev.cpus) u = u ? (*u | *dev.cpus) : *dev.cpus;
              sol.add(p["cpusk"] == c.bool_val(u.has_value()));
              if (u) sol.add(p["cpus"] == cpus(c, *u));
            }
          } else if constexpr (std::is_same_v<T, ClaimDeallocated>) {
            me = z3m::Event::ClaimDealloc;
            sol.add(p["hit"] == c.bool_val(!w.claim.empty() && ev.uid == w.claim));
            sol.add(p["g"] == c.int_val(ev.generation));
          } else if constexpr (std::is_same_v<T, PodBound>) {
            me = z3m::Event::PodBound;
          } else if constexpr (std::is_same_v<T, PodRemoved>) {
            me = z3m::Event::PodRemoved;
          } else if constexpr (std::is_same_v<T, TaskSeen>) {
            me = z3m::Event::TaskSeen;
            bool hit = ev.task.key.tid == tid;
            sol.add(p["hit"] == c.bool_val(hit));
            if (hit) {
              sol.add(p["start"] == num(c, ev.task.key.start));
              if (ev.task.cpuset) sol.add(p["cpusk"] && p["cpus"] == cpus(c, *ev.task.cpuset));
            }
          } else if constexpr (std::is_same_v<T, TaskExited>) {
            me = z3m::Event::TaskExited;
            sol.add(p["hit"] == c.bool_val(ev.key.tid == tid));
            sol.add(p["start"] == num(c, ev.key.start));
          } else if constexpr (std::is_same_v<T, DraPolicyUpsert> || std::is_same_v<T, NodePolicyUpsert>) {
            me = z3m::Event::PolicyUpsert;
            constexpr PolicyKind k = std::is_same_v<T, DraPolicyUpsert> ? PolicyKind::Dra : PolicyKind::Node;
            bool hit = policy_hit(k, ev.policy.name);
            sol.add(p["hit"] == c.bool_val(hit));
            if (hit) {
              sol.add(p["g"] == c.int_val(ev.policy.generation));
              sol.add(p["pnode"] == c.bool_val(k == PolicyKind::Node));
              if constexpr (k == PolicyKind::Dra) {
                sol.add(p["preq"] == c.bool_val(ev.policy.require_preview));
                sol.add(p["pmax"] == num(c, ev.policy.max_boost));
              } else {
                sol.add(!p["preq"]);
                sol.add(p["pboost"] == c.bool_val(ev.policy.priority > 0));
              }
            }
          } else if constexpr (std::is_same_v<T, PolicyDelete>) {
            me = z3m::Event::PolicyDelete;
            sol.add(p["hit"] == c.bool_val(policy_hit(ev.kind, ev.name)));
            sol.add(p["g"] == c.int_val(ev.generation));
          } else if constexpr (std::is_same_v<T, PreviewAck>) {
            me = z3m::Event::PreviewAck;
            sol.add(p["hit"] == c.bool_val(policy_hit(ev.kind, ev.name)));
            sol.add(p["g"] == c.int_val(ev.generation));
          } else if constexpr (std::is_same_v<T, TimeAdvance>) {
            me = z3m::Event::TimeAdvance;
            sol.add(p["t"] == num(c, ev.now));
          } else if constexpr (std::is_same_v<T, DaemonRestart>) {
            me = z3m::Event::DaemonRestart;
            sol.add(p["persisted"] == num(c, ev.persisted_generation));
          } else if constexpr (std::is_same_v<T, SyncComplete>) {
            me = z3m::Event::SyncComplete;
          } else if constexpr (std::is_same_v<T, BpfObserved>) {
            me = z3m::Event::BpfObserved;
          } else if constexpr (std::is_same_v<T, BpfSynced>) {
            me = z3m::Event::BpfSynced;
          }
          // NodeInfoEvent, TaskRenamed: not modelled field by field (comm and topology).
        },
        e);

    if (!me) {
      generation_rule_only();
      continue;
    }
    // Conformance checks the core, not the environment: no assumption on the generation file.
    Options opt;
    opt.assume_persisted = false;
    // The real pre-state is a reachable state, so it satisfies the proved invariants; assuming
    // them fixes the fields the core does not expose (high-water marks, observation epochs) to
    // values consistent with the pinned ones, e.g. a live claim sits at its high-water mark.
    sol.add(type_ok(s) && all_inv_state(s));
    sol.add(transition(*me, s, p, n, opt));
    ++out.keys_checked;
    if (sol.check() != z3::sat) {
      out.ok = false;
      out.failures.push_back(std::string(event_kind(e)) + " at tid " + std::to_string(tid) +
                             ": the model's transition " + to_string(*me) + " does not allow this step\n  pre:  " +
                             describe_key(pre, tid) + "\n  post: " + describe_key(post, tid));
    }
  }
  return out;
}

}  // namespace c2c::z3m
