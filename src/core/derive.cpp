// Derivation of one task's desired entry: which policies match it, which one wins, and what it
// writes (spec/state-machine.md, "Matching", "Conflicts", "CPU sets", "Boost leases").
#include <re2/re2.h>

#include <algorithm>

#include "core/core_impl.hpp"

namespace c2c {

bool candidate_precedes(const Candidate& a, const Candidate& b, std::string* rule) {
  auto decide = [&](const char* r, bool v) {
    if (rule) *rule = r;
    return v;
  };
  if (a.strategy != b.strategy) return decide("exact-tid-before-tgid", a.strategy == Strategy::ExactTid);
  if (a.kind != b.kind) return decide("dra-before-node", a.kind == PolicyKind::Dra);
  if (a.priority != b.priority) return decide("higher-priority", a.priority > b.priority);
  return decide("name-order", a.policy < b.policy);
}

bool CoreImpl::claim_live_for(const std::string& claim_uid, const std::string& pod_uid) const {
  auto it = claims.find(claim_uid);
  if (it == claims.end()) return false;
  const Claim& c = it->second.claim;
  if (!c.node.empty() && c.node != node.name) return false;  // an unnamed node holds no node-bound claim
  return std::find(c.reserved_for.begin(), c.reserved_for.end(), pod_uid) != c.reserved_for.end();
}

bool CoreImpl::node_selected(const NodeSchedulingPolicy& p) const { return !node_not_selected(p); }

bool CoreImpl::memo_node_selected(const NodeSchedulingPolicy& p) const {
  return memo.node_selected(&p, [&] { return node_selected(p); });
}

bool CoreImpl::memo_matches(const RE2& pattern, uint32_t text) const {
  return memo.match(&pattern, text, strings.serial(text), [&] { return name_matches(str(text), pattern); });
}

bool CoreImpl::memo_matches(const TitleAndComm& p, const TaskState& t) const {
  if (p.empty()) return false;
  return (!p.comm || memo_matches(*p.comm, t.comm)) && (!p.title || memo_matches(*p.title, t.title));
}

// The selectors are ANDed: the first that fails is the operator's answer to "why not here".
std::optional<std::string> CoreImpl::node_not_selected(const NodeSchedulingPolicy& p) const {
  if (!p.node_names.empty() &&
      std::find(p.node_names.begin(), p.node_names.end(), node.name) == p.node_names.end())
    return "nodeNames does not name this node ('" + node.name + "')";
  if (auto unmet = first_unmet("nodeSelectors", p.node_selectors, p.node_selector_expressions, node.labels))
    return unmet;
  if (p.dra_selectors.empty()) return std::nullopt;
  for (const auto& [uid, cs] : claims) {
    if (!cs.claim.node.empty() && cs.claim.node != node.name) continue;
    for (const auto& d : cs.claim.devices)
      for (const auto& sel : p.dra_selectors)
        if (sel.driver == d.driver && (sel.pool.empty() || sel.pool == d.pool) &&
            (sel.device.empty() || sel.device == d.device))
          return std::nullopt;
  }
  return std::string("draSelectors: no claim allocated on this node has such a device");
}

std::optional<CpuSet> CoreImpl::envelope(const TaskState& t) const {
  if (t.cpuset) return cpusets[t.cpuset];
  if (t.pod != 0) {
    auto it = pods.find(pod_of(t));
    if (it != pods.end() && it->second.pod.cpuset) return it->second.pod.cpuset;
  }
  if (!node.cpus.empty()) return node.cpus;
  return std::nullopt;
}

namespace {

bool labels_match(const std::map<std::string, std::string>& want, const std::map<std::string, std::string>& have) {
  for (const auto& [k, v] : want) {
    auto it = have.find(k);
    if (it == have.end() || it->second != v) return false;
  }
  return true;
}

void warn(std::vector<std::string>* w, std::string msg) {
  if (w) w->push_back(std::move(msg));
}

}  // namespace

namespace {

// The role a task has: the one it registered (TaskRoleSet), else the first of its pod's
// annotated roles whose comm pattern matches. `source` says which, for the lineage.
std::string task_role(const CoreImpl& s, const PodState& pod, const TaskState& t, std::string* source) {
  const std::string& registered = s.str(t.role);
  if (!registered.empty()) {
    *source = "registered role " + registered;
    return registered;
  }
  for (const auto& [role, re] : pod.role_regex)
    if (re && s.memo_matches(*re, t.comm)) {
      *source = "pod annotation role " + role;
      return role;
    }
  return {};
}

// The role of a DRA policy that matches the task: a registered role first, then the patterns.
// `stored`: st is the core's own (its patterns' results are memoized), not a preview's stand-in.
const TaskRole* matching_role(const CoreImpl& s, const DraPolicyState& st, bool stored, const std::string& role,
                              const TaskState& t, bool* by_role) {
  const DraExecutionPolicy& p = st.policy;
  for (size_t i = 0; i < p.task_roles.size(); ++i) {
    const TaskRole& r = p.task_roles[i];
    *by_role = !r.registered_role.empty() && r.registered_role == role;
    if (*by_role) return &r;
    if (stored ? s.memo_matches(st.role_regex[i], t) : st.role_regex[i].matches(s.comm_of(t), s.title_of(t))) return &r;
  }
  return nullptr;
}

// What the live claims a DRA policy names give an entry: their refs and devices' CPUs and topology.
struct ClaimedResources {
  std::vector<ClaimRef> refs;
  std::vector<std::string> stale;  // pod claim names without a live claim
  std::optional<CpuSet> cpus;
  std::vector<int> numa;
  std::vector<std::string> roots;
};

ClaimedResources claimed_resources(const CoreImpl& s, const DraExecutionPolicy& p, const Pod& pod) {
  ClaimedResources out;
  for (const auto& name : p.resource_claims) {
    auto cit = pod.claims.find(name);
    if (cit == pod.claims.end() || !s.claim_live_for(cit->second, pod.uid)) {
      out.stale.push_back(name);
      continue;
    }
    const Claim& claim = s.claims.at(cit->second).claim;
    out.refs.push_back({claim.uid, claim.generation});
    for (const auto& d : claim.devices) {
      if (d.cpus) out.cpus = out.cpus ? (*out.cpus | *d.cpus) : *d.cpus;
      out.numa.insert(out.numa.end(), d.numa_nodes.begin(), d.numa_nodes.end());
      if (!d.pcie_root.empty()) out.roots.push_back(d.pcie_root);
    }
  }
  return out;
}

// One warning per stale claim, led by the claim's uid (the pod's claim name when the pod has no
// such claim): preview prints it, and the daemon's intent reason is this text (Core::stale_claims).
std::vector<std::string> stale_claim_warnings(const DraExecutionPolicy& p, const Pod& pod, const ClaimedResources& res) {
  std::vector<std::string> out;
  const bool none = p.fail_closed_on_stale_claim || res.refs.empty();
  const char* outcome = p.fail_closed_on_stale_claim ? "fail closed" : (none ? "no live claim: no entry" : "ignored");
  for (const auto& n : res.stale) {
    auto cit = pod.claims.find(n);
    std::string who = cit == pod.claims.end() ? "'" + n + "'" : cit->second;
    out.push_back("DRAExecutionPolicy/" + p.name + ": claim " + who + " stale (" + outcome + "): claim '" + n +
                  "' of pod " + pod.uid + " is not allocated for it on this node (INV-1)");
  }
  return out;
}

// CPU placement of a DRA entry (spec "CPU sets", INV-6): allowed is the envelope narrowed by the
// allocated CPUs; preferred narrows allowed to the devices' NUMA nodes / PCIe roots when asked.
// False when the allocation lies outside the envelope (no entry).
bool place_dra_cpus(const CoreImpl& s, const DraExecutionPolicy& p, const TaskState& t,
                    const std::optional<CpuSet>& env, const ClaimedResources& res, RuntimeValue& v,
                    std::vector<std::string>* warnings) {
  const std::optional<CpuSet>& claim_cpus = res.cpus;
  std::optional<CpuSet> allowed = env;
  if (p.respect_allocated_cpuset && claim_cpus) allowed = env ? (*env & *claim_cpus) : *claim_cpus;
  if (allowed && allowed->empty()) {
    warn(warnings, "DRAExecutionPolicy/" + p.name + ": allocated CPUs " + claim_cpus->to_string() +
                       " lie outside the envelope of task " + std::to_string(t.key.tid) +
                       " (INV-6); no entry");
    return false;
  }
  if (!allowed) return true;
  v.allowed = *allowed;
  v.flags |= kFlagAllowedCpus;
  CpuSet preferred = *allowed;
  auto narrow = [&](const CpuSet& local, const char* what) {
    CpuSet n = preferred & local;
    if (n.empty()) warn(warnings, "DRAExecutionPolicy/" + p.name + ": no allowed CPU is " + what);
    else preferred = n;
  };
  if (p.prefer_same_numa && !res.numa.empty()) {
    CpuSet local;
    for (int n : res.numa)
      if (auto it = s.node.numa_cpus.find(n); it != s.node.numa_cpus.end()) local = local | it->second;
    narrow(local, "on the claimed devices' NUMA nodes");
  }
  if (p.prefer_same_pcie_root && !res.roots.empty()) {
    CpuSet local;
    for (const auto& r : res.roots)
      if (auto it = s.node.pcie_root_cpus.find(r); it != s.node.pcie_root_cpus.end()) local = local | it->second;
    narrow(local, "local to the claimed devices' PCIe roots");
  }
  if (preferred != *allowed) {
    v.preferred = preferred;
    v.flags |= kFlagPreferredCpus;
  } else {
    v.preferred = *allowed;
  }
  return true;
}

// A DRA execution policy reaches a task through its pod, and matches it per thread (exact TID).
std::optional<Candidate> dra_candidate(const CoreImpl& s, const DraPolicyState& st, bool stored, const TaskState& t,
                                       const std::optional<CpuSet>& env, std::vector<std::string>* warnings) {
  const DraExecutionPolicy& p = st.policy;
  auto pit = s.pods.find(s.pod_of(t));
  if (pit == s.pods.end()) return std::nullopt;
  const Pod& pod = pit->second.pod;
  if (!labels_match(p.match_labels, pod.labels)) return std::nullopt;
  std::string source;
  const std::string has_role = task_role(s, pit->second, t, &source);
  bool by_role = false;
  const TaskRole* role = matching_role(s, st, stored, has_role, t, &by_role);
  if (!role) return std::nullopt;

  Candidate c;
  c.kind = PolicyKind::Dra;
  c.policy = p.name;
  c.policy_generation = p.generation;
  c.pod_uid = pod.uid;
  c.role = role->name;
  if (by_role) c.role_source = source;
  ClaimedResources res = claimed_resources(s, p, pod);
  c.claims = res.refs;
  if (!res.stale.empty()) {
    // One warning per claim, led by the claim's uid (the pod's claim name when it has no such
    // claim): the daemon's intent reason is this text (spec/daemon.md, "Intents").
    for (auto& w : stale_claim_warnings(p, pod, res)) warn(warnings, std::move(w));
    if (p.fail_closed_on_stale_claim || c.claims.empty()) return std::nullopt;
  }
  RuntimeValue& v = c.value;
  if (!place_dra_cpus(s, p, t, env, res, v, warnings)) return std::nullopt;
  v.exec_class = role->exec_class;
  v.slice_ns = class_default_slice(role->exec_class);
  if (class_boosts(role->exec_class)) {
    v.flags = static_cast<uint8_t>(v.flags | kFlagBoost | wakee_boost_flags(role->boost_inherit_depth));
    v.max_boost = p.max_boost;
  }
  return c;
}

// A node-level policy's candidate: the whole envelope; priority > 0 boosts (latency-critical).
Candidate node_candidate(const CoreImpl& s, const NodePolicyState& st, Strategy strategy,
                         const std::optional<CpuSet>& env) {
  const NodeSchedulingPolicy& p = st.policy;
  Candidate c;
  c.kind = PolicyKind::Node;
  c.policy = p.name;
  c.policy_generation = p.generation;
  c.priority = p.priority;
  c.strategy = strategy;
  RuntimeValue& v = c.value;
  if (env) {
    v.allowed = *env;
    v.preferred = *env;
    v.flags |= kFlagAllowedCpus;
  }
  if (p.priority > 0) {
    v.exec_class = ExecClass::LatencyCritical;
    v.flags = static_cast<uint8_t>(v.flags | kFlagBoost | wakee_boost_flags(p.boost_inherit_depth));
    v.max_boost = s.node.default_max_boost;
  } else {
    v.exec_class = ExecClass::Normal;
  }
  v.slice_ns = p.execution_time ? p.execution_time : class_default_slice(v.exec_class);
  if (p.execution_time) v.flags |= kFlagCustomSlice;
  if (strategy == Strategy::Tgid) v.flags |= kFlagInherited;
  return c;
}

// Node-level policies match the comm of a thread; with no exact-TID match, the thread-group
// leader's match applies (the seed's "exact TID strategy first, then TGID").
void node_candidates(const CoreImpl& s, const TaskState& t, const PolicyOverride& ov,
                     const std::optional<CpuSet>& env, std::vector<Candidate>& out) {
  // fn(state, stored): stored is false for a preview's stand-in (never memoized).
  auto for_each_node_policy = [&](auto&& fn) {
    for (const auto& [name, st] : s.node_policies) {
      if (ov.node && ov.node->policy.name == name) continue;
      fn(st, true);
    }
    if (ov.node) fn(*ov.node, false);
  };
  auto selects = [&](const NodePolicyState& st, bool stored, const TaskState& task) {
    if (stored) return s.memo_node_selected(st.policy) && s.memo_matches(st.regex, task);
    return s.node_selected(st.policy) && st.regex.matches(s.comm_of(task), s.title_of(task));
  };
  std::vector<const std::string*> exact_node;  // node policies that match this thread itself
  for_each_node_policy([&](const NodePolicyState& st, bool stored) {
    if (selects(st, stored, t)) {
      out.push_back(node_candidate(s, st, Strategy::ExactTid, env));
      exact_node.push_back(&st.policy.name);
    }
  });
  if (t.key.tid != t.tgid) {
    // Only a real thread-group leader (tid == tgid) lends its match to the group. The TGID
    // candidates are kept even when an exact one exists: they lose by rule 1 and show up as a
    // conflict (preview names the policy whose inherited match is shadowed). A policy that matches
    // the thread itself is not its own TGID loser.
    auto leader = s.tasks.find(t.tgid);
    if (leader != s.tasks.end() && leader->second.tgid == leader->first) {
      const TaskState& l = leader->second;
      for_each_node_policy([&](const NodePolicyState& st, bool stored) {
        const bool itself = std::any_of(exact_node.begin(), exact_node.end(),
                                        [&](const std::string* n) { return *n == st.policy.name; });
        if (!itself && selects(st, stored, l))
          out.push_back(node_candidate(s, st, Strategy::Tgid, env));
      });
    }
  }
}

}  // namespace

std::vector<Candidate> CoreImpl::candidates(const TaskState& t, const PolicyOverride& ov,
                                            std::vector<std::string>* warnings) const {
  std::vector<Candidate> out;
  const std::optional<CpuSet> env = envelope(t);
  if (t.pod != 0) {
    auto consider = [&](const DraPolicyState& st, bool stored) {
      if (auto c = dra_candidate(*this, st, stored, t, env, warnings)) out.push_back(std::move(*c));
    };
    for (const auto& [name, st] : dra_policies) {
      if (ov.dra && ov.dra->policy.name == name) continue;
      if (st.active()) consider(st, true);
    }
    if (ov.dra) consider(*ov.dra, false);  // a preview shows the policy as if it were live
  }
  node_candidates(*this, t, ov, env, out);
  for (auto& c : out) {
    c.value.start = t.key.start;
    c.value.tgid = t.tgid;
  }
  return out;
}

std::vector<std::string> CoreImpl::stale_claims(const DraExecutionPolicy& p) const {
  std::vector<std::string> out;
  for (const auto& [uid, ps] : pods) {
    if (!labels_match(p.match_labels, ps.pod.labels)) continue;
    ClaimedResources res = claimed_resources(*this, p, ps.pod);
    if (res.stale.empty()) continue;
    auto w = stale_claim_warnings(p, ps.pod, res);
    out.insert(out.end(), w.begin(), w.end());
  }
  std::sort(out.begin(), out.end());  // pods are kept unordered
  return out;
}

std::optional<Candidate> CoreImpl::resolve(std::vector<Candidate> cands, Conflict* conflict) const {
  if (cands.empty()) return std::nullopt;
  std::sort(cands.begin(), cands.end(),
            [](const Candidate& a, const Candidate& b) { return candidate_precedes(a, b, nullptr); });
  if (conflict && cands.size() > 1) {
    conflict->winner = std::string(to_string(cands[0].kind)) + "/" + cands[0].policy;
    conflict->losers.clear();
    for (size_t i = 1; i < cands.size(); ++i)
      conflict->losers.push_back(std::string(to_string(cands[i].kind)) + "/" + cands[i].policy);
    candidate_precedes(cands[0], cands[1], &conflict->rule);
  }
  return std::move(cands[0]);
}

namespace {

bool same_entry(const DesiredEntry& a, const DesiredEntry& b) {
  RuntimeValue va = a.value, vb = b.value;
  va.generation = vb.generation = 0;
  return va == vb && a.strategy == b.strategy && a.restart_epoch == b.restart_epoch &&
         (a.origin == b.origin || (a.origin && b.origin && *a.origin == *b.origin));
}

}  // namespace

void CoreImpl::rederive(std::vector<uint32_t> tids, ApplyResult& out, const std::function<std::string()>& reason) {
  std::sort(tids.begin(), tids.end());
  tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
  std::vector<std::pair<uint32_t, std::optional<DesiredEntry>>> changes;
  std::set<std::string> warnings;

  DeriveMemo::Derivation scratch;
  std::vector<std::string> w;
  for (uint32_t tid : tids) {
    auto tit = tasks.find(tid);
    auto cur = desired.find(tid);
    const DeriveMemo::Derivation* d = nullptr;
    if (tit != tasks.end()) {
      w.clear();
      d = &derivation(tit->second, scratch, w);
      warnings.insert(w.begin(), w.end());
    }
    if (d && d->wins && d->conflict) {
      Conflict& c = conflicts[tid];
      c = d->resolution;
      c.task = tit->second.key;
    } else if (cur != desired.end()) {
      // Only a tid with an entry has a conflict (erase_entry drops it with the entry): a tid
      // without one costs no lookup in the conflicts table (thousands of slots at 100k tasks).
      conflicts.erase(tid);
    }
    if (!d || !d->wins) {
      if (cur != desired.end()) changes.emplace_back(tid, std::nullopt);
      continue;
    }

    DesiredEntry e;
    e.value = d->value;
    e.value.start = tit->second.key.start;
    e.value.tgid = tit->second.tgid;
    e.strategy = d->strategy;
    e.restart_epoch = epoch;
    // An unchanged lineage keeps the entry's own origin (the pooled one is the same object unless
    // the entry's was made apart from the pool, e.g. before a restart).
    const bool keep_origin = cur != desired.end() && cur->second.origin &&
                             (cur->second.origin == d->origin || *cur->second.origin == *d->origin);
    e.origin = keep_origin ? cur->second.origin : d->origin;
    // The controller's level, on top of the static policy (issue 46): never memoized, it moves
    // with every window.
    apply_level(*e.origin, e.value);
    // A boost lease, once granted, runs to its deadline; re-deriving an unchanged boost keeps it.
    if (e.value.flags & kFlagBoost) {
      // Only the same task keeps its lease: a task that reuses the tid starts a new one.
      const bool keep = cur != desired.end() && (cur->second.value.flags & kFlagBoost) &&
                        cur->second.value.start == e.value.start &&
                        cur->second.value.max_boost == e.value.max_boost && cur->second.value.boost_until > now;
      e.value.boost_until = keep ? cur->second.value.boost_until : now + e.value.max_boost;
    }
    if (cur != desired.end() && same_entry(cur->second, e)) continue;
    changes.emplace_back(tid, std::move(e));
  }

  out.warnings.insert(out.warnings.end(), warnings.begin(), warnings.end());
  if (changes.empty()) return;
  ++generation;
  std::optional<std::string> why;  // built once, on the first removal
  for (auto& [tid, e] : changes) {
    if (e) {
      e->value.generation = generation;
      set_entry(tid, std::move(*e));
    } else {
      if (!why) why = reason();
      erase_entry(tid, *why);
    }
    out.changed_tids.push_back(tid);
  }
}

std::shared_ptr<const Origin> CoreImpl::origin_of(Candidate& win) {
  Origin o{win.kind,          std::move(win.policy), win.policy_generation, std::move(win.pod_uid),
           std::move(win.claims), std::move(win.role), std::move(win.role_source)};
  std::string okey;
  okey.reserve(96);
  okey.append(to_string(o.kind)).append("/").append(o.policy).append("/");
  okey.append(std::to_string(o.policy_generation)).append("/").append(o.pod_uid).append("/");
  okey.append(o.role).append("/").append(o.role_source);
  for (const auto& c : o.claims) okey.append("/").append(c.uid).append("@").append(std::to_string(c.generation));
  return intern_origin(okey, std::move(o));
}

const DeriveMemo::Derivation& CoreImpl::derivation(const TaskState& t, DeriveMemo::Derivation& scratch,
                                                   std::vector<std::string>& warnings) {
  DeriveMemo::DerivationKey k;
  k.pod = strings.serial(t.pod);
  k.comm = strings.serial(t.comm);
  k.title = strings.serial(t.title);
  k.role = strings.serial(t.role);
  k.cpuset = cpusets.serial(t.cpuset);
  if (t.key.tid != t.tgid) {
    // What node_candidates reads of the leader: whether a real leader lives, and its names.
    auto leader = tasks.find(t.tgid);
    if (leader != tasks.end() && leader->second.tgid == leader->first) {
      k.leader = 1;
      k.leader_comm = strings.serial(leader->second.comm);
      k.leader_title = strings.serial(leader->second.title);
    } else {
      k.leader = 2;
    }
  }
  if (const DeriveMemo::Derivation* known = memo.derivation(k)) return *known;
  DeriveMemo::Derivation d;
  Conflict conflict;
  std::optional<Candidate> win = resolve(candidates(t, {}, &warnings), &conflict);
  if (win) {
    d.wins = true;
    d.value = win->value;
    d.strategy = win->strategy;
    d.conflict = !conflict.losers.empty();
    if (d.conflict) d.resolution = std::move(conflict);
    d.origin = origin_of(*win);
  }
  // Warnings may name the task (an allocation outside its envelope): such a derivation is its own.
  if (!warnings.empty()) {
    scratch = std::move(d);
    return scratch;
  }
  return memo.remember(k, std::move(d));
}

// Every task that one policy derives through one pod and claim set shares one Origin, across
// events too (entries are created one task event at a time). Dead origins are swept whenever the
// pool has doubled since the last sweep, so the pool stays proportional to the live ones.
std::shared_ptr<const Origin> CoreImpl::intern_origin(const std::string& key, Origin o) {
  auto& slot = origin_pool[key];
  if (auto live = slot.lock(); live && *live == o) return live;
  auto fresh = std::make_shared<const Origin>(std::move(o));
  slot = fresh;
  if (origin_pool.size() > 2 * origin_pool_swept_size + 64) {
    for (auto it = origin_pool.begin(); it != origin_pool.end();)
      it = it->second.expired() ? origin_pool.erase(it) : std::next(it);
    origin_pool_swept_size = origin_pool.size();
  }
  return fresh;
}

}  // namespace c2c
