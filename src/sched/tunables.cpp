#include "sched/tunables.hpp"

#include <linux/types.h>

#include <charconv>
#include <cstddef>

#include "claim2core_abi.h"
#include "c2c_guards.h"
#include "host/bpf_rodata.hpp"

namespace c2c::sched {

const std::vector<TunableSpec>& tunable_specs() {
  static const std::vector<TunableSpec> specs = {
      {"boost_window_ns", C2C_BOOST_WINDOW_DEFAULT_NS, C2C_BOOST_WINDOW_MIN_NS, C2C_BOOST_WINDOW_MAX_NS,
       "the window of each CPU's boost budget (INV-8)"},
      {"boost_budget_pct", C2C_BOOST_BUDGET_DEFAULT_PCT, C2C_BOOST_BUDGET_MIN_PCT, C2C_BOOST_BUDGET_MAX_PCT,
       "the share of each window a CPU may spend on boosted tasks (INV-8)"},
      {"norm_starve_ns", C2C_NORM_STARVE_DEFAULT_NS, C2C_STARVE_MIN_NS, C2C_STARVE_MAX_NS,
       "how long the normal queue may wait before it is served first (INV-8)"},
      {"bg_starve_ns", C2C_BG_STARVE_DEFAULT_NS, C2C_STARVE_MIN_NS, C2C_STARVE_MAX_NS,
       "how long the background queue may wait before it is served first (INV-8)"},
      {"rescue_slice_ns", C2C_RESCUE_SLICE_DEFAULT_NS, C2C_RESCUE_SLICE_MIN_NS, C2C_RESCUE_SLICE_MAX_NS,
       "the slice of a run a starvation rescue gave the CPU"},
      {"prefer_spill_ns", C2C_PREFER_SPILL_DEFAULT_NS, 0, C2C_WAIT_BOUND_MAX_NS,
       "how long a task waits for a preferred CPU before another CPU of allowed takes it (INV-6)"},
      {"yield_after_ns", C2C_YIELD_AFTER_DEFAULT_NS, 0, C2C_WAIT_BOUND_MAX_NS,
       "how long a higher class waits before a background run yields its CPU at the tick"},
      {"untracked_long_slice_ns", C2C_UNTRACKED_LONG_SLICE_DEFAULT_NS, C2C_UNTRACKED_LONG_SLICE_MIN_NS,
       C2C_UNTRACKED_LONG_SLICE_MAX_NS,
       "the slice of a task without a policy on a node without policies, and a sleeper's vtime credit"},
  };
  return specs;
}

namespace {

const TunableSpec* find_spec(const std::string& name) {
  for (const auto& s : tunable_specs())
    if (name == s.name) return &s;
  return nullptr;
}

std::string known_names() {
  std::string out;
  for (const auto& s : tunable_specs()) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

}  // namespace

std::string check_tunables(const TunableValues& values) {
  for (const auto& [name, value] : values) {
    const TunableSpec* s = find_spec(name);
    if (s == nullptr) return "tunables." + name + ": no such tunable (known: " + known_names() + ")";
    if (value < s->min || value > s->max)
      return "tunables." + name + ": " + std::to_string(value) + " is outside [" + std::to_string(s->min) + ", " +
             std::to_string(s->max) + "] (" + s->what + ")";
  }
  return "";
}

std::string parse_tunable(const std::string& text, TunableValues& values) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return "tunable '" + text + "': expected name=value (known: " + known_names() + ")";
  const std::string name = text.substr(0, eq), num = text.substr(eq + 1);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (num.empty() || ec != std::errc() || end != num.data() + num.size())
    return "tunables." + name + ": '" + num + "' is not a non-negative integer";
  values[name] = v;
  return "";
}

std::string apply_tunables(bpf_object* obj, const TunableValues& values) {
  if (std::string e = check_tunables(values); !e.empty()) return e;
  for (const auto& [name, value] : values) {
    const std::string var = "c2c_" + name;
    if (std::string e = c2c::host::set_rodata_u64(obj, var.c_str(), value); !e.empty()) return "tunables." + name + ": " + e;
  }
  return "";
}

}  // namespace c2c::sched
