// Model and code in step: the constants and rules the Z3 model (model/z3) and the SPIN model
// (model/spin/node.pml) use are the ones of the core (src/core/model.hpp, the core's restart) and
// of the scheduler (bpf/claim2core_abi.h, bpf/c2c_guards.h). The values are compared here, each
// taken from its own source (the Z3 constants from z3_model.hpp, SPIN's rules read out of
// node.pml's text), so a model cannot drift from the code without this test failing.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <linux/types.h>

#include "c2c_guards.h"
#include "core/core.hpp"
#include "core/cpuset.hpp"
#include "core/events.hpp"
#include "core/model.hpp"
#include "z3_model.hpp"

namespace {

using c2c::ExecClass;

constexpr ExecClass kClasses[] = {ExecClass::Unmatched,  ExecClass::LatencyCritical, ExecClass::CommunicationProgress,
                                  ExecClass::Throughput, ExecClass::Background,      ExecClass::Normal};

std::string read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The body of "inline <name>(...) {" up to its closing brace at the start of a line.
std::string promela_inline(const std::string& pml, const std::string& name) {
  const std::regex head("inline " + name + R"(\([^)]*\) \{)");
  std::smatch m;
  if (!std::regex_search(pml, m, head)) throw std::runtime_error("node.pml: no inline " + name);
  const size_t from = static_cast<size_t>(m.position(0)) + static_cast<size_t>(m.length(0));
  const size_t to = pml.find("\n}", from);
  return pml.substr(from, to - from);
}

// The lines of text that are compiled when no BUG_* switch is defined.
std::string without_seeded_bugs(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  std::vector<bool> active{true};  // per #if level: does the unmutated model compile this branch
  while (std::getline(in, line)) {
    if (line.rfind("#ifdef BUG_", 0) == 0) { active.push_back(false); continue; }
    if (line.rfind("#ifndef BUG_", 0) == 0) { active.push_back(true); continue; }
    if (line.rfind("#if", 0) == 0) { active.push_back(true); continue; }
    if (line.rfind("#else", 0) == 0) { active.back() = !active.back(); continue; }
    if (line.rfind("#endif", 0) == 0) { active.pop_back(); continue; }
    bool on = true;
    for (bool a : active) on = on && a;
    if (on) out += line + "\n";
  }
  return out;
}

// ---- classes: numbering, boosting, slices ---------------------------------------------------

TEST(ModelInStep, ClassNumbersAreTheAbis) {
  EXPECT_EQ(static_cast<int>(ExecClass::Unmatched), C2C_CLASS_UNMATCHED);
  EXPECT_EQ(static_cast<int>(ExecClass::LatencyCritical), C2C_CLASS_LATENCY_CRITICAL);
  EXPECT_EQ(static_cast<int>(ExecClass::CommunicationProgress), C2C_CLASS_COMM_PROGRESS);
  EXPECT_EQ(static_cast<int>(ExecClass::Throughput), C2C_CLASS_THROUGHPUT);
  EXPECT_EQ(static_cast<int>(ExecClass::Background), C2C_CLASS_BACKGROUND);
  EXPECT_EQ(static_cast<int>(ExecClass::Normal), C2C_CLASS_NORMAL);
  EXPECT_EQ(std::size(kClasses), static_cast<size_t>(C2C_NR_CLASSES));
}

TEST(ModelInStep, TheCoreAndTheSchedulerBoostTheSameClasses) {
  for (ExecClass c : kClasses) {
    c2c_policy_value v{};
    v.flags = C2C_F_BOOST;
    v.exec_class = static_cast<__u8>(c);
    EXPECT_EQ(c2c::class_boosts(c), c2c_boost_requested(&v)) << c2c::to_string(c);
  }
}

TEST(ModelInStep, ClassSlicesAreTheSchedulers) {
  for (ExecClass c : kClasses) {
    if (c == ExecClass::Unmatched) continue;  // no entry: the scheduler's default (below)
    EXPECT_EQ(c2c::class_default_slice(c), c2c_class_slice(static_cast<__u32>(c))) << c2c::to_string(c);
  }
  EXPECT_EQ(c2c_slice(nullptr), c2c::class_default_slice(ExecClass::Normal));
}

TEST(ModelInStep, TheCoresSliceBoundsAreTheSchedulersClamp) {
  // A slice the core accepts is run as written: the scheduler's clamp is a defence, not a rule
  // of its own.
  EXPECT_EQ(c2c::kMinSliceNs, C2C_SLICE_MIN_NS);
  EXPECT_EQ(c2c::kMaxSliceNs, C2C_SLICE_MAX_NS);
}

// ---- bounds: CPUs, leases ---------------------------------------------------------------------

TEST(ModelInStep, CpuWidthIsOneEverywhere) {
  EXPECT_EQ(c2c::z3m::kFullCpuBits, c2c::kMaxCpus);
  EXPECT_EQ(c2c::kMaxCpus, C2C_MAX_CPUS);
  EXPECT_EQ(C2C_CPUMASK_WORDS * 64u, C2C_MAX_CPUS);
}

TEST(ModelInStep, Z3LeaseBoundsAreTheCores) {
  EXPECT_EQ(static_cast<uint64_t>(c2c::z3m::kMinBoostNs), c2c::kMinBoostNs);
  EXPECT_EQ(static_cast<uint64_t>(c2c::z3m::kMaxBoostNs), c2c::kMaxBoostNs);
}

TEST(ModelInStep, TheLongestLeaseFitsTheSchedulersClock) {
  // boost_until_ns = now + max_boost never wraps for a boot time below 2^63 ns (292 years).
  EXPECT_LT(c2c::kMaxBoostNs, 1ull << 62);
}

// ---- SPIN: the restart rule and the scheduler's identity rule -------------------------------

TEST(ModelInStep, SpinRestartContinuesWhereTheCoreDoes) {
  const std::string pml = read(C2C_SPIN_NODE);
  const std::string restart = without_seeded_bugs(promela_inline(pml, "restart"));
  const std::string bump = without_seeded_bugs(promela_inline(pml, "bump"));
  // SPIN: the restarted generation is the generation file's, bumped once.
  ASSERT_NE(restart.find("G = G_file;"), std::string::npos) << restart;
  ASSERT_NE(restart.find("bump();"), std::string::npos) << restart;
  ASSERT_GT(restart.find("bump();"), restart.find("G = G_file;")) << restart;
  ASSERT_NE(bump.find("G++;"), std::string::npos) << bump;
  // The core: a restart with persisted generation P (and no entry above it) continues at P + 1.
  for (uint64_t persisted : {1ull, 7ull, 1000ull}) {
    c2c::Core core;
    core.apply(c2c::DaemonRestart{persisted});
    EXPECT_EQ(core.generation(), persisted + 1) << "persisted " << persisted;
  }
}

TEST(ModelInStep, SpinSchedulerComparesTheStartAsTheGuardDoes) {
  const std::string pml = without_seeded_bugs(read(C2C_SPIN_NODE));
  const size_t sched = pml.find("proctype Sched()");
  ASSERT_NE(sched, std::string::npos);
  // SPIN: an entry is used only when its start is the running task's.
  EXPECT_NE(pml.find("b_start[k] == t_start[k] ->", sched), std::string::npos);
  // The scheduler: the same rule (a start one tick off is another task).
  c2c_policy_value v{};
  v.start_ticks = 5;
  v.abi_version = C2C_ABI_VERSION;
  v.exec_class = C2C_CLASS_NORMAL;
  EXPECT_TRUE(c2c_entry_usable(&v, 5 * C2C_NSEC_PER_TICK));
  EXPECT_FALSE(c2c_entry_usable(&v, 6 * C2C_NSEC_PER_TICK));
}

}  // namespace
