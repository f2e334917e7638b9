// The naive reference model: every rule below is transcribed from spec/state-machine.md (section
// numbers in comments). Nothing is incremental: each applied event recomputes the whole table.
#include "naive_model.hpp"

#include <re2/re2.h>

#include "core/names.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <tuple>
#include <type_traits>

namespace c2c::naive {

namespace {

constexpr Nanos kMinSlice = 10'000;
constexpr Nanos kMaxSlice = 100'000'000;
constexpr Nanos kMinBoost = 1'000'000;
constexpr Nanos kMaxBoost = 3'600'000'000'000ull;

Outcome applied() { return {}; }
Outcome ignored(std::string why) { return {Status::Ignored, "", std::move(why)}; }
Outcome invalid(std::string field, std::string why) {
  return {Status::Invalid, std::move(field), std::move(why)};
}

// Compiled patterns are cached by text: compiling on every recomputation would dominate the run.
const RE2* compiled(const std::string& pattern) {
  static std::map<std::string, std::unique_ptr<RE2>> cache;
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    RE2::Options o;
    o.set_log_errors(false);
    it = cache.emplace(pattern, std::make_unique<RE2>(pattern, o)).first;
  }
  return it->second.get();
}
bool regex_ok(const std::string& pattern) {
  return pattern.size() <= 1024 && compiled(pattern)->ok();
}
// §3: RE2, unanchored unless the pattern anchors itself, on the name's text (a name that is not
// UTF-8 with U+FFFD for each ill-formed part).
bool matches(const std::string& pattern, const std::string& name) {
  const RE2* re = compiled(pattern);
  return re->ok() && RE2::PartialMatch(c2c::name_text(name), *re);
}

// §3: a selector's commandRegex (on the comm) and processRegex (on the process title) are ANDed;
// one without either pattern matches nothing.
bool patterns_match(const std::string& comm_re, const std::string& title_re, const Task& t) {
  if (comm_re.empty() && title_re.empty()) return false;
  return (comm_re.empty() || matches(comm_re, t.comm)) && (title_re.empty() || matches(title_re, t.title));
}

bool dns1123(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  static const RE2 re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  return RE2::FullMatch(name, re);
}

// §5 validation: no NUL byte in any name or text field.
bool has_nul(const std::string& s) { return s.find('\0') != std::string::npos; }

// §5: a role is 1..63 bytes, none of them whitespace or control characters.
bool bad_role(const std::string& r) {
  if (r.empty() || r.size() > 63) return true;
  for (unsigned char c : r)
    if (c <= ' ' || c == 0x7f) return true;
  return false;
}
bool bad_comm(const std::string& c) { return c.size() > 15 || has_nul(c); }
// §4 bounds: generations are at most 2^53.
constexpr int64_t kGenBound = int64_t{1} << 53;
bool bad_generation(int64_t g) { return g < 0 || g > kGenBound; }

bool boosts(ExecClass c) {
  return c == ExecClass::LatencyCritical || c == ExecClass::CommunicationProgress;
}
Nanos default_slice(ExecClass c) {
  switch (c) {
    case ExecClass::LatencyCritical: return 2'000'000;
    case ExecClass::CommunicationProgress: return 1'000'000;
    case ExecClass::Throughput: return 20'000'000;
    case ExecClass::Background: return 10'000'000;
    default: return 3'000'000;
  }
}

// §2: an entry is its value plus its lineage (origin and strategy); a change in either changes D.
bool same_entry_except_generation(const Entry& x, const Entry& y) {
  RuntimeValue a = x.value;
  RuntimeValue b = y.value;
  a.generation = 0;
  b.generation = 0;
  return a == b && x.kind == y.kind && x.policy == y.policy &&
         x.policy_generation == y.policy_generation && x.pod_uid == y.pod_uid &&
         x.claims == y.claims && x.role == y.role && x.role_source == y.role_source && x.strategy == y.strategy;
}

// Component-wise "ancestor or equal" on cgroup paths: /a/pod1 does not contain /a/pod10.
bool cgroup_contains(const std::string& ancestor, const std::string& path) {
  if (ancestor.empty()) return false;
  if (path == ancestor) return true;
  if (ancestor == "/") return !path.empty() && path[0] == '/';
  return path.size() > ancestor.size() && path.compare(0, ancestor.size(), ancestor) == 0 &&
         path[ancestor.size()] == '/';
}
size_t depth(const std::string& path) { return static_cast<size_t>(std::count(path.begin(), path.end(), '/')); }

std::optional<Outcome> check_dra(const DraExecutionPolicy& p) {
  if (!dns1123(p.name)) return invalid("metadata.name", "not a DNS-1123 name");
  if (bad_generation(p.generation)) return invalid("metadata.generation", "negative or beyond 2^53");
  if (p.resource_claims.empty()) return invalid("spec.resourceClaims", "empty");
  if (p.task_roles.empty()) return invalid("spec.taskRoles", "empty");
  for (const auto& r : p.task_roles) {
    if (r.registered_role.empty() && r.comm_regex.empty() && r.process_regex.empty())
      return invalid("spec.taskRoles[].selector", "no selector");
    if (!r.process_regex.empty() && !regex_ok(r.process_regex))
      return invalid("spec.taskRoles[].selector.processRegex", "does not compile");
    if (!r.comm_regex.empty() && !regex_ok(r.comm_regex))
      return invalid("spec.taskRoles[].selector.commandRegex", "does not compile");
    if (r.exec_class == ExecClass::Unmatched)
      return invalid("spec.taskRoles[].executionClass", "unmatched");
    if (r.boost_inherit_depth > 2) return invalid("spec.taskRoles[].boost.inherit.depth", "out of bounds");
    if (r.boost_inherit_depth > 0 && !boosts(r.exec_class)) return invalid("spec.taskRoles[].boost.inherit", "not boosted");
  }
  if (p.max_boost < kMinBoost || p.max_boost > kMaxBoost)
    return invalid("spec.safety.maxBoostDuration", "out of bounds");
  if (p.fallback != "default-scheduler") return invalid("spec.safety.fallback", "unsupported");
  return std::nullopt;
}

std::optional<Outcome> check_node_policy(const NodeSchedulingPolicy& p) {
  if (!dns1123(p.name)) return invalid("metadata.name", "not a DNS-1123 name");
  if (bad_generation(p.generation)) return invalid("metadata.generation", "negative or beyond 2^53");
  if (p.node_names.empty() && p.node_selectors.empty() && p.node_selector_expressions.empty() &&
      p.dra_selectors.empty())
    return invalid("spec.nodeNames", "no node selector");
  for (size_t i = 0; i < p.node_selector_expressions.size(); ++i) {
    const auto& r = p.node_selector_expressions[i];
    const bool listed_op = r.op == LabelOperator::In || r.op == LabelOperator::NotIn;
    if (listed_op == r.values.empty())
      return invalid("spec.nodeSelectors.matchExpressions[" + std::to_string(i) + "].values", "In/NotIn need values");
  }
  // §3: commandRegex (comm) and processRegex (process title), at least one; both must compile.
  if (p.command_regex.empty() && p.process_regex.empty()) return invalid("spec.commandRegex", "no pattern");
  if (!p.command_regex.empty() && !regex_ok(p.command_regex)) return invalid("spec.commandRegex", "does not compile");
  if (!p.process_regex.empty() && !regex_ok(p.process_regex)) return invalid("spec.processRegex", "does not compile");
  if (p.priority < 0 || p.priority > 1000) return invalid("spec.priority", "out of bounds");
  if (p.execution_time != 0 && (p.execution_time < kMinSlice || p.execution_time > kMaxSlice))
    return invalid("spec.executionTime", "out of bounds");
  if (p.boost_inherit_depth > 2) return invalid("spec.boost.inherit.depth", "out of bounds");
  if (p.boost_inherit_depth > 0 && p.priority == 0) return invalid("spec.boost.inherit", "not boosted");
  return std::nullopt;
}

// §4 generation rules for an upsert. `stored` is the live object (null when absent);
// `tombstoned`: it was deleted / deallocated at `hwm`. Returns nullopt when the upsert goes ahead.
template <typename T>
std::optional<Outcome> generation_rule(int64_t gen, int64_t hwm, const T* stored, bool tombstoned,
                                       const T& incoming) {
  if (gen < hwm) return ignored("INV-3: older generation");
  if (gen == hwm) {
    if (stored != nullptr) {
      if (*stored == incoming) return ignored("duplicate");
      return invalid("generation", "changed without a new generation");
    }
    if (tombstoned) return ignored("INV-3: tombstoned; needs a newer generation");
    // Neither live nor tombstoned at its mark: re-listed after a restart (INV-7 completeness).
  }
  return std::nullopt;
}

}  // namespace

