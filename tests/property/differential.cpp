#include "differential.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "compare.hpp"
#include "codec/trace_codec.hpp"

namespace c2c::property {

namespace {

const char* status_text(ApplyResult::Status s) {
  switch (s) {
    case ApplyResult::Status::Applied: return "Applied";
    case ApplyResult::Status::Ignored: return "Ignored";
    case ApplyResult::Status::Invalid: return "Invalid";
  }
  return "?";
}
const char* status_text(naive::Status s) {
  switch (s) {
    case naive::Status::Applied: return "Applied";
    case naive::Status::Ignored: return "Ignored";
    case naive::Status::Invalid: return "Invalid";
  }
  return "?";
}
bool same(ApplyResult::Status a, naive::Status b) {
  return static_cast<int>(a) == static_cast<int>(b);
}

}  // namespace

Coverage& coverage() {
  static Coverage c;
  return c;
}

std::string Coverage::to_string() const {
  std::ostringstream os;
  os << "steps applied " << applied << ", ignored " << ignored << ", invalid " << invalid
     << "\n  desired entries (summed over steps): dra " << dra_entries << ", node " << node_entries
     << ", tgid-strategy " << tgid_entries << ", narrowed preferred " << narrowed_preferred
     << ", boosted " << boosted_entries << "\n  lease renewals " << lease_renewals
     << ", generation bumps " << generation_bumps << ", restarts " << restarts
     << "\n  plan ops: add " << ops_add << ", update " << ops_update << " (tid reuse "
     << ops_tid_reuse << "), delete " << ops_delete << " (claim deallocated " << deletes_inv1
     << "), deferred " << deferred_deletes << "\n  stale task events ignored "
     << stale_task_events << ", older-generation inputs ignored " << old_generation_inputs << "\n  " << boundaries.to_string();
  return os.str();
}



namespace {
void count(const Event& e, const naive::Outcome& o, uint64_t g_before, const std::map<uint32_t, naive::Entry>& before,
           const naive::NaiveModel& m) {
  Coverage& c = coverage();
  if (o.status == naive::Status::Applied) ++c.applied;
  else if (o.status == naive::Status::Ignored) ++c.ignored;
  else ++c.invalid;
  if (o.status == naive::Status::Ignored) {
    if (std::holds_alternative<TaskRenamed>(e) || std::holds_alternative<TaskExited>(e) ||
        std::holds_alternative<TaskSeen>(e))
      ++c.stale_task_events;
    if (o.message.find("INV-3") != std::string::npos) ++c.old_generation_inputs;
  }
  if (m.generation() != g_before) ++c.generation_bumps;
  if (std::holds_alternative<DaemonRestart>(e)) ++c.restarts;
  for (const auto& [tid, en] : m.desired()) {
    (en.kind == PolicyKind::Dra ? c.dra_entries : c.node_entries)++;
    if (en.strategy == Strategy::Tgid) ++c.tgid_entries;
    if (en.value.preferred != en.value.allowed) ++c.narrowed_preferred;
    if (en.value.boost_until != 0) ++c.boosted_entries;
    if (std::holds_alternative<TimeAdvance>(e)) {
      auto old = before.find(tid);
      if (old != before.end() && old->second.value.boost_until != 0 &&
          old->second.value.boost_until != en.value.boost_until)
        ++c.lease_renewals;
    }
  }
  const naive::NaivePlan p = m.plan();
  for (const auto& op : p.ops) {
    if (op.kind == PlanOp::Kind::Add) ++c.ops_add;
    if (op.kind == PlanOp::Kind::Update) ++c.ops_update;
    if (op.tid_reused) ++c.ops_tid_reuse;
    if (op.kind == PlanOp::Kind::Delete) ++c.ops_delete;
    if (op.removal == naive::RemovalTag::ClaimDeallocated) ++c.deletes_inv1;
  }
  c.deferred_deletes += p.deferred.size();
}
}  // namespace

Differential::Differential(naive::Options o) : model_(o) {}

std::optional<std::string> Differential::step(const Event& e) {
  trace_.push_back(e);
  std::ostringstream os;
  const std::string before = core_.digest();
  const StepContext ctx = core_.step_context(e);
  coverage().boundaries.before(e, core_);
  const ApplyResult r = core_.apply(e);
  const uint64_t g_before = model_.generation();
  const auto desired_before = model_.desired();
  const naive::Outcome o = model_.apply(e);
  count(e, o, g_before, desired_before, model_);
  coverage().boundaries.after(e, r, core_);

  if (!same(r.status, o.status)) {
    os << "status: core " << status_text(r.status) << " (" << r.field << " " << r.message
       << ") model " << status_text(o.status) << " (" << o.field << " " << o.message << ")\n";
  }
  if (r.status == ApplyResult::Status::Invalid && r.field.empty())
    os << "an Invalid result must name the offending field (" << r.message << ")\n";
  std::vector<uint32_t> changed = r.changed_tids;
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  if (same(r.status, o.status) && changed != model_.last_changed()) {
    os << "changed_tids: core [";
    for (auto t : changed) os << t << ' ';
    os << "] model [";
    for (auto t : model_.last_changed()) os << t << ' ';
    os << "]\n";
  }
  if (r.status != ApplyResult::Status::Applied && core_.digest() != before)
    os << "INV-3: an " << status_text(r.status) << " event changed the core's digest\n";

  // Determinism: a copy fed the same events must end in the same state.
  if (trace_.size() % 9 == 1) {
    copy_ = core_;
  } else {
    copy_.apply(e);
    if (copy_.digest() != core_.digest()) os << "determinism: the copied core's digest differs\n";
  }

  if (core_.generation() != model_.generation())
    os << "generation: core " << core_.generation() << " model " << model_.generation() << "\n";
  if (core_.restart_epoch() != model_.epoch())
    os << "restart epoch: core " << core_.restart_epoch() << " model " << model_.epoch() << "\n";
  if (core_.loading() != model_.loading())
    os << "loading: core " << core_.loading() << " model " << model_.loading() << "\n";
  if (core_.now() != model_.now()) os << "now: core " << core_.now() << " model " << model_.now() << "\n";
  if (auto d = diff_desired(core_, model_)) os << "desired table differs:\n" << *d;
  if (auto d = diff_plan(core_.plan(), model_.plan())) os << "plan differs:\n" << *d;
  if (auto d = diff_conflicts(core_.conflicts(), model_.conflicts())) os << "conflicts differ:\n" << *d;
  // Preview of every stored policy: which tasks it matches and where it would win (§6).
  auto previewed = [&](PolicyKind kind, const std::string& name, const PreviewResult& p) {
    std::map<uint32_t, bool> mine;
    for (const auto& m : p.matched) mine.emplace(m.key.tid, m.intended.has_value());
    if (mine != model_.preview_matches(kind, name))
      os << "preview of " << to_string(kind) << "/" << name << " differs (matched tasks or where it wins)\n";
  };
  for (const auto& [name, p] : model_.dra()) previewed(PolicyKind::Dra, name, core_.preview(p));
  for (const auto& [name, p] : model_.nsp()) previewed(PolicyKind::Node, name, core_.preview(p));
  const auto full_violations = core_.check();
  const auto step_violations = core_.check_step(ctx, r);
  if (!full_violations.empty()) os << "check() reports violations:\n" << describe(full_violations);
  if (!step_violations.empty()) os << "check_step() reports violations:\n" << describe(step_violations);
  if (auto d = incremental_.check_step_complete(full_violations, step_violations)) os << *d;
  if (auto d = IncrementalOracle::sliced(core_, full_violations, 1 + trace_.size() % 4))
    os << "full pass in slices:\n" << *d;
  if (auto d = incremental_.step(core_, e)) os << "incremental reconcile:\n" << *d;

  if (os.str().empty()) return std::nullopt;
  return "step " + std::to_string(trace_.size()) + " (" + event_kind(e) + "):\n" + os.str();
}

std::string Differential::trace_jsonl() const {
  std::string out;
  for (const auto& e : trace_) out += codec::encode_event(e).dump() + "\n";
  return out;
}

}  // namespace c2c::property
