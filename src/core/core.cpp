// The public face of the core: forwards to CoreImpl and renders lineage and digests.
#include "core/core.hpp"

#include <algorithm>
#include <sstream>

#include "core/core_impl.hpp"

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

ApplyResult Core::apply(const Event& e) { return impl_->apply(e); }
PreviewResult Core::preview(const DraExecutionPolicy& p) const { return preview_dra(*impl_, p); }
PreviewResult Core::preview(const NodeSchedulingPolicy& p) const { return preview_node(*impl_, p); }
Plan Core::plan() const { return impl_->plan(); }
Plan Core::take_plan_delta() { return impl_->plan(); }
std::optional<Nanos> Core::next_deadline() const {
  std::optional<Nanos> next;
  for (const auto& [tid, e] : impl_->desired) {
    if (!(e.value.flags & kFlagBoost) || e.value.boost_until == 0) continue;
    Nanos renew = e.value.boost_until - e.value.max_boost / 2;
    if (!next || renew < *next) next = renew;
  }
  return next;
}
std::vector<Violation> Core::check() const { return impl_->check(); }
std::optional<Lineage> Core::explain(uint32_t tid) const { return impl_->lineage(tid); }
uint64_t Core::generation() const { return impl_->generation; }
Nanos Core::now() const { return impl_->now; }
bool Core::loading() const { return impl_->loading; }
uint32_t Core::restart_epoch() const { return impl_->epoch; }
size_t Core::desired_size() const { return impl_->desired.size(); }
const std::unordered_map<uint32_t, DesiredEntry>& Core::desired() const { return impl_->desired; }
const std::unordered_map<uint32_t, RuntimeValue>& Core::actual() const { return impl_->actual; }
const NodeInfo& Core::node() const { return impl_->node; }
std::string Core::digest() const { return impl_->digest(); }

std::vector<Task> Core::tasks() const {
  std::vector<Task> out;
  out.reserve(impl_->tasks.size());
  for (const auto& [tid, t] : impl_->tasks) out.push_back(t.task);
  std::sort(out.begin(), out.end(), [](const Task& a, const Task& b) { return a.key < b.key; });
  return out;
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

std::vector<std::string> Core::policy_names() const {
  std::vector<std::string> out;
  for (const auto& [n, p] : impl_->dra_policies) out.push_back(std::string(to_string(PolicyKind::Dra)) + "/" + n);
  for (const auto& [n, p] : impl_->node_policies) out.push_back(std::string(to_string(PolicyKind::Node)) + "/" + n);
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

StepContext Core::step_context(const Event& e) const {
  return StepContext{impl_->generation, std::holds_alternative<BpfSynced>(e), std::holds_alternative<DaemonRestart>(e)};
}

std::vector<Violation> Core::check_step(const StepContext& before, const ApplyResult& r) const {
  std::vector<Violation> out;
  const CoreImpl& s = *impl_;
  if (s.generation < before.generation)
    out.push_back({"INV-4", "generation went back from " + std::to_string(before.generation) + " to " +
                                std::to_string(s.generation), std::nullopt, 0});
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
  if (before.sync_event) {
    // After the mirror executed the plan, the kernel holds exactly the desired table (INV-5),
    // plus, while loading, only the entries whose removal is deferred (INV-7).
    for (const auto& [tid, e] : s.desired) {
      auto a = s.actual.find(tid);
      if (a == s.actual.end() || a->second != e.value)
        out.push_back({"INV-5", "after a sync the kernel entry for tid " + std::to_string(tid) +
                                    " differs from the desired entry", s.lineage(tid), tid});
    }
    if (!s.loading)
      for (const auto& [tid, v] : s.actual)
        if (!s.desired.count(tid))
          out.push_back({"INV-5", "after a sync the kernel still holds unexplained tid " + std::to_string(tid),
                         std::nullopt, tid});
  }
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
  l.strategy = e.strategy;
  l.value = e.value;
  l.task = TaskKey{tid, e.value.start};
  l.tgid = e.value.tgid;
  if (auto t = tasks.find(tid); t != tasks.end()) {
    l.comm = t->second.task.comm;
    l.cgroup = t->second.task.cgroup;
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
  });
  put_sorted(o, tasks, [&](const TaskState& t) {
    o << t.task.key.start << ' ' << t.task.tgid << ' ' << t.task.comm << ' ' << t.task.cgroup << ' ' << t.task.role
      << ' ' << (t.task.cpuset ? t.task.cpuset->to_string() : "-") << ' ' << t.pod_uid << ' ' << t.epoch << " t:"
      << t.task.title;
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
        << static_cast<int>(r.exec_class);
    o << '\n';
  }
  for (const auto& [name, st] : node_policies) {
    const auto& p = st.policy;
    o << "node " << name << ' ' << p.generation << ' ' << p.command_regex << ' ' << p.process_regex << ' '
      << p.priority << ' ' << p.execution_time;
    for (const auto& n : p.node_names) o << " n:" << n;
    for (const auto& [k, v] : p.node_selectors) o << ' ' << k << '=' << v;
    for (const auto& d : p.dra_selectors) o << " d:" << d.driver << '/' << d.pool << '/' << d.device;
    o << '\n';
  }
  put_sorted(o, desired, [&](const DesiredEntry& e) {
    put_value(o, e.value);
    o << ' ' << to_string(e.origin->kind) << '/' << e.origin->policy << '@' << e.origin->policy_generation << ' '
      << e.origin->pod_uid << ' ' << e.origin->role << ' ' << static_cast<int>(e.strategy) << ' ' << e.restart_epoch;
    for (const auto& c : e.origin->claims) o << ' ' << c.uid << '@' << c.generation;
  });
  put_sorted(o, actual, [&](const RuntimeValue& v) { put_value(o, v); });
  put_sorted(o, removal_reasons, [&](const std::string& r) { o << r; });
  const std::string text = o.str();
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return hex64(h);
}

}  // namespace c2c