CpuSet intersect(const CpuSet& a, const CpuSet& b) {
  auto w = a.words();
  for (size_t i = 0; i < w.size(); ++i) w[i] &= b.words()[i];
  return CpuSet::from_words(w);
}
CpuSet unite(const CpuSet& a, const CpuSet& b) {
  auto w = a.words();
  for (size_t i = 0; i < w.size(); ++i) w[i] |= b.words()[i];
  return CpuSet::from_words(w);
}
bool is_empty(const CpuSet& a) {
  for (auto w : a.words())
    if (w != 0) return false;
  return true;
}

int64_t NaiveModel::claim_high_water(const std::string& uid) const {
  auto it = claim_hwm_.find(uid);
  return it == claim_hwm_.end() ? 0 : it->second;
}
int64_t NaiveModel::policy_high_water(PolicyKind k, const std::string& name) const {
  auto it = policy_hwm_.find({k, name});
  return it == policy_hwm_.end() ? 0 : it->second;
}
std::optional<int64_t> NaiveModel::policy_generation(PolicyKind k, const std::string& name) const {
  if (k == PolicyKind::Dra) {
    auto it = dra_.find(name);
    if (it != dra_.end()) return it->second.generation;
  } else {
    auto it = nsp_.find(name);
    if (it != nsp_.end()) return it->second.generation;
  }
  return std::nullopt;
}

