// Roles from activity on this node (activity_windows.hpp).
#include "daemon/controller/activity_windows.hpp"

#include <algorithm>
#include <set>

namespace c2c::daemon {

namespace {

bool classifies(const Core& core, PolicyKind kind, const std::string& name) {
  auto m = classify_of(core, kind, name);
  return m && *m != ClassifyMode::Off;
}

// The policies of the desired entries that classify: each policy looked up once (a lookup copies
// the policy), not once per entry.
std::set<std::pair<PolicyKind, std::string>> classifying_policies(const Core& core) {
  std::map<std::pair<PolicyKind, std::string>, bool> memo;
  for (const auto& [tid, e] : core.desired()) {
    const auto key = std::make_pair(e.origin->kind, e.origin->policy);
    if (!memo.count(key)) memo.emplace(key, classifies(core, key.first, key.second));
  }
  std::set<std::pair<PolicyKind, std::string>> out;
  for (const auto& [key, yes] : memo)
    if (yes) out.insert(key);
  return out;
}

class BpfActivitySource final : public ActivitySource {
 public:
  std::string watch(const std::vector<uint32_t>& tgids) override {
    if (!tracer_) {
      if (tgids.empty()) return "";  // nothing to watch: the program is not loaded for nothing
      std::string err;
      host::ActivityFilter f;
      f.tgids = tgids;
      tracer_ = host::WakeupEdgeTracer::open(&err, f);
      return tracer_ ? "" : "the wakeup-edges program cannot be used: " + err;
    }
    return tracer_->set_tgids(tgids);
  }
  std::optional<host::ActivityReading> read(std::string* err) override {
    if (!tracer_) return host::ActivityReading{};
    std::string e;
    auto r = tracer_->read(&e);
    if (!e.empty()) {
      if (err) *err = e;
      return std::nullopt;
    }
    return r;
  }

 private:
  std::unique_ptr<host::WakeupEdgeTracer> tracer_;
};

}  // namespace

std::unique_ptr<ActivitySource> bpf_activity_source() { return std::make_unique<BpfActivitySource>(); }

// The shortest controller window among the classifying policies (so that classify: apply's
// members are as fresh as the controller's windows), else one second; never under kMinPeriodNs.
Nanos ActivityWindows::period(const Core& core) const {
  Nanos p = 0;
  for (const ControllerStatus& c : core.controllers())
    if (classifies(core, c.kind, c.policy)) p = p == 0 ? c.spec.window : std::min(p, c.spec.window);
  return std::max(p == 0 ? kDefaultPeriodNs : p, kMinPeriodNs);
}

std::vector<uint32_t> ActivityWindows::watched_tgids(const Core& core) const {
  std::set<uint32_t> tgids;
  std::map<std::pair<PolicyKind, std::string>, bool> memo;  // policy -> classifies
  for (const auto& [tid, e] : core.desired()) {
    const auto key = std::make_pair(e.origin->kind, e.origin->policy);
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, classifies(core, key.first, key.second)).first;
    if (it->second) tgids.insert(e.value.tgid);
  }
  std::vector<uint32_t> out(tgids.begin(), tgids.end());
  if (out.size() > host::kActivityMaxFilter) out.resize(host::kActivityMaxFilter);  // the lowest; status says how many
  return out;
}

bool ActivityWindows::gather(const Core& core, Nanos now) {
  if (!unavailable_.empty() || now < next_at_) return false;
  period_ = period(core);
  next_at_ = now + period_;
  const std::vector<uint32_t> tgids = watched_tgids(core);
  active_ = !tgids.empty();
  watched_ = tgids.size();
  if (std::string e = source_->watch(tgids); !e.empty()) {
    unavailable_ = e;  // fail closed: no proposals from now on
    latest_.clear();
    last_.reset();
    return false;
  }
  if (!active_) {
    latest_.clear();
    last_.reset();
    return false;
  }
  std::string err;
  auto reading = source_->read(&err);
  if (!reading) {  // this window is lost: the next reading is a baseline again
    read_error_ = err;
    last_.reset();
    return false;
  }
  read_error_.clear();
  const bool baseline = !last_;
  if (!baseline)
    keep(core, activity_window(last_->threads, last_->edges, reading->threads, reading->edges, now - last_at_), now);
  last_ = std::move(*reading);
  last_at_ = now;
  return !baseline;
}

