#include "daemon/reconciler/reconciler.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <unordered_set>

#include "daemon/reconciler/lease_hold.hpp"

namespace c2c::daemon {

namespace {

// How soon after a write the short read-back pass confirms SENT intents (spec/daemon.md, "Intents").
constexpr uint64_t kConfirmAfterNs = 100'000'000ull;
// A read-back in slices (start_sliced): work per turn and keys per step (the wait between turns:
// kSliceGapNs).
constexpr uint64_t kSliceNs = 500'000;
constexpr size_t kSliceKeys = 256;

mirror::ApplyOptions apply_options() {
  // One attempt per write: a failed key goes to retry_ (backoff on the loop's timer), so the
  // applier never sleeps on the loop thread.
  mirror::ApplyOptions ao;
  ao.retry.max_attempts = 1;
  ao.read_chunk = 512;  // a read-back slice's chunk (~0.3 ms at 100k entries)
  return ao;
}

}  // namespace

void report_pass(ReconcilerMetrics& metrics, const char* pass, const std::string& what, uint64_t held_ns, uint64_t cpu_ns) {
  metrics.full_pass(pass, static_cast<double>(held_ns) / 1e9, static_cast<double>(cpu_ns) / 1e9);
  spdlog::debug("{}: {} ms ({} ms CPU)", what, held_ns / 1'000'000, cpu_ns / 1'000'000);
}

Reconciler::Reconciler(NodeState& node, mirror::PolicyMapIo& map, const DaemonConfig& cfg, ReconcilerMetrics& metrics,
                       HeapTrim& heap_trim, ReconcilerClock clock, FullPassHooks hooks)
    : node_(node),
      cfg_(cfg),
      metrics_(metrics),
      heap_trim_(heap_trim),
      clock_(std::move(clock)),
      hooks_(std::move(hooks)),
      applier_(map, apply_options()) {}

bool Reconciler::read_back_if_due(uint64_t now, bool writes_under_way) {
  if (sliced_) return now >= next_slice_ns_ && continue_sliced();
  if (readback_pass_.due(now, map_units(), cfg_.readback_interval_ns)) return start_sliced(true);
  // (Not while writes are under way, a renewal wave's: a pass that sees writes does not confirm.)
  if (now < next_confirm_ns_ || writes_under_way) return false;
  if (written_.too_many()) return start_sliced(false);
  return readback(false);
}

void Reconciler::schedule_confirm() {
  if (next_confirm_ns_ == UINT64_MAX && node_.intents.count(IntentState::Sent) > 0)
    next_confirm_ns_ = clock_.now_ns() + std::min<uint64_t>(cfg_.readback_interval_ns, kConfirmAfterNs);
}

uint64_t Reconciler::next_wakeup() const {
  uint64_t next = sliced_ ? next_slice_ns_ : std::min(readback_pass_.next_ns, next_confirm_ns_);
  if (auto r = retry_.next_due()) next = std::min(next, *r);
  return next;
}

bool Reconciler::retry_due(uint64_t now) const {
  auto r = retry_.next_due();
  return r && *r <= now;
}

void Reconciler::set_violations(const std::vector<Violation>& found) {
  last_violations_.clear();
  for (const auto& v : found) last_violations_.push_back(v.invariant + ": " + v.message);
}

// The op that makes the map hold what the core wants for `tid` now, if any (a queued retry is
// rebuilt from the current tables, so it never writes a value that has since changed).
std::optional<PlanOp> Reconciler::retry_op(uint32_t tid) const {
  const auto& desired = node_.core.desired();
  const auto& actual = node_.core.actual();
  auto d = desired.find(tid);
  auto a = actual.find(tid);
  if (d != desired.end()) {
    if (a != actual.end() && a->second == d->second.value) return std::nullopt;
    return PlanOp{a == actual.end() ? PlanOp::Kind::Add : PlanOp::Kind::Update, tid, d->second.value, "retry"};
  }
  if (a != actual.end()) return PlanOp{PlanOp::Kind::Delete, tid, a->second, "retry"};
  return std::nullopt;
}

// Incremental (spec/daemon.md, "Incremental reconcile"): the ops the core yields for what
// changed since the last call (take_plan_delta), plus the queued retries that are due; the
// intents' counts follow the TIDs touched. The full plan runs only in readback().
void Reconciler::reconcile() {
  refresh_preview_waits(node_.durable, node_.intents, clock_.unix_ms());
  const uint64_t now = clock_.now_ns();
  Plan plan = node_.core.take_plan_delta();
  if (!retry_.empty()) {
    std::unordered_set<uint32_t> in_plan;
    for (const auto& op : plan.ops) in_plan.insert(op.tid);
    for (uint32_t tid : retry_.due(now)) {
      if (in_plan.count(tid)) continue;
      if (auto op = retry_op(tid))
        plan.ops.push_back(std::move(*op));
      else
        retry_.resolved(tid);
    }
  }
  for (const auto& op : plan.ops) node_.facts.touched(op.tid);
  bool open_intents = node_.intents.count(IntentState::Pending) + node_.intents.count(IntentState::Sent) +
                          node_.intents.count(IntentState::Failed) > 0;
  // APPLIED only ever comes from a read-back pass (readback): a write alone makes an intent SENT.
  // The counts after this turn's changes (and after the write, below).
  auto settle = [&] { return node_.facts.settle(node_.core); };
  if (plan.ops.empty()) {
    if (settle() || open_intents) node_.settle_intents(nullptr, retry_.empty() ? "" : last_apply_error_, clock_.unix_ms());
    return;
  }
  std::string held;  // why writes wait (the generation lease), if they do
  if (auto e = node_.lease->cover(node_.core.generation()); !e.empty()) {
    if (e != node_.lease_error) spdlog::error("generation lease: {} (nothing above the ceiling written: INV-4)", e);
    node_.lease_error = e;
    held = last_apply_error_ = "generation lease: " + e;
    // Deletes are written now; adds and updates carry G and wait until the lease covers it.
    for (uint32_t tid : hold_for_lease(plan)) retry_.failed(tid, now);
    if (plan.ops.empty()) {
      settle();
      node_.settle_intents(nullptr, held, clock_.unix_ms());
      return;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  auto report = applier_.apply(plan);
  metrics_.observe_apply(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  heap_trim_.changed(now, report.ops.size());
  for (const auto& op : report.ops) {
    if (op.success() || op.state == mirror::OpState::Skipped) retry_.resolved(op.tid);
    else retry_.failed(op.tid, now);
    written_.add(op.tid);  // read back by the next pass, whatever happened to it
    if (sliced_) sliced_->wrote(op.tid);
  }
  std::string error;
  if (report.ok() && retry_.empty()) {
    node_.core.apply(BpfSynced{});
    last_apply_error_.clear();
  } else {
    if (!report.ok()) {
      error = !report.error.empty() ? report.error : std::to_string(report.failed) + " of " +
                                                         std::to_string(report.ops.size()) + " map operations failed";
      if (error != last_apply_error_) spdlog::warn("apply: {} (retried with backoff)", error);
      last_apply_error_ = error;
    }
    // Some keys are still owed (failed now or queued): BpfSynced would claim them written, so the
    // map is read back instead; retry_ writes the rest when due.
    if (auto actual = applier_.read_actual(); actual) {
      node_.core.apply(BpfObserved{actual->entries});
      node_.facts.observed();
      if (sliced_) sliced_->observed();
    }
  }
  settle();
  node_.settle_intents(&report, !held.empty() ? held : report.ok() ? "" : error, clock_.unix_ms());
}

// The map holds what the core believes it holds: every entry in it as desired is read back
// (counted from the current tables first; the reconcile that follows re-derives the same TIDs).
void Reconciler::confirm_read_back() { node_.facts.confirm(node_.core); }

bool Reconciler::readback(bool full) {
  bool drift_found = false;
  next_confirm_ns_ = UINT64_MAX;
  const uint64_t started = clock_.now_ns(), cpu_started = clock_.cpu_ns();
  if (full && hooks_.begins) hooks_.begins();
  // The short pass reads back only the keys written since the last read-back (confirm_pass.hpp);
  // the full pass, too many keys, or drift among them: the whole map, as before.
  bool written_clean = false;
  if (!full && !written_.too_many()) {
    if (auto k = applier_.read_keys(written_.tids()); !k)
      spdlog::warn("reading the written keys back: {}", k.error());
    else
      written_clean = drift_among(written_.tids(), k->entries, node_.core.actual()) == 0;
  }
  if (written_clean) {
    metrics_.readback("written_keys");
    written_.clear();
    confirm_read_back();
  } else if (auto r = applier_.read_actual(); !r) {
    spdlog::warn("reading the policy map back: {}", r.error());
  } else {
    metrics_.readback("whole_map");
    heap_trim_.changed(clock_.now_ns(), r->entries.size());  // its transient copies of the map, freed below
    written_.clear();
    const size_t drift = whole_map_drift(r->entries, node_.core.actual());
    metrics_.set_drift_now(static_cast<double>(drift));
    if (drift) {
      metrics_.add_drift(static_cast<double>(drift));
      spdlog::warn("policy map drifted from what was written ({} entries): re-observing and fixing (INV-5)", drift);
      node_.core.apply(BpfObserved{r->entries});
      node_.facts.drifted(node_.core);  // at once, not at the repair's settle (issue 45; intent_settling.hpp)
      drift_found = true;  // the plan must run now to repair it
    } else {
      confirm_read_back();
    }
  }
  if (full) node_.refresh_intents(clock_.unix_ms());
  node_.settle_intents(nullptr, retry_.empty() ? "" : last_apply_error_, clock_.unix_ms());
  if (!full) {
    spdlog::debug("short read-back ({}): {} ms ({} ms CPU)", written_clean ? "the written keys" : "the whole map",
                  (clock_.now_ns() - started) / 1'000'000, (clock_.cpu_ns() - cpu_started) / 1'000'000);
    return drift_found;
  }
  if (hooks_.ends) hooks_.ends();
  if (const size_t missed = write_missed(node_.core.plan()))
    spdlog::debug("read-back: the full plan has {} ops outstanding (written now)", missed);
  report_violations(node_.core.check());
  const uint64_t ended = clock_.now_ns();
  readback_pass_.ran(started, ended, map_units(), cfg_.readback_interval_ns);
  report_pass(metrics_, "readback", "full read-back (at once)", ended - started, clock_.cpu_ns() - cpu_started);
  return drift_found;
}

// The read-back in slices (sliced_read_back.hpp): a slice of at most ~kSliceNs per turn, then the
// loop waits kSliceGapNs (serving task events and commands) before the next, so that the pass
// neither holds the loop nor, at SCHED_FIFO, a CPU for long (each wait that sleeps starts a new
// real-time budget: without a gap the slices would add up to one long real-time run).
bool Reconciler::start_sliced(bool full) {
  next_confirm_ns_ = UINT64_MAX;
  if (full && hooks_.begins) hooks_.begins();
  written_.clear();  // the walk reads every key written so far
  sliced_.emplace(full, clock_.now_ns());
  sliced_walk_ = mirror::MapWalk{};
  return continue_sliced();
}

bool Reconciler::continue_sliced() {
  SlicedReadBack& p = *sliced_;
  const uint64_t t0 = clock_.now_ns(), cpu0 = clock_.cpu_ns();
  ++p.slices;
  while (!p.done() && clock_.now_ns() - t0 < kSliceNs) {
    if (p.walking()) {
      auto r = applier_.read_next(sliced_walk_);
      if (!r) {
        spdlog::warn("reading the policy map back: {}", r.error());
        const bool full = p.full();
        const uint64_t work = p.work_ns + (clock_.now_ns() - t0);
        sliced_.reset();
        written_.forget();  // cleared when the pass began: the next read-back reads the whole map
        // Tried again after the interval (a full pass) or when the next write asks for it.
        if (full) readback_pass_.ran_for(clock_.now_ns(), work, map_units(), cfg_.readback_interval_ns);
        return false;
      }
      p.walked(r->entries, node_.core.actual(), sliced_walk_.done);
    } else if (!p.has_keys()) {
      p.take_keys(node_.core.entry_keys());
    } else {
      std::vector<uint32_t> slice = p.next_slice(kSliceKeys, node_.core.actual());
      if (p.full()) {
        p.plan_missed += write_missed(node_.core.plan_of(slice));
        for (auto& v : node_.core.check_keys(std::move(slice))) p.violations.push_back(std::move(v));
      }
    }
    if (p.drift() > 0) {
      // Rare (another writer, a map replaced by hand): the whole map at once, re-observed and
      // repaired as it always was (INV-5); a full pass runs its plan and check there too.
      const bool full = p.full();
      spdlog::debug("read-back in slices found drift ({} entries): reading the whole map at once", p.drift());
      sliced_.reset();
      written_.forget();  // a short read-back must not read the written keys alone: the drift is elsewhere
      return readback(full);
    }
  }
  const uint64_t held = clock_.now_ns() - t0;
  p.work_ns += held;
  p.cpu_ns += clock_.cpu_ns() - cpu0;
  p.longest_ns = std::max(p.longest_ns, held);
  if (p.done()) finish_sliced();
  else next_slice_ns_ = clock_.now_ns() + kSliceGapNs;
  return false;
}

void Reconciler::finish_sliced() {
  SlicedReadBack p = std::move(*sliced_);
  sliced_.reset();
  metrics_.readback("whole_map");
  metrics_.set_drift_now(0);
  // Every key the map held as the core believed when the walk read it, and every key the core
  // has in the map was read or written since: confirmed, unless keys were written during the
  // pass (the short read-back that follows reads those, and confirms).
  if (written_.empty()) confirm_read_back();
  if (p.full()) node_.refresh_intents(clock_.unix_ms());
  node_.settle_intents(nullptr, retry_.empty() ? "" : last_apply_error_, clock_.unix_ms());
  const std::string what = std::string(p.full() ? "full read-back" : "short read-back (the whole map)") + " in " +
                           std::to_string(p.slices) + " slices (the longest " +
                           std::to_string(p.longest_ns / 1'000) + " us) over " +
                           std::to_string((clock_.now_ns() - p.started_ns()) / 1'000'000) + " ms";
  if (!p.full()) {
    spdlog::debug("{}: {} ms ({} ms CPU)", what, p.work_ns / 1'000'000, p.cpu_ns / 1'000'000);
    return;
  }
  if (hooks_.ends) hooks_.ends();
  if (p.plan_missed) spdlog::debug("read-back: the full plan has {} ops outstanding (written now)", p.plan_missed);
  for (auto& v : node_.core.check_named()) p.violations.push_back(std::move(v));
  report_violations(p.violations);
  readback_pass_.ran_for(clock_.now_ns(), p.work_ns, p.units, cfg_.readback_interval_ns);
  report_pass(metrics_, "readback", what, p.work_ns, p.cpu_ns);
}

// The full plan, as the oracle of the incremental one: anything it finds that the deltas left out
// is written now, through the retry queue.
size_t Reconciler::write_missed(const Plan& full_plan) {
  const uint64_t due = clock_.now_ns() - 1'000'000'000ull;  // due now: the backoff is at most 1 s
  for (const auto& op : full_plan.ops) retry_.failed(op.tid, due);
  return full_plan.ops.size();
}

// The full check's verdict: counted per invariant, logged when it changed.
void Reconciler::report_violations(const std::vector<Violation>& found) {
  std::vector<std::string> now;
  for (const auto& v : found) {
    metrics_.violation(v.invariant);
    now.push_back(v.invariant + ": " + v.message);
  }
  if (!now.empty() && now != last_violations_) spdlog::error("invariant check: {} violations, first: {}", now.size(), now.front());
  last_violations_ = std::move(now);
}

}  // namespace c2c::daemon