Outcome NaiveModel::apply(const Event& e) {
  // Work on a copy: a refused or ignored event must leave nothing half-applied.
  // §4 bounds: at G = 2^53 there is no next generation; only the map's own accounts still apply.
  if (g_ >= static_cast<uint64_t>(kGenBound) && !std::holds_alternative<BpfObserved>(e) &&
      !std::holds_alternative<BpfSynced>(e) && !std::holds_alternative<SyncComplete>(e) &&
      !std::holds_alternative<DaemonRestart>(e)) {
    last_changed_.clear();
    return invalid("generation", "the node generation is at 2^53");
  }
  NaiveModel next = *this;
  next.last_changed_.clear();
  Outcome out = std::visit(
      [&next](const auto& ev) -> Outcome {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, ClaimAllocated> || std::is_same_v<T, ClaimUpdated>) {
          return next.on_claim(ev.claim);
        } else {
          return next.on(ev);
        }
      },
      e);
  if (out.status == Status::Applied) *this = std::move(next);
  else last_changed_.clear();
  return out;
}

// ---------------------------------------------------------------- events (§5)

Outcome NaiveModel::on(const NodeInfoEvent& e) {
  if (e.node.default_max_boost < kMinBoost || e.node.default_max_boost > kMaxBoost)
    return invalid("node.defaultMaxBoost", "out of bounds");
  if (e.node == node_) return ignored("node info unchanged");
  node_ = e.node;
  install(derive(), RemovalTag::Other);
  return applied();
}

// §3 "Node labels": only the labels change; everything is re-derived from scratch here.
Outcome NaiveModel::on(const NodeLabels& e) {
  for (const auto& [k, v] : e.labels)
    for (char c : v)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
        return invalid("labels[" + k + "]", "not a label value");
  if (e.labels == node_.labels) return ignored("node labels unchanged");
  node_.labels = e.labels;
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const ControllerWindow& e) {
  if (e.policy.empty()) return invalid("policy", "empty");
  if (e.signal && *e.signal > 3'600'000'000'000ull) return invalid("signal", "above 1h");
  const bool has = e.kind == PolicyKind::Dra ? dra_.count(e.policy) && dra_.at(e.policy).controller
                                             : nsp_.count(e.policy) && nsp_.at(e.policy).controller;
  if (!has) return ignored("no such controller");
  return applied();
}

Outcome NaiveModel::on_claim(const Claim& c) {
  if (c.uid.empty()) return invalid("claim.uid", "empty");
  if (has_nul(c.uid)) return invalid("claim.uid", "NUL byte");
  if (c.generation <= 0) return invalid("claim.generation", "must be positive");
  if (c.generation > kGenBound) return invalid("claim.generation", "beyond 2^53");
  auto live = claims_.find(c.uid);
  if (auto r = generation_rule(c.generation, claim_high_water(c.uid),
                               live == claims_.end() ? nullptr : &live->second,
                               claim_deallocated_.count(c.uid) != 0, c))
    return *r;
  claims_[c.uid] = c;
  claim_hwm_[c.uid] = c.generation;
  claim_deallocated_.erase(c.uid);
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const ClaimDeallocated& e) {
  if (e.uid.empty() || has_nul(e.uid)) return invalid("uid", "empty or NUL byte");
  if (bad_generation(e.generation)) return invalid("generation", "negative or beyond 2^53");
  auto live = claims_.find(e.uid);
  if (live == claims_.end()) {
    // §4: a claim never seen leaves nothing behind; a known one that is not live (not re-listed
    // since a restart) gets its tombstone, unless it already has one at least that new.
    if (claim_hwm_.count(e.uid) == 0) return ignored("claim never allocated here");
    auto tomb = claim_deallocated_.find(e.uid);
    if (tomb != claim_deallocated_.end() && e.generation <= tomb->second) return ignored("already deallocated");
    claim_hwm_[e.uid] = std::max(claim_high_water(e.uid), e.generation);
    claim_deallocated_[e.uid] = claim_hwm_[e.uid];
    return applied();
  }
  if (e.generation != 0 && e.generation < live->second.generation)
    return ignored("INV-3: deallocation of an older generation");
  claim_hwm_[e.uid] = std::max({claim_high_water(e.uid), e.generation, live->second.generation});
  claim_deallocated_[e.uid] = claim_hwm_[e.uid];
  claims_.erase(live);
  install(derive(), RemovalTag::ClaimDeallocated);
  return applied();
}

