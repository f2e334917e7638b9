// The public face of the core: forwards to CoreImpl and renders lineage and digests.
#include "core/core.hpp"

#include <algorithm>
#include <sstream>

#include "core/core_impl.hpp"
#include "core/fnv.hpp"

namespace c2c {

Core::Core() : impl_(std::make_unique<CoreImpl>()) {}
Core::~Core() = default;
Core::Core(const Core& o) : impl_(std::make_unique<CoreImpl>(*o.impl_)) {}
Core& Core::operator=(const Core& o) {
  if (this != &o) impl_ = std::make_unique<CoreImpl>(*o.impl_);
  return *this;
}
Core::Core(Core&&) noexcept = default;
Core& Core::operator=(Core&&) noexcept = default;

PreviewResult Core::preview(const DraExecutionPolicy& p) const { return preview_dra(*impl_, p); }
PreviewResult Core::preview(const NodeSchedulingPolicy& p) const { return preview_node(*impl_, p); }
Plan Core::plan() const { return impl_->plan(); }
Plan Core::take_plan_delta() { return impl_->take_plan_delta(); }
std::optional<Nanos> Core::next_deadline() const {
  std::optional<Nanos> at = impl_->lease_renewals.earliest();
  // A raised controller level ends by time (CTL-4, CTL-5) even when no window comes.
  for (const auto& [key, st] : impl_->controllers)
    if (const ControllerSpec* spec = impl_->controller_spec(key.first, key.second))
      if (auto d = controller_deadline(*spec, st)) at = at ? std::min(*at, *d) : *d;
  return at;
}
std::vector<ControllerStatus> Core::controllers() const {
  std::vector<ControllerStatus> out;
  for (const auto& [key, st] : impl_->controllers)
    if (const ControllerSpec* spec = impl_->controller_spec(key.first, key.second))
      out.push_back({key.first, key.second, st, max_level(*spec), *spec});
  return out;
}
std::vector<Violation> Core::check() const { return impl_->check(); }
Plan Core::plan_of(std::vector<uint32_t> tids) const { return impl_->plan_of(std::move(tids)); }
std::vector<uint32_t> Core::entry_keys() const { return impl_->entry_keys(); }
std::vector<Violation> Core::check_keys(std::vector<uint32_t> tids) const { return impl_->check_keys(std::move(tids)); }
std::vector<Violation> Core::check_named() const { return impl_->check_named(); }
std::optional<Lineage> Core::explain(uint32_t tid) const { return impl_->lineage(tid); }
std::vector<std::string> Core::stale_claims(const DraExecutionPolicy& p) const { return impl_->stale_claims(p); }
uint64_t Core::generation() const { return impl_->generation; }
Nanos Core::now() const { return impl_->now; }
bool Core::loading() const { return impl_->loading; }
uint32_t Core::restart_epoch() const { return impl_->epoch; }
size_t Core::desired_size() const { return impl_->desired.size(); }
const Core::DesiredTable& Core::desired() const { return impl_->desired; }
const Core::ActualTable& Core::actual() const { return impl_->actual; }
const NodeInfo& Core::node() const { return impl_->node; }
std::optional<std::string> Core::node_not_selected(const NodeSchedulingPolicy& p) const {
  return impl_->node_not_selected(p);
}
std::string Core::digest() const { return impl_->digest(); }

std::vector<Task> Core::tasks() const {
  std::vector<Task> out;
  out.reserve(impl_->tasks.size());
  for (const auto& [tid, t] : impl_->tasks) out.push_back(impl_->task_of(t));
  std::sort(out.begin(), out.end(), [](const Task& a, const Task& b) { return a.key < b.key; });
  return out;
}

size_t Core::task_count() const { return impl_->tasks.size(); }

std::vector<TaskKey> Core::task_keys() const {
  std::vector<TaskKey> out;
  out.reserve(impl_->tasks.size());
  for (const auto& [tid, t] : impl_->tasks) out.push_back(t.key);
  return out;
}

std::optional<Task> Core::task(uint32_t tid) const {
  const auto it = impl_->tasks.find(tid);
  if (it == impl_->tasks.end()) return std::nullopt;
  return impl_->task_of(it->second);
}

bool Core::knows_task_as(const Task& t) const {
  const auto it = impl_->tasks.find(t.key.tid);
  return it != impl_->tasks.end() && impl_->same_observation(it->second, t);
}

std::optional<TaskKey> Core::task_key(uint32_t tid) const {
  const auto it = impl_->tasks.find(tid);
  if (it == impl_->tasks.end()) return std::nullopt;
  return it->second.key;
}

std::vector<Lineage> Core::desired_table() const {
  std::vector<uint32_t> tids;
  for (const auto& [tid, e] : impl_->desired) tids.push_back(tid);
  std::sort(tids.begin(), tids.end());
  std::vector<Lineage> out;
  for (uint32_t tid : tids) out.push_back(*impl_->lineage(tid));
  return out;
}

std::vector<Conflict> Core::conflicts() const {
  std::vector<Conflict> out;
  for (const auto& [tid, c] : impl_->conflicts) out.push_back(c);
  std::sort(out.begin(), out.end(), [](const Conflict& a, const Conflict& b) { return a.task < b.task; });
  return out;
}

std::optional<DraExecutionPolicy> Core::dra_policy(const std::string& name) const {
  auto it = impl_->dra_policies.find(name);
  if (it == impl_->dra_policies.end()) return std::nullopt;
  return it->second.policy;
}

std::optional<NodeSchedulingPolicy> Core::node_policy(const std::string& name) const {
  auto it = impl_->node_policies.find(name);
  if (it == impl_->node_policies.end()) return std::nullopt;
  return it->second.policy;
}

std::optional<Claim> Core::claim(const std::string& uid) const {
  auto it = impl_->claims.find(uid);
  if (it == impl_->claims.end()) return std::nullopt;
  return it->second.claim;
}

std::optional<Pod> Core::pod(const std::string& uid) const {
  auto it = impl_->pods.find(uid);
  if (it == impl_->pods.end()) return std::nullopt;
  return it->second.pod;
}

ApplyResult Core::apply(const Event& e) { return impl_->apply(e); }

void Core::prefetch(const Event& e) const {
  const auto* seen = std::get_if<TaskSeen>(&e);
  prefetch_task(task_event_tid(e), seen ? seen->task.tgid : 0, seen ? seen->task.cgroup_id : 0);
}

void Core::prefetch_task(uint32_t tid, uint32_t tgid, uint64_t cgroup_id) const {
  if (tid == 0) return;
  const CoreImpl& s = *impl_;
  s.tasks.prefetch(tid);
  s.desired.prefetch(tid);
  s.dirty.prefetch(tid);
  s.unsynced.prefetch(tid);
  s.actual.prefetch(tid);  // touch() compares the entry with the kernel's
  if (tgid != 0) s.tids_by_tgid.prefetch(tgid);  // the thread group's members (index_task, unindex_task)
  if (tgid != 0 && tgid != tid) s.tasks.prefetch(tgid);  // the leader: the TGID fallback reads it
  if (cgroup_id != 0) s.cgroup_by_id.prefetch(cgroup_id);  // an observation's path (intern_cgroup)
}

void Core::prefetch_task_dependents(uint32_t tid) const {
  const CoreImpl& s = *impl_;
  if (auto t = s.tasks.find(tid); t != s.tasks.end()) s.tids_by_cgroup.prefetch(t->second.cgroup);
  if (auto d = s.desired.find(tid); d != s.desired.end())
    if (auto o = s.entries_by_origin.find(d->second.origin.get()); o != s.entries_by_origin.end()) o->second.prefetch(tid);
}

// Invalid never depends on the tasks, their indexes, the tables or the kernel side (the handlers
// refuse on the event alone, or on the node, time, policies, claims, pods and marks), so a dry run
// on this copy refuses exactly what the real state would. Defined beside its one user, in the file
// that already copies a CoreImpl (Core's copy constructor): a copy of every table is slow to compile.
CoreImpl CoreImpl::validity_skeleton() const {
  CoreImpl t;
  t.node = node;
  t.generation = generation;
  t.epoch = epoch;
  t.dra_policies = dra_policies;
  t.node_policies = node_policies;
  t.policy_high_water = policy_high_water;
  t.claim_high_water = claim_high_water;
  t.claim_tombstones = claim_tombstones;
  t.loading = loading;
  t.now = now;
  t.claims = claims;
  for (const auto& [uid, p] : pods) t.pods.emplace(uid, PodState{p.pod, p.epoch, p.role_regex});
  t.pod_by_cgroup = pod_by_cgroup;
  t.pods_by_claim = pods_by_claim;
  return t;
}

BatchResult Core::apply_all(const std::vector<Event>& events) {
  BatchResult out;
  {
    CoreImpl trial = impl_->validity_skeleton();
    for (size_t i = 0; i < events.size(); ++i) {
      ApplyResult r = trial.apply(events[i]);
      if (r.status == ApplyResult::Status::Invalid) {
        out.invalid = i;
        out.refusal = std::move(r);
        return out;
      }
    }
  }
  out.results.reserve(events.size());
  for (const Event& e : events) out.results.push_back(impl_->apply(e));
  return out;
}

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

void sort_unique(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

// The keys an event names (spec/state-machine.md, "Reconcile"), and through them the tids it can
// affect as the state stands before it; check_step() adds the same expansion after the event.
StepContext Core::step_context(const Event& e) const {
  const CoreImpl& s = *impl_;
  StepContext c;
  c.generation = s.generation;
  c.sync_event = std::holds_alternative<BpfSynced>(e);
  c.restart_event = std::holds_alternative<DaemonRestart>(e);
  c.now = s.now;
  auto claim = [&](const std::string& uid) { c.claims.push_back(uid); };
  std::visit(Overloaded{
                 [&](const NodeInfoEvent&) { c.full = true; },
                 [&](const NodeLabels&) { c.full = true; },
                 [&](const DaemonRestart&) { c.full = true; },
                 [&](const SyncComplete&) { c.full = true; },
                 [&](const BpfObserved&) { c.full = true; },
                 [&](const BpfSynced&) { c.tids.assign(s.unsynced.begin(), s.unsynced.end()); },
                 [&](const ClaimAllocated& ev) { claim(ev.claim.uid); },
                 [&](const ClaimUpdated& ev) { claim(ev.claim.uid); },
                 [&](const ClaimDeallocated& ev) { claim(ev.uid); },
                 [&](const PodBound& ev) { c.pods.push_back(ev.pod.uid); },
                 [&](const PodRemoved& ev) { c.pods.push_back(ev.uid); },
                 [&](const TaskSeen& ev) { c.tasks.push_back(ev.task.key.tid); },
                 [&](const TaskRenamed& ev) { c.tasks.push_back(ev.key.tid); },
                 [&](const TaskExited& ev) { c.tasks.push_back(ev.key.tid); },
                 [&](const TaskRoleSet& ev) { c.tasks.push_back(ev.key.tid); },
                 [&](const DraPolicyUpsert& ev) { c.policies.emplace_back(PolicyKind::Dra, ev.policy.name); },
                 [&](const NodePolicyUpsert& ev) { c.policies.emplace_back(PolicyKind::Node, ev.policy.name); },
                 [&](const PolicyDelete& ev) { c.policies.emplace_back(ev.kind, ev.name); },
                 [&](const PreviewAck& ev) { c.policies.emplace_back(ev.kind, ev.name); },
                 [&](const ControllerWindow& ev) { c.policies.emplace_back(ev.kind, ev.policy); },
                 [&](const TimeAdvance& ev) {
                   // The leases the step renews, and those that may have run out by the new time
                   // (a renewal, or its absence, changes them).
                   for (uint32_t tid : s.leases_to_renew(ev.now, ev.max_renewals)) c.tids.push_back(tid);
                   for (uint32_t tid : s.leases_maybe_run_out(ev.now)) c.tids.push_back(tid);
                   for (const auto& [key, st] : s.controllers) c.policies.push_back(key);  // CTL-4, CTL-5
                 },
             },
             e);
  if (!c.full) s.expand_scope(c, c.tids);
  sort_unique(c.tids);
  return c;
}

void CoreImpl::expand_scope(const StepContext& ctx, std::vector<uint32_t>& out) const {
  for (uint32_t tid : ctx.tasks) {
    out.push_back(tid);
    // A leader's entry decides its threads' (TGID strategy).
    auto t = tasks.find(tid);
    if (t != tasks.end() && t->second.tgid == tid)
      if (auto g = tids_by_tgid.find(tid); g != tids_by_tgid.end()) out.insert(out.end(), g->second.begin(), g->second.end());
  }
  if (ctx.claims.empty() && ctx.pods.empty() && ctx.policies.empty()) return;
  // Pods whose entries a claim can invalidate: those it is reserved for and those that name it.
  std::unordered_set<std::string> pods_hit(ctx.pods.begin(), ctx.pods.end());
  for (const auto& uid : ctx.claims) {
    if (auto c = claims.find(uid); c != claims.end())
      pods_hit.insert(c->second.claim.reserved_for.begin(), c->second.claim.reserved_for.end());
    if (auto p = pods_by_claim.find(uid); p != pods_by_claim.end()) pods_hit.insert(p->second.begin(), p->second.end());
  }
  for (const auto& uid : ctx.pods) {
    auto p = pods.find(uid);
    if (p == pods.end()) continue;
    // Every task under the pod's cgroup (its tasks, and those its cpuset is the envelope of).
    for (uint32_t tid : tasks_under_cgroup(p->second.pod.cgroup)) out.push_back(tid);
  }
  // Entries are found through their origins: there are few (policy x pod x claims x role).
  for (const auto& [origin, tids] : entries_by_origin) {
    bool hit = pods_hit.count(origin->pod_uid) > 0;
    for (size_t i = 0; !hit && i < ctx.claims.size(); ++i)
      hit = std::any_of(origin->claims.begin(), origin->claims.end(),
                        [&](const ClaimRef& r) { return r.uid == ctx.claims[i]; });
    for (size_t i = 0; !hit && i < ctx.policies.size(); ++i)
      hit = ctx.policies[i].first == origin->kind && ctx.policies[i].second == origin->policy;
    if (hit) out.insert(out.end(), tids.begin(), tids.end());
  }
}

std::vector<Violation> Core::check_step(const StepContext& before, const ApplyResult& r) const {
  std::vector<Violation> out;
  const CoreImpl& s = *impl_;
  if (s.generation < before.generation)
    out.push_back({"INV-4", "generation went back from " + std::to_string(before.generation) + " to " +
                                std::to_string(s.generation), std::nullopt, 0});
  if (s.generation > static_cast<uint64_t>(kMaxGeneration) && s.generation != before.generation)
    out.push_back({"INV-4", "the node generation moved to " + std::to_string(s.generation) + ", beyond the bound 2^53",
                   std::nullopt, 0});
  // A refused restart (an out-of-bounds persisted generation) changes nothing, by definition.
  if (before.restart_event && r.status == ApplyResult::Status::Applied && s.generation <= before.generation)
    out.push_back({"INV-4", "the restart did not move the generation past " + std::to_string(before.generation),
                   std::nullopt, 0});
  if (r.status == ApplyResult::Status::Applied && !r.changed_tids.empty() && !before.restart_event) {
    if (s.generation <= before.generation)
      out.push_back({"INV-4", "the desired table changed but the generation stayed at " + std::to_string(s.generation),
                     std::nullopt, 0});
    for (uint32_t tid : r.changed_tids) {
      auto it = s.desired.find(tid);
      if (it != s.desired.end() && it->second.value.generation != s.generation)
        out.push_back({"INV-4", "changed entry for tid " + std::to_string(tid) + " carries generation " +
                                    std::to_string(it->second.value.generation) + ", not the new " +
                                    std::to_string(s.generation), s.lineage(tid), tid});
    }
  }
  CoreImpl::CheckScope scope;
  if (before.full) {
    auto all = s.check();
    out.insert(out.end(), all.begin(), all.end());
    return out;
  }
  scope.tids = before.tids;
  scope.tids.insert(scope.tids.end(), r.changed_tids.begin(), r.changed_tids.end());
  s.expand_scope(before, scope.tids);
  // Leases that may have run out by now (none, when every renewal happened; a bounded renewal
  // step leaves due leases that have not run out, which are valid).
  for (uint32_t tid : s.leases_maybe_run_out(s.now)) scope.tids.push_back(tid);
  sort_unique(scope.tids);
  if (before.sync_event) {
    // After the mirror executed the plan, the kernel holds exactly the desired table (INV-5),
    // plus, while loading, only the entries whose removal is deferred (INV-7): checked on the tids
    // that differed before the sync (the others it did not touch).
    for (uint32_t tid : scope.tids) {
      auto d = s.desired.find(tid);
      auto a = s.actual.find(tid);
      if (d != s.desired.end() && (a == s.actual.end() || a->second != d->second.value))
        out.push_back({"INV-5", "after a sync the kernel entry for tid " + std::to_string(tid) +
                                    " differs from the desired entry", s.lineage(tid), tid});
      if (d == s.desired.end() && a != s.actual.end() && !s.loading)
        out.push_back({"INV-5", "after a sync the kernel still holds unexplained tid " + std::to_string(tid),
                       std::nullopt, tid});
    }
    for (uint32_t tid : s.unsynced)
      if (s.desired.count(tid) || !s.loading)
        out.push_back({"INV-5", "after a sync tid " + std::to_string(tid) + " still has a plan op", std::nullopt, tid});
  }
  scope.claims = before.claims;
  scope.policies = before.policies;
  auto scoped = s.check_scope(scope);
  out.insert(out.end(), scoped.begin(), scoped.end());
  return out;
}

std::optional<Lineage> CoreImpl::lineage(uint32_t tid) const {
  auto it = desired.find(tid);
  if (it == desired.end()) return std::nullopt;
  const DesiredEntry& e = it->second;
  Lineage l;
  l.claims = e.origin->claims;
  l.pod_uid = e.origin->pod_uid;
  l.policy_kind = e.origin->kind;
  l.policy = e.origin->policy;
  l.policy_generation = e.origin->policy_generation;
  l.role = e.origin->role;
  l.role_source = e.origin->role_source;
  l.strategy = e.strategy;
  l.value = e.value;
  l.task = TaskKey{tid, e.value.start};
  l.tgid = e.value.tgid;
  if (auto t = tasks.find(tid); t != tasks.end()) {
    l.comm = comm_of(t->second);
    l.cgroup = cgroup_of(t->second);
    if (t->second.key.start == l.task.start) l.title = title_of(t->second);
  }
  return l;
}

namespace {

std::string hex64(uint64_t h) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[static_cast<size_t>(i)] = digits[h & 0xf];
  return s;
}

void put_controller(std::ostream& o, const std::optional<ControllerSpec>& c) {
  if (!c) return;
  o << " ctl:" << to_string(c->target) << '=' << c->target_ns << ' ' << c->role << ' ' << c->boost << ' '
    << (c->slice ? std::to_string(c->slice->from) + ">" + std::to_string(c->slice->to) + "/" + std::to_string(c->slice->step) : "-")
    << ' ' << (c->preferred_cpus ? c->preferred_cpus->to_string() : "-") << ' ' << c->cooldown << ' ' << c->hysteresis
    << ' ' << c->max_raised << ' ' << c->window << ' ' << c->windows_without_signal;
}

void put_value(std::ostream& o, const RuntimeValue& v) {
  o << v.start << ',' << v.generation << ',' << v.slice_ns << ',' << v.boost_until << ',' << v.max_boost << ','
    << v.allowed.to_string() << ',' << v.preferred.to_string() << ',' << v.tgid << ','
    << static_cast<int>(v.exec_class) << ',' << static_cast<int>(v.flags);
}

template <class Map, class Fn>
void put_sorted(std::ostream& o, const Map& m, Fn&& fn) {
  std::vector<typename Map::key_type> keys;
  for (const auto& kv : m) keys.push_back(kv.first);
  std::sort(keys.begin(), keys.end());
  for (const auto& k : keys) {
    o << k << '{';
    fn(m.at(k));
    o << "}\n";
  }
}

}  // namespace

// A canonical rendering of every field that makes up the state, hashed with FNV-1a.
std::string CoreImpl::digest() const {
  std::ostringstream o;
  o << "gen " << generation << " epoch " << epoch << " loading " << loading << " now " << now << '\n';
  o << "node " << node.name << ' ' << node.cpus.to_string() << ' ' << node.default_max_boost;
  for (const auto& [k, v] : node.labels) o << ' ' << k << '=' << v;
  for (const auto& [k, v] : node.numa_cpus) o << " numa" << k << '=' << v.to_string();
  for (const auto& [k, v] : node.pcie_root_cpus) o << ' ' << k << '=' << v.to_string();
  o << '\n';
  put_sorted(o, claim_high_water, [&](int64_t g) { o << g; });
  o << "tombstones\n";
  std::vector<std::string> tombstones(claim_tombstones.begin(), claim_tombstones.end());
  std::sort(tombstones.begin(), tombstones.end());
  for (const auto& uid : tombstones) o << uid << '\n';
  put_sorted(o, policy_high_water, [&](int64_t g) { o << g; });
  put_sorted(o, claims, [&](const ClaimState& c) {
    o << c.claim.generation << ' ' << c.claim.node << ' ' << c.epoch;
    for (const auto& d : c.claim.devices) {
      o << " [" << d.request << ' ' << d.driver << ' ' << d.pool << ' ' << d.device << ' ' << d.share_id << ' '
        << d.pcie_root << ' ' << d.pci_bus_id << ' ' << (d.cpus ? d.cpus->to_string() : "-");
      for (int n : d.numa_nodes) o << " n" << n;
      o << ']';
    }
    for (const auto& p : c.claim.reserved_for) o << " r:" << p;
  });
  put_sorted(o, pods, [&](const PodState& p) {
    o << p.pod.namespace_ << '/' << p.pod.name << ' ' << p.pod.cgroup << ' '
      << (p.pod.cpuset ? p.pod.cpuset->to_string() : "-") << ' ' << p.epoch;
    for (const auto& [k, v] : p.pod.labels) o << ' ' << k << '=' << v;
    for (const auto& [k, v] : p.pod.claims) o << " c:" << k << '=' << v;
    for (const auto& [k, v] : p.pod.task_roles) o << " role:" << k << '=' << v;
  });
  put_sorted(o, tasks, [&](const TaskState& t) {
    const CpuSet* cpuset = cpuset_of(t);
    o << t.key.start << ' ' << t.tgid << ' ' << comm_of(t) << ' ' << cgroup_of(t) << ' ' << str(t.role) << ' '
      << (cpuset ? cpuset->to_string() : "-") << ' ' << pod_of(t) << ' ' << t.epoch << " t:" << title_of(t);
  });
  for (const auto& [name, st] : dra_policies) {
    const auto& p = st.policy;
    o << "dra " << name << ' ' << p.generation << ' ' << st.previewed_generation << ' ' << p.respect_allocated_cpuset
      << p.prefer_same_numa << p.prefer_same_pcie_root << p.require_preview << p.fail_closed_on_stale_claim << ' '
      << p.max_boost << ' ' << p.fallback;
    for (const auto& [k, v] : p.match_labels) o << ' ' << k << '=' << v;
    for (const auto& c : p.resource_claims) o << " c:" << c;
    for (const auto& r : p.task_roles)
      o << " r:" << r.name << '/' << r.registered_role << '/' << r.comm_regex << '/' << r.process_regex << '/'
        << static_cast<int>(r.exec_class) << '/' << r.boost_inherit_depth;
    put_controller(o, p.controller);
    o << '\n';
  }
  for (const auto& [name, st] : node_policies) {
    const auto& p = st.policy;
    o << "node " << name << ' ' << p.generation << ' ' << p.command_regex << ' ' << p.process_regex << ' '
      << p.priority << ' ' << p.execution_time << " i:" << p.boost_inherit_depth;
    for (const auto& n : p.node_names) o << " n:" << n;
    for (const auto& [k, v] : p.node_selectors) o << ' ' << k << '=' << v;
    for (const auto& r : p.node_selector_expressions) {
      o << " x:" << r.key << ' ' << to_string(r.op);
      for (const auto& v : r.values) o << ',' << v;
    }
    for (const auto& d : p.dra_selectors) o << " d:" << d.driver << '/' << d.pool << '/' << d.device;
    put_controller(o, p.controller);
    o << '\n';
  }
  for (const auto& [key, st] : controllers)
    o << "ctl " << to_string(key.first) << '/' << key.second << ' ' << st.level << ' '
      << (st.last_change ? std::to_string(*st.last_change) : "-") << ' ' << st.raised_since << ' '
      << (st.last_signal ? std::to_string(*st.last_signal) : "-") << '\n';
  put_sorted(o, desired, [&](const DesiredEntry& e) {
    put_value(o, e.value);
    o << ' ' << to_string(e.origin->kind) << '/' << e.origin->policy << '@' << e.origin->policy_generation << ' '
      << e.origin->pod_uid << ' ' << e.origin->role << " (" << e.origin->role_source << ") " << static_cast<int>(e.strategy) << ' ' << e.restart_epoch;
    for (const auto& c : e.origin->claims) o << ' ' << c.uid << '@' << c.generation;
  });
  put_sorted(o, actual, [&](const RuntimeValue& v) { put_value(o, v); });
  put_sorted(o, removal_reasons, [&](const std::string& r) { o << r; });
  return hex64(fnv1a64(o.str()));
}

}  // namespace c2c
