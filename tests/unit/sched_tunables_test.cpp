// The scheduler's tunables (src/sched/tunables.*): the loader's names, ranges and checks, and,
// when the scheduler's object is built (bpf/sched.cmake), that the loader's table and the
// object's .rodata name the same tunables, each a u64 the loader can write.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <linux/types.h>

#include <cstddef>
#include <set>
#include <string>

#include "claim2core_abi.h"
#include "c2c_guards.h"
#include "host/bpf_object_path.hpp"
#include "sched/tunables.hpp"

using c2c::sched::apply_tunables;
using c2c::sched::check_tunables;
using c2c::sched::parse_tunable;
using c2c::sched::tunable_specs;
using c2c::sched::TunableValues;

TEST(SchedTunables, DefaultsAreTheHeadersAndInsideTheirRanges) {
  TunableValues all;
  for (const auto& t : tunable_specs()) {
    EXPECT_LE(t.min, t.default_value) << t.name;
    EXPECT_LE(t.default_value, t.max) << t.name;
    all[t.name] = t.default_value;
  }
  EXPECT_EQ(check_tunables(all), "");
  // The host's build of the guards uses the same defaults (C2C_TUNABLES_IN_RODATA unset).
  EXPECT_EQ(all.at("boost_window_ns"), C2C_BOOST_WINDOW_NS);
  EXPECT_EQ(all.at("norm_starve_ns"), C2C_NORM_STARVE_NS);
  EXPECT_EQ(all.at("untracked_long_slice_ns"), C2C_UNTRACKED_LONG_SLICE_NS);
  EXPECT_EQ(tunable_specs().size(), 8u);
}

TEST(SchedTunables, AValueOutsideItsRangeIsRefusedNamingTheTunable) {
  EXPECT_EQ(check_tunables({{"norm_starve_ns", C2C_STARVE_MIN_NS}}), "");
  const std::string low = check_tunables({{"norm_starve_ns", C2C_STARVE_MIN_NS - 1}});
  EXPECT_NE(low.find("tunables.norm_starve_ns"), std::string::npos) << low;
  EXPECT_NE(low.find("outside"), std::string::npos) << low;
  // INV-8: a boost budget of the whole window is not a value the proof covers.
  const std::string pct = check_tunables({{"boost_budget_pct", 100}});
  EXPECT_NE(pct.find("tunables.boost_budget_pct"), std::string::npos) << pct;
  EXPECT_NE(check_tunables({{"bg_starve_ns", C2C_STARVE_MAX_NS + 1}}), "");
  const std::string unknown = check_tunables({{"slice_ns", 1}});
  EXPECT_NE(unknown.find("tunables.slice_ns: no such tunable"), std::string::npos) << unknown;
}

TEST(SchedTunables, ParseTakesNameEqualsValueAndNamesTheFieldOtherwise) {
  TunableValues v;
  EXPECT_EQ(parse_tunable("prefer_spill_ns=500000", v), "");
  EXPECT_EQ(v.at("prefer_spill_ns"), 500000u);
  EXPECT_NE(parse_tunable("prefer_spill_ns=-1", v).find("tunables.prefer_spill_ns"), std::string::npos);
  EXPECT_NE(parse_tunable("prefer_spill_ns=2ms", v), "");
  EXPECT_NE(parse_tunable("prefer_spill_ns=", v), "");
  EXPECT_NE(parse_tunable("=5", v), "");
  EXPECT_NE(parse_tunable("prefer_spill_ns", v), "");
  EXPECT_EQ(v.at("prefer_spill_ns"), 500000u);  // a refused text changes nothing
}

// The loader's table and the scheduler's .rodata agree: every tunable is a u64 global
// c2c_<name> the loader writes, and every c2c_ global of .rodata is a tunable the loader names.
TEST(SchedTunables, TheLoadersTableNamesEveryRodataTunableOfTheScheduler) {
  const auto path = c2c::host::find_bpf_object("claim2core");
  if (!path) GTEST_SKIP() << "claim2core.bpf.o not built (bpf/sched.cmake needs the test-bed kernel)";
  bpf_object* obj = bpf_object__open_file(path->c_str(), nullptr);
  ASSERT_NE(obj, nullptr) << *path;
  std::set<std::string> in_object;
  const btf* b = bpf_object__btf(obj);
  ASSERT_NE(b, nullptr);
  const int sec_id = btf__find_by_name_kind(b, ".rodata", BTF_KIND_DATASEC);
  ASSERT_GE(sec_id, 0);
  const btf_type* sec = btf__type_by_id(b, static_cast<__u32>(sec_id));
  const btf_var_secinfo* vi = btf_var_secinfos(sec);
  for (unsigned i = 0; i < btf_vlen(sec); ++i, ++vi) {
    const btf_type* var = btf__type_by_id(b, vi->type);
    const std::string name = btf__name_by_offset(b, var->name_off);
    if (name.rfind("c2c_", 0) == 0) in_object.insert(name.substr(4));
  }
  std::set<std::string> in_table;
  TunableValues max;
  for (const auto& t : tunable_specs()) {
    in_table.insert(t.name);
    max[t.name] = t.max;
  }
  EXPECT_EQ(in_object, in_table);
  EXPECT_EQ(apply_tunables(obj, max), "");
  EXPECT_NE(apply_tunables(obj, {{"boost_window_ns", 0}}), "");
  bpf_object__close(obj);
}
