// The closed-loop controller (controller.hpp; spec/state-machine.md, "The controller").
#include "core/controller.hpp"

#include <algorithm>

#include "core/model.hpp"

namespace c2c {

const char* to_string(ControllerTarget t) {
  return t == ControllerTarget::StepP99 ? "stepP99" : "runDelayP99";
}

const char* to_string(ControllerRule r) {
  static constexpr const char* kNames[] = {"expired",  "no-signal", "raise",     "lower",  "at-max",
                                           "cooldown", "in-band",   "at-static", "silent"};
  return kNames[static_cast<size_t>(r)];
}

uint32_t slice_values(const ControllerSpec& s) {
  if (!s.slice || s.slice->step == 0) return 0;
  const Nanos span = s.slice->from > s.slice->to ? s.slice->from - s.slice->to : s.slice->to - s.slice->from;
  // from, from±step, ..., and `to` itself when the steps do not land on it.
  return static_cast<uint32_t>((span + s.slice->step - 1) / s.slice->step) + 1;
}

uint32_t max_level(const ControllerSpec& s) {
  return (s.boost ? 1u : 0u) + slice_values(s) + (s.preferred_cpus ? 1u : 0u);
}

LevelAction level_action(const ControllerSpec& s, uint32_t level, const std::optional<CpuSet>& allowed) {
  LevelAction a;
  level = std::min(level, max_level(s));
  if (level == 0) return a;
  // The levels take the actions in order and keep what the lower levels took: boost first (the
  // cheapest to undo: its lease runs out by itself), then the slice's values, then the CPUs.
  uint32_t rest = level;
  if (s.boost) {
    a.boost = true;
    --rest;
  }
  const uint32_t n = slice_values(s);
  if (n > 0 && rest > 0) {
    const uint32_t i = std::min(rest, n) - 1;  // the i-th value from `from`
    const Nanos d = static_cast<Nanos>(i) * s.slice->step;
    a.slice = s.slice->from <= s.slice->to ? std::min(s.slice->from + d, s.slice->to)
                                           : (d >= s.slice->from - s.slice->to ? s.slice->to : s.slice->from - d);
    rest -= std::min(rest, n);
  }
  if (s.preferred_cpus && rest > 0 && allowed) {
    // INV-6: never outside the entry's allowed CPUs; a cut that leaves nothing is skipped, as the
    // topology preferences are (spec/state-machine.md, "CPU sets").
    CpuSet cut = *s.preferred_cpus & *allowed;
    if (!cut.empty()) a.preferred = cut;
  }
  return a;
}

namespace {

std::string ns_text(Nanos ns) {
  if (ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000) + "s";
  if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
  return std::to_string(ns) + "ns";
}

ControllerDecision to_level(ControllerState next, uint32_t level, Nanos now, ControllerRule rule, std::string reason) {
  if (next.level == 0 && level > 0) next.raised_since = now;
  next.level = level;
  next.last_change = now;
  return {next, rule, std::move(reason)};
}

}  // namespace

ControllerDecision decide(const ControllerSpec& s, const ControllerState& state, const ControllerInput& in) {
  ControllerState next = state;
  const char* what = to_string(s.target);
  if (in.window && in.signal) next.last_signal = in.now;
  const std::string from = "level " + std::to_string(state.level);

  // Safety first, whatever the signal says and whatever the cooldown: a raised level that has
  // lasted maxRaised ends (CTL-4), and so does one whose signal has gone quiet (CTL-5).
  if (state.level > 0 && in.now - state.raised_since >= s.max_raised)
    return to_level(next, 0, in.now, ControllerRule::Expired,
                    from + " -> 0: raised for " + ns_text(in.now - state.raised_since) + " >= maxRaised " +
                        ns_text(s.max_raised));
  const Nanos silence = s.window * s.windows_without_signal;
  if (state.level > 0 && (!next.last_signal || in.now - *next.last_signal >= silence))
    return to_level(next, 0, in.now, ControllerRule::NoSignal,
                    from + " -> 0: no signal for " + std::to_string(s.windows_without_signal) + " windows (" +
                        ns_text(silence) + "), back to the static policy");
  if (!in.window || !in.signal) return {next, ControllerRule::Silent, from + ": no signal"};

  const Nanos v = *in.signal;
  const bool cooled = !state.last_change || in.now - *state.last_change >= s.cooldown;
  const std::string seen = what + std::string(" ") + ns_text(v);
  if (v > s.target_ns) {
    const std::string why = seen + " > target " + ns_text(s.target_ns);
    if (state.level >= max_level(s)) return {next, ControllerRule::AtMax, from + " (highest): " + why};
    if (!cooled) return {next, ControllerRule::Cooldown, from + ": " + why + ", cooldown " + ns_text(s.cooldown)};
    return to_level(next, state.level + 1, in.now, ControllerRule::Raise,
                    from + " -> " + std::to_string(state.level + 1) + ": " + why);
  }
  const Nanos floor = s.target_ns - s.hysteresis;  // validation: hysteresis < target
  if (v < floor) {
    const std::string why = seen + " < target - hysteresis " + ns_text(floor);
    if (state.level == 0) return {next, ControllerRule::AtStatic, from + " (static): " + why};
    if (!cooled) return {next, ControllerRule::Cooldown, from + ": " + why + ", cooldown " + ns_text(s.cooldown)};
    return to_level(next, state.level - 1, in.now, ControllerRule::Lower,
                    from + " -> " + std::to_string(state.level - 1) + ": " + why);
  }
  return {next, ControllerRule::InBand,
          from + ": " + seen + " within [" + ns_text(floor) + ", " + ns_text(s.target_ns) + "]"};
}

std::optional<Nanos> controller_deadline(const ControllerSpec& s, const ControllerState& state) {
  if (state.level == 0) return std::nullopt;
  Nanos at = state.raised_since + s.max_raised;
  if (state.last_signal) at = std::min(at, *state.last_signal + s.window * s.windows_without_signal);
  return at;
}

std::optional<ControllerFieldError> validate_controller(const ControllerSpec& s, const std::string& prefix,
                                                        bool boosting_class, Nanos max_boost) {
  auto err = [&](const std::string& f, std::string m) {
    return std::optional<ControllerFieldError>(ControllerFieldError{prefix + "." + f, std::move(m)});
  };
  const std::string target = std::string("target.") + to_string(s.target);
  if (s.target_ns < kControllerMinTargetNs || s.target_ns > kControllerMaxTargetNs)
    return err(target, "must be between 1us and 1m");
  if (s.hysteresis >= s.target_ns)
    return err("hysteresis", "must be less than the target (" + ns_text(s.target_ns) +
                                 "): the level steps down only below target - hysteresis, which must be above 0");
  if (s.window < kControllerMinWindowNs || s.window > kControllerMaxDurationNs)
    return err("window", "must be between 10ms and 1h");
  if (s.cooldown < s.window || s.cooldown > kControllerMaxDurationNs)
    return err("cooldown", "must be at least one window (" + ns_text(s.window) +
                               ": a window is the finest a decision can be) and at most 1h");
  if (s.max_raised < s.cooldown || s.max_raised > kControllerMaxDurationNs)
    return err("maxRaised", "must be at least the cooldown (" + ns_text(s.cooldown) +
                                ": else no raised level lasts to its next step) and at most 1h");
  if (s.windows_without_signal < 1 || s.windows_without_signal > kControllerMaxSilentWindows)
    return err("windowsWithoutSignal", "must be between 1 and 1000");
  if (!s.boost && !s.slice && !s.preferred_cpus)
    return err("actions", "allows nothing: set boost, slice or preferredCPUs");
  if (s.boost && boosting_class)
    return err("actions.boost", "the threads' static class already boosts; a raised level cannot add a boost");
  if (s.boost && s.max_raised > max_boost)
    return err("maxRaised", "must not exceed the boost bound (" + ns_text(max_boost) +
                                ") when boost is an action (INV-8)");
  if (s.slice) {
    const auto& sl = *s.slice;
    for (auto [f, v] : {std::pair{"actions.slice.from", sl.from}, std::pair{"actions.slice.to", sl.to}})
      if (v < kMinSliceNs || v > kMaxSliceNs) return err(f, "must be between 10us and 100ms");
    if (sl.from == sl.to) return err("actions.slice.to", "equals actions.slice.from: the slice would never move");
    const Nanos span = sl.from > sl.to ? sl.from - sl.to : sl.to - sl.from;
    if (sl.step == 0 || sl.step > span)
      return err("actions.slice.step", "must be above 0 and at most |to - from| (" + ns_text(span) + ")");
    if (slice_values(s) > kControllerMaxSliceValues)
      return err("actions.slice.step", "gives " + std::to_string(slice_values(s)) + " slice values, more than " +
                                           std::to_string(kControllerMaxSliceValues));
  }
  if (s.preferred_cpus && s.preferred_cpus->empty()) return err("actions.preferredCPUs", "is empty");
  return std::nullopt;
}

}  // namespace c2c
