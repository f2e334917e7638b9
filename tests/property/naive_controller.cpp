#include "naive_controller.hpp"

namespace c2c::property {

NaiveController::NaiveController(const ControllerSpec& s) : s_(s) {
  ladder_.push_back({});  // level 0: the static policy
  LevelAction a;
  if (s.boost) {
    a.boost = true;
    ladder_.push_back(a);
  }
  if (s.slice) {
    // Walk from `from` to `to` in steps, signed arithmetic, the last value clamped.
    const long long from = static_cast<long long>(s.slice->from), to = static_cast<long long>(s.slice->to);
    const long long dir = to > from ? 1 : -1, step = static_cast<long long>(s.slice->step);
    for (long long v = from;; v += dir * step) {
      const bool past = dir > 0 ? v >= to : v <= to;
      a.slice = static_cast<Nanos>(past ? to : v);
      ladder_.push_back(a);
      if (past) break;
    }
  }
  if (s.preferred_cpus) ladder_.push_back(a);  // the CPUs are cut per entry (action())
}

LevelAction NaiveController::action(size_t level, const std::optional<CpuSet>& allowed) const {
  LevelAction a = ladder_.at(level);
  if (s_.preferred_cpus && level == top() && level > 0 && allowed) {
    CpuSet cut;
    for (unsigned c : s_.preferred_cpus->cpus())
      if (allowed->test(c)) cut.set(c);
    if (!cut.empty()) a.preferred = cut;
  }
  return a;
}

NaiveController::Outcome NaiveController::window(Nanos now, std::optional<Nanos> p99) { return step(now, true, p99); }
NaiveController::Outcome NaiveController::tick(Nanos now) { return step(now, false, std::nullopt); }

NaiveController::Outcome NaiveController::step(Nanos now, bool is_window, std::optional<Nanos> p99) {
  if (is_window && p99) heard_ = now;
  const size_t cur = level();
  if (cur > 0) {
    // When did the level last leave 0? The last change from 0 in the list.
    Nanos left_zero = 0;
    for (size_t i = 0; i < changes_.size(); ++i)
      if (changes_[i].level > 0 && (i == 0 || changes_[i - 1].level == 0)) left_zero = changes_[i].at;
    if (now >= left_zero + s_.max_raised) {
      change(now, 0);
      return {0, "expired"};
    }
    if (!heard_ || now >= *heard_ + s_.window * s_.windows_without_signal) {
      change(now, 0);
      return {0, "no-signal"};
    }
  }
  if (!is_window || !p99) return {cur, "silent"};
  const bool cooled = changes_.empty() || now >= changes_.back().at + s_.cooldown;
  if (*p99 > s_.target_ns) {
    if (cur == top()) return {cur, "at-max"};
    if (!cooled) return {cur, "cooldown"};
    change(now, cur + 1);
    return {cur + 1, "raise"};
  }
  if (*p99 + s_.hysteresis < s_.target_ns) {
    if (cur == 0) return {cur, "at-static"};
    if (!cooled) return {cur, "cooldown"};
    change(now, cur - 1);
    return {cur - 1, "lower"};
  }
  return {cur, "in-band"};
}

}  // namespace c2c::property
