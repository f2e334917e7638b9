// property.controller (issue 46): the controller's properties CTL-1..CTL-6 (spec/state-machine.md,
// "The controller"), on random valid specs and random input sequences, and the controller against
// the independent naive model (naive_controller.hpp), decision by decision. Self-contained (the
// controller, the CPU set and this file): tests/mutants/mutate.py controller builds it with each seeded
// bug of tests/mutants/controller.tsv.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "core/controller.hpp"
#include "core/core.hpp"
#include "naive_controller.hpp"

namespace c2c::property {
namespace {

constexpr Nanos kMs = 1'000'000;

rc::Gen<ControllerSpec> gen_spec() {
  return rc::gen::exec([] {
    ControllerSpec s;
    s.target = *rc::gen::element(ControllerTarget::RunDelayP99, ControllerTarget::StepP99);
    s.target_ns = *rc::gen::inRange<Nanos>(1, 11) * kMs;
    s.hysteresis = *rc::gen::inRange<Nanos>(0, s.target_ns);
    s.window = *rc::gen::element<Nanos>(10 * kMs, 100 * kMs, 1000 * kMs);
    s.cooldown = s.window * *rc::gen::inRange<Nanos>(1, 5);
    s.max_raised = s.cooldown * *rc::gen::inRange<Nanos>(1, 12);
    s.windows_without_signal = *rc::gen::inRange<uint32_t>(1, 6);
    s.boost = *rc::gen::arbitrary<bool>();
    if (*rc::gen::arbitrary<bool>()) {
      const Nanos from = *rc::gen::inRange<Nanos>(1, 21) * kMs, to = *rc::gen::inRange<Nanos>(1, 21) * kMs;
      if (from != to) {
        const Nanos span = from > to ? from - to : to - from;
        s.slice = ControllerSlice{from, to, std::max<Nanos>(*rc::gen::inRange<Nanos>(1, span + 1), (span + 15) / 16)};
      }
    }
    if (*rc::gen::arbitrary<bool>()) s.preferred_cpus = CpuSet::range(*rc::gen::inRange(0u, 8u), *rc::gen::inRange(8u, 16u));
    if (!s.boost && !s.slice && !s.preferred_cpus) s.boost = true;
    return s;
  });
}

struct Input {
  Nanos dt = 0;
  bool window = true;
  std::optional<Nanos> signal;
};

// Signals aimed at the decision boundaries: far above, just above, at, in the band, at the
// band's floor, below it, and none.
rc::Gen<std::optional<Nanos>> gen_signal(const ControllerSpec& s) {
  const Nanos t = s.target_ns, floor = s.target_ns - s.hysteresis;
  return rc::gen::oneOf(rc::gen::just(std::optional<Nanos>{}), rc::gen::just(std::optional<Nanos>{3 * t}),
                        rc::gen::just(std::optional<Nanos>{t + 1}), rc::gen::just(std::optional<Nanos>{t}),
                        rc::gen::just(std::optional<Nanos>{floor}),
                        rc::gen::just(std::optional<Nanos>{floor > 0 ? floor - 1 : 0}),
                        rc::gen::just(std::optional<Nanos>{0}));
}

std::vector<Input> gen_inputs(const ControllerSpec& s) {
  const size_t n = *rc::gen::inRange<size_t>(1, 80);
  std::vector<Input> in;
  for (size_t i = 0; i < n; ++i) {
    Input x;
    // Mostly one window apart; sometimes at once, sometimes after a long silence.
    x.dt = *rc::gen::weightedOneOf<Nanos>({{6, rc::gen::just(s.window)},
                                            {1, rc::gen::just<Nanos>(0)},
                                            {2, rc::gen::inRange<Nanos>(0, 4 * s.cooldown + 1)},
                                            {1, rc::gen::just(s.max_raised)}});
    x.window = *rc::gen::inRange(0, 5) != 0;
    if (x.window) x.signal = *gen_signal(s);
    in.push_back(x);
  }
  return in;
}

bool forced(ControllerRule r) { return r == ControllerRule::Expired || r == ControllerRule::NoSignal; }

// Runs the inputs through decide() and checks CTL-1..CTL-6 after every step; with `naive`, also
// the naive model's level and rule. Returns the first failure, "" when none.
std::string run(const ControllerSpec& s, const std::vector<Input>& inputs, const std::optional<CpuSet>& allowed,
                bool constant_signal) {
  ControllerState st;
  NaiveController naive(s);
  Nanos now = 1'000'000'000;  // not 0: a state at time 0 must not look like "never"
  // The test's own account of the times the properties speak of, kept apart from the
  // controller's state (a bug in that state must not hide itself).
  std::optional<Nanos> last_change, heard;
  Nanos left_zero = 0;
  int direction = 0;  // CTL-3: +1 rising, -1 falling since the last forced return to 0
  std::string disagreement;
  if (naive.top() != max_level(s)) return "naive ladder has " + std::to_string(naive.top()) + " levels";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& x = inputs[i];
    now += x.dt;
    const ControllerDecision d = decide(s, st, ControllerInput{now, x.window, x.window ? x.signal : std::nullopt});
    const std::string at = "step " + std::to_string(i) + " (" + to_string(d.rule) + ", " + d.reason + "): ";
    // The naive model steps too; it is compared after the properties, so that a seeded bug is
    // named by the property it breaks (tests/mutants/controller.tsv).
    const auto n = x.window ? naive.window(now, x.signal) : naive.tick(now);
    // CTL-1: within bounds; its action within the spec and the allowed CPUs (INV-6).
    if (d.next.level > max_level(s)) return at + "CTL-1: level above the highest";
    const LevelAction a = level_action(s, d.next.level, allowed);
    if (d.next.level == 0 && !(a == LevelAction{})) return at + "CTL-1: level 0 is not the static policy";
    if (a.boost && !s.boost) return at + "CTL-1: boost without the action";
    if (a.slice && (!s.slice || *a.slice < std::min(s.slice->from, s.slice->to) || *a.slice > std::max(s.slice->from, s.slice->to)))
      return at + "CTL-1: slice outside [from, to]";
    if (a.preferred && (!allowed || !a.preferred->subset_of(*allowed) || !a.preferred->subset_of(*s.preferred_cpus)))
      return at + "CTL-1: preferred CPUs outside the allowed ones (INV-6)";
    if (!(a == naive.action(d.next.level, allowed))) return at + "CTL-1: the level's action differs from the ladder";
    const bool changed = d.next.level != st.level;
    if (x.window && x.signal) heard = now;
    if (st.level == 0 && d.next.level > 0) left_zero = now;
    // CTL-3 first: a turn under a constant signal is usually also too early for CTL-2.
    if (constant_signal && changed) {
      const int dir = d.next.level > st.level ? 1 : -1;
      if (forced(d.rule)) direction = 0;
      else if (direction != 0 && dir != direction) return at + "CTL-3: the level turned under a constant signal";
      else direction = dir;
    }
    // CTL-2: two changes at least a cooldown apart, unless the second is a forced return to 0.
    if (changed && last_change && now - *last_change < s.cooldown && !(forced(d.rule) && d.next.level == 0))
      return at + "CTL-2: changed " + std::to_string(now - *last_change) + " ns after the last change";
    // CTL-4: a raised level expires: never at or past maxRaised since it left 0.
    if (d.next.level > 0 && now - left_zero >= s.max_raised) return at + "CTL-4: raised past maxRaised";
    // CTL-5: no signal for windowsWithoutSignal windows: back to level 0.
    if (d.next.level > 0 && (!heard || now - *heard >= s.window * s.windows_without_signal))
      return at + "CTL-5: raised without a signal";
    // CTL-6: below target - hysteresis, past the cooldown: one level down (or a forced 0).
    if (x.window && x.signal && *x.signal + s.hysteresis < s.target_ns && st.level > 0 &&
        (!st.last_change || now - *st.last_change >= s.cooldown) && d.next.level != st.level - 1 &&
        !(forced(d.rule) && d.next.level == 0))
      return at + "CTL-6: a low signal did not step the level down";
    if ((n.level != d.next.level || std::string(n.rule) != to_string(d.rule)) && disagreement.empty())
      disagreement = at + "naive model says level " + std::to_string(n.level) + " by " + n.rule;
    if (changed) last_change = now;
    st = d.next;
  }
  // A property's failure anywhere in the run is reported before the naive model's disagreement,
  // so that a seeded bug is named by the property it breaks (tests/mutants/controller.tsv).
  return disagreement;
}

std::optional<CpuSet> gen_allowed() {
  if (*rc::gen::inRange(0, 5) == 0) return std::nullopt;
  return CpuSet::range(*rc::gen::inRange(0u, 12u), *rc::gen::inRange(12u, 24u));
}

RC_GTEST_PROP(Controller, PropertiesHoldAndTheNaiveModelAgrees, ()) {
  const ControllerSpec s = *gen_spec();
  RC_PRE(!validate_controller(s, "c", false, 3'600'000'000'000ull));
  const std::string failure = run(s, gen_inputs(s), gen_allowed(), false);
  RC_ASSERT(failure == "");
}

// CTL-3 (no oscillation): one signal value for the whole run, a window every window.
RC_GTEST_PROP(Controller, NoOscillationUnderAConstantSignal, ()) {
  const ControllerSpec s = *gen_spec();
  RC_PRE(!validate_controller(s, "c", false, 3'600'000'000'000ull));
  const auto signal = *gen_signal(s);
  std::vector<Input> in(*rc::gen::inRange<size_t>(1, 120), Input{s.window, true, signal});
  const std::string failure = run(s, in, gen_allowed(), true);
  RC_ASSERT(failure == "");
}

// CTL-6's liveness: a signal that stays low brings any level back to 0 within level * cooldown.
RC_GTEST_PROP(Controller, ALowSignalStepsAllTheWayDown, ()) {
  const ControllerSpec s = *gen_spec();
  RC_PRE(!validate_controller(s, "c", false, 3'600'000'000'000ull));
  RC_PRE(s.target_ns > s.hysteresis + 1);
  ControllerState st;
  Nanos now = 1'000'000'000;
  // Raise to the top with a high signal, one cooldown apart (before maxRaised can end it).
  while (st.level < max_level(s) && (st.level == 0 || now + s.cooldown - st.raised_since < s.max_raised)) {
    now += s.cooldown;
    st = decide(s, st, {now, true, 2 * s.target_ns}).next;
  }
  const uint32_t raised = st.level;
  RC_PRE(raised > 0);
  for (uint32_t i = 0; i < raised && st.level > 0; ++i) {
    now += s.cooldown;
    st = decide(s, st, {now, true, 0}).next;
  }
  if (st.level != 0)
    RC_FAIL("CTL-6: a low signal for " + std::to_string(raised) + " cooldowns left level " + std::to_string(st.level) +
            " of " + std::to_string(raised));
}


// The level acts (spec/state-machine.md §10, "Levels"): through the core, after every window and
// tick, the controlled thread's desired entry is its static entry with the naive ladder's action
// for the core's level on top (boost: latency-critical with the node's lease bound; the slice; the
// preferred CPUs cut to the entry's allowed ones, INV-6), allowed never changes, and the core's
// own checker finds nothing. A thread of another policy keeps its entry.
RC_GTEST_PROP(Controller, TheLevelActsOnTheEntryWithinItsAllowedCpus, ()) {
  ControllerSpec s = *gen_spec();
  RC_PRE(!validate_controller(s, "c", false, 3'600'000'000'000ull));
  Core core;
  auto apply = [&](const Event& e) {
    const ApplyResult r = core.apply(e);
    if (!r.ok()) RC_FAIL("refused: " + r.field + ": " + r.message);
  };
  NodeInfo n;
  n.name = "n";
  n.cpus = CpuSet::range(0, 15);
  apply(NodeInfoEvent{n});
  NodeSchedulingPolicy p;
  p.name = "controlled";
  p.generation = 1;
  p.node_names = {"n"};
  p.command_regex = "^w$";
  p.controller = s;
  apply(NodePolicyUpsert{p});
  NodeSchedulingPolicy q = p;
  q.name = "other";
  q.command_regex = "^o$";
  q.controller.reset();
  apply(NodePolicyUpsert{q});
  Task t;
  t.key = {7, 70};
  t.tgid = 7;
  t.comm = "w";
  t.cgroup = "/w";
  if (*rc::gen::arbitrary<bool>()) t.cpuset = CpuSet::range(*rc::gen::inRange(0u, 8u), *rc::gen::inRange(8u, 16u));
  apply(TaskSeen{t});
  Task o = t;
  o.key = {8, 80};
  o.tgid = 8;
  o.comm = "o";
  apply(TaskSeen{o});
  auto timeless = [](RuntimeValue v) {
    v.generation = 0;
    v.boost_until = 0;
    return v;
  };
  const RuntimeValue base = timeless(core.desired().at(7).value);
  const RuntimeValue other = timeless(core.desired().at(8).value);
  const std::optional<CpuSet> allowed = (base.flags & kFlagAllowedCpus) ? std::optional<CpuSet>(base.allowed) : std::nullopt;
  NaiveController naive(s);
  Nanos now = 1'000'000'000;
  for (const Input& x : gen_inputs(s)) {
    now += x.dt;
    if (x.dt > 0) apply(TimeAdvance{now});
    if (x.window) apply(ControllerWindow{PolicyKind::Node, "controlled", x.signal});
    const uint32_t level = core.controllers().at(0).state.level;
    // The test's own account of what a level writes, from the naive ladder.
    RuntimeValue want = base;
    const LevelAction a = naive.action(level, allowed);
    if (a.boost) {
      want.exec_class = ExecClass::LatencyCritical;
      want.flags |= kFlagBoost;
      want.max_boost = n.default_max_boost;
    }
    if (a.slice) {
      want.slice_ns = *a.slice;
      want.flags |= kFlagCustomSlice;
    }
    if (a.preferred) {
      want.preferred = *a.preferred;
      want.flags |= kFlagPreferredCpus;
    }
    const RuntimeValue got = timeless(core.desired().at(7).value);
    const std::string at = "level " + std::to_string(level) + " at " + std::to_string(now) + ": ";
    if (!got.preferred.subset_of(got.allowed))
      RC_FAIL(at + "INV-6: preferred CPUs " + got.preferred.to_string() + " outside allowed " + got.allowed.to_string());
    if (got.allowed != base.allowed) RC_FAIL(at + "a level changed the allowed CPUs");
    if (!(got == want))
      RC_FAIL(at + "the entry is not the static entry with the level's action (class " +
              std::to_string(static_cast<int>(got.exec_class)) + ", slice " + std::to_string(got.slice_ns) +
              ", flags " + std::to_string(got.flags) + "; want class " +
              std::to_string(static_cast<int>(want.exec_class)) + ", slice " + std::to_string(want.slice_ns) +
              ", flags " + std::to_string(want.flags) + ")");
    if (!(timeless(core.desired().at(8).value) == other)) RC_FAIL(at + "another policy's entry changed");
    const auto v = core.check();
    if (!v.empty()) RC_FAIL(at + v.front().invariant + ": " + v.front().message);
  }
}

}  // namespace
}  // namespace c2c::property