Outcome NaiveModel::on(const PodBound& e) {
  if (e.pod.uid.empty()) return invalid("pod.uid", "empty");
  if (has_nul(e.pod.uid) || has_nul(e.pod.cgroup)) return invalid("pod.uid", "NUL byte");
  // §5: an effective cpuset is never empty (a pod's no more than a task's).
  if (e.pod.cpuset && is_empty(*e.pod.cpuset)) return invalid("pod.cpuset", "empty");
  for (const auto& [role, pattern] : e.pod.task_roles)
    if (bad_role(role) || pattern.empty() || !compiled(pattern)->ok()) return invalid("pod.taskRoles", "bad role");
  auto it = pods_.find(e.pod.uid);
  if (it != pods_.end() && it->second == e.pod) return ignored("duplicate");
  // A pod cgroup belongs to one pod (§5 pod_bound): otherwise "the task's pod" is not a function.
  if (!e.pod.cgroup.empty())
    for (const auto& [uid, other] : pods_)
      if (uid != e.pod.uid && other.cgroup == e.pod.cgroup)
        return invalid("pod.cgroup", "cgroup " + e.pod.cgroup + " already belongs to pod " + uid);
  pods_[e.pod.uid] = e.pod;
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const PodRemoved& e) {
  if (pods_.erase(e.uid) == 0) return ignored("unknown pod");
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const TaskSeen& e) {
  const Task& t = e.task;
  if (t.key.tid == 0) return invalid("task.tid", "zero");
  if (bad_comm(t.comm)) return invalid("task.comm", "longer than 15 bytes or NUL");
  if (has_nul(t.cgroup)) return invalid("task.cgroup", "NUL byte");
  if (!t.role.empty() && bad_role(t.role)) return invalid("task.role", "bad role");
  if (t.title.size() > 256 || has_nul(t.title)) return invalid("task.title", "longer than 256 bytes or NUL byte");
  if (t.cpuset && is_empty(*t.cpuset)) return invalid("task.cpuset", "empty");
  auto it = tasks_.find(t.key.tid);
  Task seen = t;
  seen.cgroup_id = 0;  // a lookup hint for the path, not part of what was observed (spec §3, "Cgroup ids")
  if (it != tasks_.end()) {
    if (t.key.start < it->second.key.start) return ignored("older start than the live task");
    // §3 "A task's role": the same (tid, start) seen again without a role keeps its role.
    if (seen.role.empty() && seen.key.start == it->second.key.start) seen.role = it->second.role;
    if (it->second == seen) return ignored("duplicate");
  }
  tasks_[t.key.tid] = seen;  // a newer start is TID reuse: the old task is gone (INV-2)
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const TaskRenamed& e) {
  if (bad_comm(e.comm)) return invalid("comm", "longer than 15 bytes or NUL");
  auto it = tasks_.find(e.key.tid);
  if (it == tasks_.end() || it->second.key != e.key) return ignored("not the live task");
  if (it->second.comm == e.comm) return ignored("duplicate");
  it->second.comm = e.comm;
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const TaskExited& e) {
  auto it = tasks_.find(e.key.tid);
  if (it == tasks_.end() || it->second.key != e.key) return ignored("not the live task");
  tasks_.erase(it);
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const TaskRoleSet& e) {
  if (e.key.tid == 0) return invalid("tid", "zero");
  if (!e.role.empty() && bad_role(e.role)) return invalid("role", "bad role");
  auto it = tasks_.find(e.key.tid);
  if (it == tasks_.end() || it->second.key != e.key) return ignored("not the live task");
  if (it->second.role == e.role) return ignored("duplicate");
  it->second.role = e.role;
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const DraPolicyUpsert& e) {
  if (auto bad = check_dra(e.policy)) return *bad;
  DraExecutionPolicy p = e.policy;
  const int64_t hwm = policy_high_water(PolicyKind::Dra, p.name);
  auto live = dra_.find(p.name);
  if (p.generation == 0) {
    // §4: 0 means "the next one"; an unchanged spec without a generation is a duplicate (core).
    p.generation = live == dra_.end() ? hwm + 1 : live->second.generation;
    if (live != dra_.end() && live->second == p) return ignored("unchanged");
    p.generation = hwm + 1;
  }
  if (p.generation > kGenBound) return invalid("metadata.generation", "the next generation would pass 2^53");
  // Policies are durable: one that is absent at its mark was deleted (a tombstone).
  if (auto r = generation_rule(p.generation, hwm, live == dra_.end() ? nullptr : &live->second, true, p))
    return *r;
  dra_[p.name] = p;
  policy_hwm_[{PolicyKind::Dra, p.name}] = p.generation;
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const NodePolicyUpsert& e) {
  if (auto bad = check_node_policy(e.policy)) return *bad;
  NodeSchedulingPolicy p = e.policy;
  const int64_t hwm = policy_high_water(PolicyKind::Node, p.name);
  auto live = nsp_.find(p.name);
  if (p.generation == 0) {
    // §4: 0 means "the next one"; an unchanged spec without a generation is a duplicate (core).
    p.generation = live == nsp_.end() ? hwm + 1 : live->second.generation;
    if (live != nsp_.end() && live->second == p) return ignored("unchanged");
    p.generation = hwm + 1;
  }
  if (p.generation > kGenBound) return invalid("metadata.generation", "the next generation would pass 2^53");
  // Policies are durable: one that is absent at its mark was deleted (a tombstone).
  if (auto r = generation_rule(p.generation, hwm, live == nsp_.end() ? nullptr : &live->second, true, p))
    return *r;
  nsp_[p.name] = p;
  policy_hwm_[{PolicyKind::Node, p.name}] = p.generation;
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const PolicyDelete& e) {
  if (!dns1123(e.name)) return invalid("name", "not a DNS-1123 name");
  if (bad_generation(e.generation)) return invalid("generation", "negative or beyond 2^53");
  auto current = policy_generation(e.kind, e.name);
  if (!current) return ignored("no such policy");
  if (e.generation != 0 && e.generation < *current) return ignored("INV-3: older generation");
  auto& hwm = policy_hwm_[{e.kind, e.name}];
  hwm = std::max(hwm, e.generation);
  if (e.kind == PolicyKind::Dra) dra_.erase(e.name); else nsp_.erase(e.name);
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const PreviewAck& e) {
  if (!dns1123(e.name)) return invalid("name", "not a DNS-1123 name");
  if (bad_generation(e.generation)) return invalid("generation", "negative or beyond 2^53");
  if (e.kind == PolicyKind::Node) return ignored("node policies do not require a preview");
  auto current = policy_generation(e.kind, e.name);
  if (!current) return ignored("no such policy");
  const int64_t gen = e.generation;  // no "0 means current" for an acknowledgement
  if (gen != *current) return ignored("not the current generation");
  auto& acked = previewed_[{e.kind, e.name}];
  if (acked == gen) return ignored("duplicate");
  acked = gen;
  install(derive(), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const TimeAdvance& e) {
  if (e.now < now_) return invalid("now", "time went back");
  if (e.now == now_) return ignored("time unchanged");
  now_ = e.now;
  // §3: leases are renewed at half-life. The due ones, earliest (renew_at, tid) first; a bounded
  // step renews the first max_renewals of them, plus any whose boost has run out.
  std::vector<std::pair<Nanos, uint32_t>> due;
  for (const auto& [tid, d] : desired_) {
    if ((d.value.flags & kFlagBoost) == 0) continue;
    const Nanos renew_at = d.value.boost_until - d.value.max_boost / 2;
    if (renew_at <= now_) due.emplace_back(renew_at, tid);
  }
  std::sort(due.begin(), due.end());
  std::set<uint32_t> renew;
  for (size_t i = 0; i < due.size(); ++i)
    if (!e.max_renewals || i < *e.max_renewals || desired_.at(due[i].second).value.boost_until <= now_)
      renew.insert(due[i].second);
  install(derive(renew), RemovalTag::Other);
  return applied();
}

Outcome NaiveModel::on(const DaemonRestart& e) {
  if (e.persisted_generation > static_cast<uint64_t>(kGenBound)) return invalid("persistedGeneration", "beyond 2^53");
  uint64_t max_actual = 0;
  for (const auto& [tid, v] : actual_)
    if (v.generation <= static_cast<uint64_t>(kGenBound)) max_actual = std::max(max_actual, v.generation);
  // §4/INV-4: a restart moves G past its previous value, past the persisted generation and past
  // anything the kernel holds; never past 2^53.
  if (std::max({g_, e.persisted_generation, max_actual}) >= static_cast<uint64_t>(kGenBound))
    return invalid("persistedGeneration", "the restart's generation would pass 2^53");
  g_ = std::max({g_, e.persisted_generation, max_actual}) + 1;
  ++epoch_;
  loading_ = true;
  claims_.clear();
  pods_.clear();
  tasks_.clear();
  for (const auto& [tid, entry] : desired_) last_changed_.push_back(tid);
  desired_.clear();
  removal_.clear();
  for (const auto& [tid, v] : actual_) removal_[tid] = RemovalTag::Restart;
  return applied();
}

Outcome NaiveModel::on(const SyncComplete&) {
  if (!loading_) return ignored("not loading");
  loading_ = false;
  return applied();
}

Outcome NaiveModel::on(const BpfObserved& e) {
  std::map<uint32_t, RuntimeValue> next;
  for (size_t i = 0; i < e.entries.size(); ++i) {
    if (!next.emplace(e.entries[i].tid, e.entries[i].value).second)
      return invalid("entries[" + std::to_string(i) + "].tid", "duplicate tid");
  }
  if (next == actual_) return ignored("actual state unchanged");
  actual_ = std::move(next);
  for (auto it = removal_.begin(); it != removal_.end();)
    it = actual_.count(it->first) == 0 ? removal_.erase(it) : std::next(it);
  // Entries found while the state is still loading are the previous daemon's (trace-format.md).
  if (loading_) {
    for (const auto& [tid, v] : actual_)
      if (desired_.count(tid) == 0) removal_.emplace(tid, RemovalTag::Restart);
  }
  return applied();
}

Outcome NaiveModel::on(const BpfSynced&) {
  if (plan().ops.empty()) return ignored("nothing to apply");
  std::map<uint32_t, RuntimeValue> next;
  for (const auto& [tid, d] : desired_) next[tid] = d.value;
  for (const auto& [tid, v] : actual_) {
    if (desired_.count(tid) != 0) continue;
    if (loading_) next[tid] = v;  // deferred delete: kept until the state is loaded (INV-7)
    else removal_.erase(tid);
  }
  actual_ = std::move(next);
  return applied();
}

// ---------------------------------------------------------------- derivation (§3)

const Pod* NaiveModel::pod_of(const Task& t) const {
  const Pod* best = nullptr;
  for (const auto& [uid, p] : pods_) {
    if (!cgroup_contains(p.cgroup, t.cgroup)) continue;
    if (best == nullptr || depth(p.cgroup) > depth(best->cgroup)) best = &p;
  }
  return best;
}

std::optional<CpuSet> NaiveModel::envelope(const Task& t) const {
  if (t.cpuset) return *t.cpuset;
  if (const Pod* p = pod_of(t); p != nullptr && p->cpuset) return *p->cpuset;
  if (!is_empty(node_.cpus)) return node_.cpus;
  return std::nullopt;
}

bool NaiveModel::claim_live_for(const std::string& uid, const std::string& pod_uid) const {
  auto it = claims_.find(uid);
  if (it == claims_.end()) return false;
  const Claim& c = it->second;
  if (!c.node.empty() && c.node != node_.name) return false;
  return std::find(c.reserved_for.begin(), c.reserved_for.end(), pod_uid) != c.reserved_for.end();
}

bool NaiveModel::node_selected(const NodeSchedulingPolicy& p) const {
  if (!p.node_names.empty() &&
      std::find(p.node_names.begin(), p.node_names.end(), node_.name) == p.node_names.end())
    return false;
  for (const auto& [k, v] : p.node_selectors) {
    auto it = node_.labels.find(k);
    if (it == node_.labels.end() || it->second != v) return false;
  }
  // Kubernetes label-selector semantics, written out per operator.
  for (const auto& r : p.node_selector_expressions) {
    auto it = node_.labels.find(r.key);
    const bool has = it != node_.labels.end();
    const bool listed = has && std::count(r.values.begin(), r.values.end(), it->second) > 0;
    if (r.op == LabelOperator::In && !listed) return false;
    if (r.op == LabelOperator::NotIn && listed) return false;
    if (r.op == LabelOperator::Exists && !has) return false;
    if (r.op == LabelOperator::DoesNotExist && has) return false;
  }
  if (p.dra_selectors.empty()) return true;
  for (const auto& sel : p.dra_selectors) {
    for (const auto& [uid, c] : claims_) {
      if (!c.node.empty() && c.node != node_.name) continue;
      for (const auto& d : c.devices) {
        if (d.driver == sel.driver && (sel.pool.empty() || d.pool == sel.pool) &&
            (sel.device.empty() || d.device == sel.device))
          return true;
      }
    }
  }
  return false;
}

std::optional<NaiveModel::Candidate> NaiveModel::dra_candidate(const DraExecutionPolicy& p,
                                                              const Task& t, bool ignore_gate) const {
  auto acked = previewed_.find({PolicyKind::Dra, p.name});
  const bool active =
      ignore_gate || !p.require_preview || (acked != previewed_.end() && acked->second == p.generation);
  if (!active) return std::nullopt;
  const Pod* pod = pod_of(t);
  if (pod == nullptr) return std::nullopt;
  for (const auto& [k, v] : p.match_labels) {
    auto it = pod->labels.find(k);
    if (it == pod->labels.end() || it->second != v) return std::nullopt;
  }
  // §3 "A task's role": registered, else the pod's first annotated role (by name) matching comm.
  std::string has_role = t.role, source = t.role.empty() ? "" : "registered role " + t.role;
  if (has_role.empty())
    for (const auto& [name, pattern] : pod->task_roles)
      if (matches(pattern, t.comm)) {
        has_role = name;
        source = "pod annotation role " + name;
        break;
      }
  const TaskRole* role = nullptr;
  bool by_role = false;
  for (const auto& r : p.task_roles) {
    by_role = !r.registered_role.empty() && r.registered_role == has_role;
    if (by_role || patterns_match(r.comm_regex, r.process_regex, t)) {
      role = &r;
      break;
    }
  }
  if (role == nullptr) return std::nullopt;

  std::vector<const Claim*> live;
  bool stale = false;
  for (const auto& name : p.resource_claims) {
    auto it = pod->claims.find(name);
    if (it != pod->claims.end() && claim_live_for(it->second, pod->uid))
      live.push_back(&claims_.at(it->second));
    else
      stale = true;
  }
  if (stale && p.fail_closed_on_stale_claim) return std::nullopt;
  if (live.empty()) return std::nullopt;

  CpuSet allocated;
  bool any_cpus = false;
  CpuSet numa;
  CpuSet pcie;
  for (const Claim* c : live) {
    for (const auto& d : c->devices) {
      if (d.cpus) {
        allocated = unite(allocated, *d.cpus);
        any_cpus = true;
      }
      for (int n : d.numa_nodes) {
        auto it = node_.numa_cpus.find(n);
        if (it != node_.numa_cpus.end()) numa = unite(numa, it->second);
      }
      if (!d.pcie_root.empty()) {
        auto it = node_.pcie_root_cpus.find(d.pcie_root);
        if (it != node_.pcie_root_cpus.end()) pcie = unite(pcie, it->second);
      }
    }
  }
  // Unknown envelope: the allocated CPUs alone bound the entry, or it carries no CPU set at all.
  const std::optional<CpuSet> env = envelope(t);
  std::optional<CpuSet> allowed = env;
  if (p.respect_allocated_cpuset && any_cpus) allowed = env ? intersect(*env, allocated) : allocated;
  if (allowed && is_empty(*allowed)) return std::nullopt;  // allocation outside the envelope: refused (INV-6)
  CpuSet preferred = allowed.value_or(CpuSet{});
  if (allowed && p.prefer_same_numa) {
    CpuSet x = intersect(preferred, numa);
    if (!is_empty(x)) preferred = x;
  }
  if (allowed && p.prefer_same_pcie_root) {
    CpuSet x = intersect(preferred, pcie);
    if (!is_empty(x)) preferred = x;
  }

  Candidate c;
  Entry& e = c.entry;
  e.kind = PolicyKind::Dra;
  e.policy = p.name;
  e.policy_generation = p.generation;
  e.pod_uid = pod->uid;
  for (const Claim* cl : live) e.claims.push_back(ClaimRef{cl->uid, cl->generation});
  e.role = role->name;
  if (by_role) e.role_source = source;
  e.strategy = Strategy::ExactTid;
  RuntimeValue& v = e.value;
  v.exec_class = role->exec_class;
  v.slice_ns = default_slice(role->exec_class);
  if (boosts(role->exec_class)) {
    v.max_boost = p.max_boost;
    v.flags |= kFlagBoost;
    // boost.inherit.depth (issue 43 item 3): bit 5 for depth >= 1, bit 6 for depth 2.
    if (role->boost_inherit_depth >= 1) v.flags |= 1u << 5;
    if (role->boost_inherit_depth == 2) v.flags |= 1u << 6;
  }
  if (allowed) {
    v.allowed = *allowed;
    v.preferred = preferred;
    v.flags |= kFlagAllowedCpus;
    if (preferred != *allowed) v.flags |= kFlagPreferredCpus;
  }
  c.priority = 0;
  return c;
}

std::optional<NaiveModel::Candidate> NaiveModel::node_candidate(const NodeSchedulingPolicy& p,
                                                               const Task& t, Strategy s) const {
  Candidate c;
  Entry& e = c.entry;
  e.kind = PolicyKind::Node;
  e.policy = p.name;
  e.policy_generation = p.generation;
  e.strategy = s;
  RuntimeValue& v = e.value;
  v.exec_class = p.priority > 0 ? ExecClass::LatencyCritical : ExecClass::Normal;
  if (p.execution_time > 0) {
    v.slice_ns = p.execution_time;
    v.flags |= kFlagCustomSlice;
  } else {
    v.slice_ns = default_slice(v.exec_class);
  }
  if (boosts(v.exec_class)) {
    v.max_boost = node_.default_max_boost;
    v.flags |= kFlagBoost;
    if (p.boost_inherit_depth >= 1) v.flags |= 1u << 5;
    if (p.boost_inherit_depth == 2) v.flags |= 1u << 6;
  }
  // Node policies use allowed = preferred = E; with no known E the entry carries no CPU set.
  if (const std::optional<CpuSet> env = envelope(t)) {
    if (is_empty(*env)) return std::nullopt;
    v.allowed = *env;
    v.preferred = *env;
    v.flags |= kFlagAllowedCpus;
  }
  if (s == Strategy::Tgid) v.flags |= kFlagInherited;
  c.priority = p.priority;
  return c;
}

std::vector<NaiveModel::Candidate> NaiveModel::candidates(const Task& t, const std::string* ungated) const {
  std::vector<Candidate> out;
  for (const auto& [name, p] : dra_) {
    if (auto c = dra_candidate(p, t, ungated != nullptr && *ungated == name)) out.push_back(std::move(*c));
  }
  for (const auto& [name, p] : nsp_) {
    if (node_selected(p) && patterns_match(p.command_regex, p.process_regex, t)) {
      if (auto c = node_candidate(p, t, Strategy::ExactTid)) out.push_back(std::move(*c));
    }
  }
  // Exact TID first, then TGID: the leader's comm decides for threads nobody matched. A TGID
  // match shadowed by an exact one is still a candidate (it loses, and is reported as a conflict,
  // §3), except for a node policy that matches the thread itself.
  if (t.key.tid != t.tgid) {
    // The leader is the live task with tid = t.tgid, and a leader is its own thread group
    // (findings/tgid-fallback-order-dependent.jsonl).
    auto leader = tasks_.find(t.tgid);
    if (leader != tasks_.end() && leader->second.tgid == leader->second.key.tid) {
      for (const auto& [name, p] : nsp_) {
        const bool itself = node_selected(p) && patterns_match(p.command_regex, p.process_regex, t);
        if (!itself && node_selected(p) && patterns_match(p.command_regex, p.process_regex, leader->second)) {
          if (auto c = node_candidate(p, t, Strategy::Tgid)) out.push_back(std::move(*c));
        }
      }
    }
  }
  return out;
}

std::map<uint32_t, NaiveConflict> NaiveModel::conflicts() const {
  std::map<uint32_t, NaiveConflict> out;
  auto name = [](const Candidate& c) { return std::string(to_string(c.entry.kind)) + "/" + c.entry.policy; };
  for (const auto& [tid, t] : tasks_) {
    std::vector<Candidate> cands = candidates(t);
    if (cands.size() < 2) continue;
    // §3: exact-tid, then DRA before node, then higher priority, then name.
    std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      return std::make_tuple(static_cast<int>(a.entry.strategy), static_cast<int>(a.entry.kind), -a.priority,
                             a.entry.policy) <
             std::make_tuple(static_cast<int>(b.entry.strategy), static_cast<int>(b.entry.kind), -b.priority,
                             b.entry.policy);
    });
    NaiveConflict c;
    c.winner = name(cands[0]);
    for (size_t i = 1; i < cands.size(); ++i) c.losers.push_back(name(cands[i]));
    const Candidate& a = cands[0];
    const Candidate& b = cands[1];
    c.rule = a.entry.strategy != b.entry.strategy ? "exact-tid-before-tgid"
             : a.entry.kind != b.entry.kind       ? "dra-before-node"
             : a.priority != b.priority           ? "higher-priority"
                                                  : "name-order";
    out.emplace(tid, std::move(c));
  }
  return out;
}

