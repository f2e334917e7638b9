// The closed-loop controller of issue 46 (spec/state-machine.md, "The controller"): a pure
// function of (the policy's spec.controller, one signal window, the current level) to (the new
// level, the rule that decided, a reason). No clock, no I/O: time comes in with the window, so a
// trace replays every decision exactly. Its properties CTL-1..CTL-6 are stated in the spec and
// checked by tests/property/controller_test.cpp against an independent model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/cpuset.hpp"

namespace c2c {

using Nanos = uint64_t;

// Slice action: raised levels walk the slice from `from` towards `to` by `step` (the last one
// clamped to `to`). Either direction: a busy loop wants a longer slice, a thread kept waiting
// behind its own group a shorter one; the operator says which.
struct ControllerSlice {
  Nanos from = 0;
  Nanos to = 0;
  Nanos step = 0;
  bool operator==(const ControllerSlice&) const = default;
};

enum class ControllerTarget : uint8_t {
  RunDelayP99 = 0,  // p99 of the run delay (time runnable, not running) of the controlled threads
  StepP99 = 1,      // p99 of the workload's own step latency, as its adapter reports it
};
const char* to_string(ControllerTarget t);

// spec.controller of a DRA execution policy or a node scheduling policy (absent: off).
struct ControllerSpec {
  ControllerTarget target = ControllerTarget::RunDelayP99;
  Nanos target_ns = 0;           // the bound on the signal: target.runDelayP99 or target.stepP99
  std::string role;              // DRA: the taskRoles[].name whose threads are measured and acted on
  // Allowed actions, in the order the levels take them: boost, then each slice value, then the
  // preferred CPUs. Level 0 is always the static policy.
  bool boost = false;                     // actions.boost
  std::optional<ControllerSlice> slice;   // actions.slice
  std::optional<CpuSet> preferred_cpus;   // actions.preferredCPUs (cut to the entry's allowed CPUs)
  Nanos cooldown = 0;            // at least this long between two level changes (CTL-2)
  Nanos hysteresis = 0;          // step down only below target - hysteresis (CTL-3, CTL-6)
  Nanos max_raised = 0;          // maxRaised: the longest time above level 0 (CTL-4)
  Nanos window = 0;              // the signal window's length
  uint32_t windows_without_signal = 0;  // back to level 0 after this many windows without a signal (CTL-5)
  bool operator==(const ControllerSpec&) const = default;
};

// Bounds of the spec (validation refuses anything outside them).
inline constexpr Nanos kControllerMinTargetNs = 1'000;                  // 1 us
inline constexpr Nanos kControllerMaxTargetNs = 60'000'000'000ull;      // 1 min
inline constexpr Nanos kControllerMinWindowNs = 10'000'000;             // 10 ms
inline constexpr Nanos kControllerMaxDurationNs = 3'600'000'000'000ull; // 1 h (window, cooldown, maxRaised)
inline constexpr uint32_t kControllerMaxSilentWindows = 1000;
inline constexpr uint32_t kControllerMaxSliceValues = 16;

// The number of slice values the slice action walks (0 without one).
uint32_t slice_values(const ControllerSpec& s);
// The highest level: one per allowed action value (boost 1, the slice's values, preferred 1).
uint32_t max_level(const ControllerSpec& s);

// What a level does to the static entry: nothing at level 0.
struct LevelAction {
  bool boost = false;
  std::optional<Nanos> slice;
  std::optional<CpuSet> preferred;  // within `allowed` (INV-6); unset when the cut leaves nothing
  bool operator==(const LevelAction&) const = default;
};
// `allowed`: the entry's allowed CPUs (nullopt: not carried, then preferredCPUs is not applied:
// without a known envelope nothing says the CPUs are the task's).
LevelAction level_action(const ControllerSpec& s, uint32_t level, const std::optional<CpuSet>& allowed);

// The controller's state for one policy: observed state, lost on a daemon restart (level 0).
struct ControllerState {
  uint32_t level = 0;
  std::optional<Nanos> last_change;  // when the level last changed
  Nanos raised_since = 0;            // when it left level 0 (meaningful while level > 0)
  std::optional<Nanos> last_signal;  // end of the last window that carried a signal
  bool operator==(const ControllerState&) const = default;
};

// One input: a window that ended at `now` with a signal (its p99) or without one, or a tick (time
// passed, no window: only expiry and the fallback act).
struct ControllerInput {
  Nanos now = 0;
  bool window = false;
  std::optional<Nanos> signal;  // only for a window
};

// Rules, first match wins. Their names are what `get decisions` and traces show.
enum class ControllerRule : uint8_t {
  Expired = 0,    // CTL-4: maxRaised reached, back to level 0
  NoSignal = 1,   // CTL-5: windowsWithoutSignal windows without a signal, back to level 0 (fail closed)
  Raise = 2,      // signal > target: one level up
  Lower = 3,      // signal < target - hysteresis: one level down (CTL-6)
  AtMax = 4,      // signal > target at the highest level: hold
  Cooldown = 5,   // a change is due but the cooldown has not passed: hold (CTL-2)
  InBand = 6,     // target - hysteresis <= signal <= target: hold (CTL-3)
  AtStatic = 7,   // signal below target at level 0: hold
  Silent = 8,     // a window without a signal (or a tick) and nothing due: hold
};
const char* to_string(ControllerRule r);

struct ControllerDecision {
  ControllerState next;
  ControllerRule rule = ControllerRule::Silent;
  std::string reason;  // one line with the values that decided
  bool operator==(const ControllerDecision&) const = default;
};

// The controller. Pure and total for a valid spec.
ControllerDecision decide(const ControllerSpec& s, const ControllerState& state, const ControllerInput& in);

// The earliest time at which a tick changes the state (expiry or fallback), if any: the core's
// next_deadline() includes it, so the daemon wakes for it.
std::optional<Nanos> controller_deadline(const ControllerSpec& s, const ControllerState& state);

// Validation (errors name the field under `prefix`, e.g. "spec.controller.cooldown").
// `boosting_class`: the static class of the threads it acts on already boosts; `max_boost`: the
// policy's bound on a boost (INV-8), which maxRaised may not exceed when boost is an action.
struct ControllerFieldError {
  std::string field;
  std::string message;
};
std::optional<ControllerFieldError> validate_controller(const ControllerSpec& s, const std::string& prefix,
                                                        bool boosting_class, Nanos max_boost);

}  // namespace c2c
