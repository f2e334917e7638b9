#include "mirror/policy_value.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace c2c::mirror {

// The core's enums must be the ABI's enums, value for value; a drift here would silently
// change what the scheduler does with every entry.
static_assert(kMaxCpus == C2C_MAX_CPUS, "c2c::kMaxCpus must equal C2C_MAX_CPUS");
static_assert(CpuSet::kWords == C2C_CPUMASK_WORDS, "CpuSet words must equal C2C_CPUMASK_WORDS");
static_assert(unsigned{kFlagBoost} == unsigned{C2C_F_BOOST});
static_assert(unsigned{kFlagCustomSlice} == unsigned{C2C_F_CUSTOM_SLICE});
static_assert(unsigned{kFlagAllowedCpus} == unsigned{C2C_F_ALLOWED_CPUS});
static_assert(unsigned{kFlagPreferredCpus} == unsigned{C2C_F_PREFERRED_CPUS});
static_assert(unsigned{kFlagInherited} == unsigned{C2C_F_INHERITED});
static_assert(unsigned{kFlagWakeeBoost} == unsigned{C2C_F_WAKEE_BOOST});
static_assert(unsigned{kFlagWakeeDepth2} == unsigned{C2C_F_WAKEE_DEPTH2});
static_assert(static_cast<int>(ExecClass::Unmatched) == C2C_CLASS_UNMATCHED);
static_assert(static_cast<int>(ExecClass::LatencyCritical) == C2C_CLASS_LATENCY_CRITICAL);
static_assert(static_cast<int>(ExecClass::CommunicationProgress) == C2C_CLASS_COMM_PROGRESS);
static_assert(static_cast<int>(ExecClass::Throughput) == C2C_CLASS_THROUGHPUT);
static_assert(static_cast<int>(ExecClass::Background) == C2C_CLASS_BACKGROUND);
static_assert(static_cast<int>(ExecClass::Normal) == C2C_CLASS_NORMAL);
static_assert(std::is_same_v<std::underlying_type_t<ExecClass>, __u8>, "exec_class is a u8 in the ABI");
static_assert(sizeof(c2c_policy_value{}.allowed_cpus) == sizeof(CpuSet{}.words()));

namespace {
constexpr unsigned kKnownFlags =
    C2C_F_BOOST | C2C_F_CUSTOM_SLICE | C2C_F_ALLOWED_CPUS | C2C_F_PREFERRED_CPUS | C2C_F_INHERITED | C2C_F_WAKEE_BOOST |
    C2C_F_WAKEE_DEPTH2;

std::array<uint64_t, CpuSet::kWords> words_of(const __u64 (&w)[C2C_CPUMASK_WORDS]) {
  std::array<uint64_t, CpuSet::kWords> out{};
  for (unsigned i = 0; i < C2C_CPUMASK_WORDS; ++i) out[i] = w[i];
  return out;
}
}  // namespace

c2c_policy_value to_abi(const RuntimeValue& v) {
  c2c_policy_value out;
  std::memset(&out, 0, sizeof out);  // padding-free today, but keep the bytes deterministic
  out.start_ticks = v.start;
  out.generation = v.generation;
  out.slice_ns = v.slice_ns;
  out.boost_until_ns = v.boost_until;
  out.max_boost_ns = v.max_boost;
  for (unsigned i = 0; i < C2C_CPUMASK_WORDS; ++i) {
    out.allowed_cpus[i] = v.allowed.words()[i];
    out.preferred_cpus[i] = v.preferred.words()[i];
  }
  out.tgid = v.tgid;
  out.abi_version = C2C_ABI_VERSION;
  out.exec_class = static_cast<__u8>(v.exec_class);
  out.flags = v.flags;
  return out;
}

RuntimeValue from_abi(const c2c_policy_value& v) {
  RuntimeValue out;
  out.start = v.start_ticks;
  out.generation = v.generation;
  out.slice_ns = v.slice_ns;
  out.boost_until = v.boost_until_ns;
  out.max_boost = v.max_boost_ns;
  out.allowed = CpuSet::from_words(words_of(v.allowed_cpus));
  out.preferred = CpuSet::from_words(words_of(v.preferred_cpus));
  out.tgid = v.tgid;
  out.exec_class = static_cast<ExecClass>(v.exec_class);
  out.flags = v.flags;
  return out;
}

std::optional<std::string> check_writable(const RuntimeValue& v) {
  if (static_cast<unsigned>(v.exec_class) >= C2C_NR_CLASSES)
    return "value.exec_class: " + std::to_string(static_cast<unsigned>(v.exec_class)) +
           " is not a known class (0.." + std::to_string(C2C_NR_CLASSES - 1) + ")";
  if ((v.flags & ~kKnownFlags) != 0)
    return "value.flags: unknown bits 0x" + [&] {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%x", v.flags & ~kKnownFlags);
      return std::string(buf);
    }();
  if ((v.flags & C2C_F_BOOST) != 0 && v.boost_until == 0)
    return "value.boost_until: the boost flag needs a lease deadline (INV-8)";
  // Boost inheritance (issue 43 item 3) passes a boost on: only from an entry that boosts (INV-8).
  if ((v.flags & (C2C_F_WAKEE_BOOST | C2C_F_WAKEE_DEPTH2)) != 0 && (v.flags & C2C_F_BOOST) == 0)
    return "value.flags: boost inheritance (wakee-boost, wakee-depth-2) without the boost flag (INV-8)";
  return std::nullopt;
}

std::optional<std::string> check_decoded(const c2c_policy_value& v) {
  if (v.abi_version != C2C_ABI_VERSION)
    return "abi_version " + std::to_string(v.abi_version) + " != " + std::to_string(C2C_ABI_VERSION);
  return check_writable(from_abi(v));
}

}  // namespace c2c::mirror