std::map<uint32_t, bool> NaiveModel::preview_matches(PolicyKind kind, const std::string& name) const {
  std::map<uint32_t, bool> out;
  const std::string* ungated = kind == PolicyKind::Dra ? &name : nullptr;
  for (const auto& [tid, t] : tasks_) {
    std::vector<Candidate> cands = candidates(t, ungated);
    auto rank = [](const Candidate& c) {
      return std::make_tuple(static_cast<int>(c.entry.strategy), static_cast<int>(c.entry.kind), -c.priority,
                             c.entry.policy);
    };
    const Candidate* mine = nullptr;
    const Candidate* best = nullptr;
    for (const auto& c : cands) {
      if (c.entry.kind == kind && c.entry.policy == name) mine = &c;
      if (best == nullptr || rank(c) < rank(*best)) best = &c;
    }
    if (mine != nullptr) out.emplace(tid, best == mine);
  }
  return out;
}

std::map<uint32_t, Entry> NaiveModel::derive(const std::set<uint32_t>& renew) const {
  std::map<uint32_t, Entry> out;
  for (const auto& [tid, t] : tasks_) {
    std::vector<Candidate> cands = candidates(t);
    if (cands.empty()) continue;
    // §3 conflicts: exact-tid, then DRA before node, then higher priority, then name.
    auto rank = [](const Candidate& c) {
      return std::make_tuple(static_cast<int>(c.entry.strategy), static_cast<int>(c.entry.kind),
                             -c.priority, c.entry.policy);
    };
    const Candidate& win =
        *std::min_element(cands.begin(), cands.end(),
                          [&](const Candidate& a, const Candidate& b) { return rank(a) < rank(b); });
    Entry e = win.entry;
    e.value.start = t.key.start;
    e.value.tgid = t.tgid;
    e.cgroup = t.cgroup;
    e.comm = t.comm;
    e.epoch = epoch_;
    if ((e.value.flags & kFlagBoost) != 0) {
      // Boost lease (INV-8): an unchanged boost keeps its lease, renewed at half-life.
      const Nanos max = e.value.max_boost;
      e.value.boost_until = now_ + max;
      auto old = desired_.find(tid);
      // A task that reuses the tid is a new task: it gets a fresh lease, not its predecessor's
      // (findings/lease-carried-over-tid-reuse.jsonl).
      if (old != desired_.end() && old->second.value.start == t.key.start &&
          (old->second.value.flags & kFlagBoost) != 0 && old->second.value.max_boost == max) {
        const Nanos until = old->second.value.boost_until;
        const bool renewed = until <= now_ || renew.count(tid) != 0;
        e.value.boost_until = renewed ? now_ + max : until;
      }
    }
    out.emplace(tid, std::move(e));
  }
  return out;
}

