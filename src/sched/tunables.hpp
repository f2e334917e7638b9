// The scheduler's tunables (bpf/c2c_guards.h, "tunables"): `const volatile` globals of the BPF
// object's .rodata, which the loader sets between open and load. Their defaults and ranges come
// from the guard header, the one source the scheduler, the proof (c2c_tunables_ok) and this
// table share; a value outside its range is refused here, naming the tunable, before anything
// is loaded, so the scheduler only ever runs with values its proof covers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

struct bpf_object;

namespace c2c::sched {

struct TunableSpec {
  const char* name;  // the loader's name; the .rodata global is "c2c_" + name
  uint64_t default_value;
  uint64_t min;
  uint64_t max;
  const char* what;
};

// Every tunable, in the header's order.
const std::vector<TunableSpec>& tunable_specs();

// Overrides by name (the rest keep the object's defaults).
using TunableValues = std::map<std::string, uint64_t>;

// "" when every name is known and every value inside its range; else why not, naming the
// tunable, its value and its range (the first offender).
std::string check_tunables(const TunableValues& values);

// Parses "name=value" (value in decimal, the unit the name ends in) into values; "" on success,
// else why not. The range is checked by check_tunables.
std::string parse_tunable(const std::string& text, TunableValues& values);

// Writes the overrides into the opened (not yet loaded) object's .rodata; "" on success, else why
// not (an unknown name, a value out of range, a global the object lacks).
std::string apply_tunables(bpf_object* obj, const TunableValues& values);

}  // namespace c2c::sched
