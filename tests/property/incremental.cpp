#include "incremental.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "compare.hpp"

namespace c2c::property {

namespace {

const char* kind_text(PlanOp::Kind k) { return to_string(k); }

}  // namespace

std::optional<std::string> IncrementalOracle::step(Core& core, const Event& e) {
  std::ostringstream os;

  // 1. The trace's core: the delta against the full plan, as the trace leaves the map.
  const Plan full = core.plan();
  const Plan delta = core.take_plan_delta();
  std::map<uint32_t, const PlanOp*> full_ops;
  std::map<uint32_t, Slot> now;
  for (const auto& op : full.ops) {
    full_ops[op.tid] = &op;
    now[op.tid] = Slot{false, op.kind, op.value};
  }
  for (uint32_t tid : full.deferred_deletes) now[tid] = Slot{true, PlanOp::Kind::Delete, {}};
  std::set<uint32_t> in_delta;
  for (const auto& op : delta.ops) {
    in_delta.insert(op.tid);
    auto f = full_ops.find(op.tid);
    if (f == full_ops.end()) {
      os << "delta has " << kind_text(op.kind) << " tid " << op.tid << " which the full plan does not\n";
    } else if (f->second->kind != op.kind || f->second->value != op.value || f->second->reason != op.reason) {
      os << "delta op for tid " << op.tid << " (" << kind_text(op.kind) << ", " << op.reason
         << ") differs from the full plan's (" << kind_text(f->second->kind) << ", " << f->second->reason << ")\n";
    }
  }
  std::set<uint32_t> full_deferred(full.deferred_deletes.begin(), full.deferred_deletes.end());
  for (uint32_t tid : delta.deferred_deletes) {
    in_delta.insert(tid);
    if (!full_deferred.count(tid)) os << "delta defers tid " << tid << " which the full plan does not\n";
  }
  // Every tid whose op appeared or changed since the previous step is in the delta.
  for (const auto& [tid, slot] : now) {
    auto was = last_plan_.find(tid);
    if ((was == last_plan_.end() || !(was->second == slot)) && !in_delta.count(tid))
      os << "the full plan's op for tid " << tid << " changed (" << (slot.deferred ? "deferred" : kind_text(slot.kind))
         << ") but the delta does not name it\n";
  }
  last_plan_ = std::move(now);

  // 2. The engine's loop: a map written with deltas only, then bpf_synced.
  engine_.apply(e);
  // A read-back: the map is what was observed.
  if (std::holds_alternative<BpfObserved>(e)) map_ = {engine_.actual().begin(), engine_.actual().end()};
  const Plan engine_delta = engine_.take_plan_delta();
  for (const auto& op : engine_delta.ops) {
    if (op.kind == PlanOp::Kind::Delete) map_.erase(op.tid);
    else map_[op.tid] = op.value;
  }
  // The full plan's result: actual with every op executed (deferred deletes stay).
  std::map<uint32_t, RuntimeValue> want(engine_.actual().begin(), engine_.actual().end());
  for (const auto& op : engine_.plan().ops) {
    if (op.kind == PlanOp::Kind::Delete) want.erase(op.tid);
    else want[op.tid] = op.value;
  }
  if (map_ != want) {
    os << "engine loop: the map written with deltas differs from the full plan's result:";
    for (const auto& [tid, v] : want)
      if (auto m = map_.find(tid); m == map_.end() || m->second != v) os << " missing/stale tid " << tid;
    for (const auto& [tid, v] : map_)
      if (!want.count(tid)) os << " extra tid " << tid;
    os << "\n";
  }
  engine_.apply(BpfSynced{});

  if (os.str().empty()) return std::nullopt;
  return os.str();
}

std::optional<std::string> IncrementalOracle::check_step_complete(const std::vector<Violation>& full,
                                                                  const std::vector<Violation>& step) {
  std::set<std::pair<std::string, uint32_t>> now, found;
  for (const auto& v : full) now.emplace(v.invariant, v.tid);
  for (const auto& v : step) found.emplace(v.invariant, v.tid);
  std::ostringstream os;
  for (const auto& key : now)
    if (!last_full_.count(key) && !found.count(key))
      os << "check_step() missed " << key.first << " on tid " << key.second << " that check() reports\n";
  last_full_ = std::move(now);
  if (os.str().empty()) return std::nullopt;
  return os.str();
}

std::optional<std::string> IncrementalOracle::sliced(const Core& core, const std::vector<Violation>& full,
                                                     size_t slice) {
  std::vector<uint32_t> keys = core.entry_keys();
  std::ostringstream os;
  if (std::set<uint32_t>(keys.begin(), keys.end()).size() != keys.size()) os << "entry_keys() names a tid twice\n";
  std::sort(keys.begin(), keys.end());
  Plan joined;
  std::set<std::tuple<std::string, uint32_t, std::string>> found, want;
  auto add = [&](const std::vector<Violation>& vs) {
    for (const auto& v : vs) found.emplace(v.invariant, v.tid, v.message);
  };
  for (size_t at = 0; at < keys.size(); at += slice) {
    // Each slice out of order, as the daemon hands them over: plan_of sorts.
    std::vector<uint32_t> part(keys.begin() + at, keys.begin() + std::min(keys.size(), at + slice));
    std::reverse(part.begin(), part.end());
    Plan p = core.plan_of(part);
    joined.ops.insert(joined.ops.end(), p.ops.begin(), p.ops.end());
    joined.deferred_deletes.insert(joined.deferred_deletes.end(), p.deferred_deletes.begin(), p.deferred_deletes.end());
    add(core.check_keys(part));
  }
  add(core.check_named());
  for (const auto& v : full) want.emplace(v.invariant, v.tid, v.message);
  const Plan whole = core.plan();
  if (joined.ops.size() != whole.ops.size()) os << "sliced plan has " << joined.ops.size() << " ops, plan() " << whole.ops.size() << "\n";
  for (size_t i = 0; i < std::min(joined.ops.size(), whole.ops.size()); ++i) {
    const auto &a = joined.ops[i], &b = whole.ops[i];
    if (a.tid != b.tid || a.kind != b.kind || a.value != b.value || a.reason != b.reason) {
      os << "sliced plan op " << i << " (tid " << a.tid << ") differs from plan()'s (tid " << b.tid << ")\n";
      break;
    }
  }
  if (joined.deferred_deletes != whole.deferred_deletes) os << "sliced plan defers other tids than plan()\n";
  for (const auto& w : want)
    if (!found.count(w)) os << "sliced check misses " << std::get<0>(w) << " on tid " << std::get<1>(w) << "\n";
  for (const auto& f : found)
    if (!want.count(f)) os << "sliced check reports " << std::get<0>(f) << " on tid " << std::get<1>(f) << " that check() does not\n";
  if (os.str().empty()) return std::nullopt;
  return os.str();
}

}  // namespace c2c::property