void NaiveModel::install(std::map<uint32_t, Entry> next, RemovalTag tag) {
  bool changed = false;
  for (auto& [tid, e] : next) {
    auto old = desired_.find(tid);
    if (old != desired_.end() && same_entry_except_generation(old->second, e)) {
      e.value.generation = old->second.value.generation;
    } else {
      e.value.generation = g_ + 1;
      changed = true;
      last_changed_.push_back(tid);
    }
    removal_.erase(tid);
  }
  for (const auto& [tid, e] : desired_) {
    if (next.count(tid) == 0) {
      changed = true;
      // §2: a removal reason is kept for entries that left D while still in A.
      if (actual_.count(tid) != 0) removal_[tid] = tag;
      last_changed_.push_back(tid);
    }
  }
  std::sort(last_changed_.begin(), last_changed_.end());
  if (changed) ++g_;
  desired_ = std::move(next);
}

// ---------------------------------------------------------------- plan (§6)

NaivePlan NaiveModel::plan() const {
  NaivePlan p;
  std::map<uint32_t, int> tids;
  for (const auto& [tid, e] : desired_) tids[tid] = 0;
  for (const auto& [tid, v] : actual_) tids[tid] = 0;
  for (const auto& [tid, unused] : tids) {
    auto d = desired_.find(tid);
    auto a = actual_.find(tid);
    if (d != desired_.end() && a == actual_.end()) {
      p.ops.push_back(Op{PlanOp::Kind::Add, tid, d->second.value, false, std::nullopt});
    } else if (d != desired_.end()) {
      if (d->second.value != a->second)
        p.ops.push_back(Op{PlanOp::Kind::Update, tid, d->second.value,
                           d->second.value.start != a->second.start, std::nullopt});
    } else if (loading_) {
      p.deferred.push_back(tid);
    } else {
      auto r = removal_.find(tid);
      p.ops.push_back(Op{PlanOp::Kind::Delete, tid, a->second, false,
                         r == removal_.end() ? std::nullopt : std::optional<RemovalTag>(r->second)});
    }
  }
  return p;
}

}  // namespace c2c::naive