// The window's proposals, per policy: every classifying policy gets this window's (maybe none),
// policies that no longer classify are forgotten.
void ActivityWindows::keep(const Core& core, const ActivityWindow& w, Nanos now) {
  std::map<std::pair<PolicyKind, std::string>, PolicyProposals> next;
  for (const auto& key : classifying_policies(core)) next.emplace(key, PolicyProposals{now, w.window_ns, {}});
  for (ProposalView& v : view_proposals(core, w)) {
    auto [it, fresh] = next.try_emplace({v.kind, v.policy}, PolicyProposals{now, w.window_ns, {}});
    it->second.proposals.push_back(std::move(v));
  }
  latest_ = std::move(next);
}

std::optional<Nanos> ActivityWindows::deadline() const {
  if (!unavailable_.empty() || !active_) return std::nullopt;
  return next_at_;
}

std::string ActivityWindows::status() const {
  if (!unavailable_.empty()) return "unavailable: " + unavailable_ + " (no roles proposed from activity)";
  if (!active_) return "idle: no policy with classify propose or apply has threads";
  std::string s = "watching " + std::to_string(watched_) + " processes of " + std::to_string(latest_.size()) +
                  " policies, a window every " + std::to_string(period_ / 1'000'000) + " ms";
  if (watched_ == host::kActivityMaxFilter) s += " (at the filter's bound: more are not watched)";
  if (!read_error_.empty()) s += "; the last reading failed: " + read_error_;
  return s;
}

const PolicyProposals* ActivityWindows::of_policy(PolicyKind kind, const std::string& name) const {
  auto it = latest_.find({kind, name});
  return it == latest_.end() ? nullptr : &it->second;
}

std::optional<ProposalView> ActivityWindows::of_tid(uint32_t tid) const {
  for (const auto& [key, pp] : latest_)
    for (const auto& v : pp.proposals)
      if (v.proposal.tid == tid) return v;
  return std::nullopt;
}

SignalWindows::Joined ActivityWindows::joined() const {
  SignalWindows::Joined out;
  for (const auto& [key, pp] : latest_)
    for (const auto& v : pp.proposals)
      if (v.mode == ClassifyMode::Apply) out[key].push_back({v.proposal, v.outcome, v.tgid, v.start});
  return out;
}

node::Proposal to_node_proposal(const ProposalView& v, Nanos window_ns) {
  node::Proposal p;
  p.tid = v.proposal.tid;
  p.role = to_string(v.proposal.role);
  p.execution_class = to_string(proposed_class(v.proposal.role));
  p.confidence_permille = v.proposal.confidence_permille;
  p.counterpart = v.proposal.counterpart;
  p.reason = v.proposal.reason;
  p.outcome = to_string(v.outcome);
  p.kind = v.kind;
  p.policy = v.policy;
  p.classify = to_string(v.mode);
  p.text = v.text;
  p.window_ns = window_ns;
  return p;
}

std::vector<node::Proposal> previewed_proposals(const ActivityWindows& a, PolicyKind kind, const std::string& name,
                                                ClassifyMode mode) {
  std::vector<node::Proposal> out;
  const PolicyProposals* pp = a.of_policy(kind, name);
  if (pp == nullptr) return out;
  for (const ProposalView& v : pp->proposals)
    if (auto w = under_mode(v, mode)) out.push_back(to_node_proposal(*w, pp->window_ns));
  return out;
}

}  // namespace c2c::daemon
