// RuntimeValue <-> struct c2c_policy_value, and what may be written.
#include <gtest/gtest.h>

#include <random>

#include "mirror/policy_value.hpp"

namespace c2c::mirror {
namespace {

RuntimeValue sample() {
  RuntimeValue v;
  v.start = 123456;
  v.generation = 42;
  v.slice_ns = 250'000;
  v.boost_until = 9'000'000'000ull;
  v.max_boost = 5'000'000'000ull;
  v.allowed = CpuSet::of({0, 65, 255});
  v.preferred = CpuSet::of({65});
  v.tgid = 777;
  v.exec_class = ExecClass::LatencyCritical;
  v.flags = kFlagBoost | kFlagAllowedCpus | kFlagPreferredCpus | kFlagCustomSlice;
  return v;
}

TEST(MirrorConvert, FieldsLandWhereTheAbiSays) {
  const c2c_policy_value a = to_abi(sample());
  EXPECT_EQ(a.start_ticks, 123456u);
  EXPECT_EQ(a.generation, 42u);
  EXPECT_EQ(a.slice_ns, 250'000u);
  EXPECT_EQ(a.boost_until_ns, 9'000'000'000ull);
  EXPECT_EQ(a.max_boost_ns, 5'000'000'000ull);
  EXPECT_EQ(a.allowed_cpus[0], 1u);                 // CPU 0
  EXPECT_EQ(a.allowed_cpus[1], 2u);                 // CPU 65
  EXPECT_EQ(a.allowed_cpus[3], 1ull << 63);         // CPU 255
  EXPECT_EQ(a.preferred_cpus[1], 2u);
  EXPECT_EQ(a.tgid, 777u);
  EXPECT_EQ(a.abi_version, C2C_ABI_VERSION);
  EXPECT_EQ(a.exec_class, C2C_CLASS_LATENCY_CRITICAL);
  EXPECT_EQ(a.flags, C2C_F_BOOST | C2C_F_ALLOWED_CPUS | C2C_F_PREFERRED_CPUS | C2C_F_CUSTOM_SLICE);
}

TEST(MirrorConvert, RoundTripsRandomValues) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    RuntimeValue v;
    v.start = rng();
    v.generation = rng();
    v.slice_ns = rng();
    v.boost_until = rng();
    v.max_boost = rng();
    for (unsigned c = 0; c < kMaxCpus; ++c) {
      if (rng() % 3 == 0) v.allowed.set(c);
      if (rng() % 5 == 0) v.preferred.set(c);
    }
    v.tgid = static_cast<uint32_t>(rng());
    v.exec_class = static_cast<ExecClass>(rng() % C2C_NR_CLASSES);
    v.flags = static_cast<uint8_t>(rng() % 32);
    EXPECT_EQ(from_abi(to_abi(v)), v) << "iteration " << i;
  }
}

TEST(MirrorConvert, WritableValuesPass) { EXPECT_EQ(check_writable(sample()), std::nullopt); }

TEST(MirrorConvert, UnknownClassIsRefusedNamingTheField) {
  RuntimeValue v = sample();
  v.exec_class = static_cast<ExecClass>(9);
  auto why = check_writable(v);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("value.exec_class"), std::string::npos) << *why;
}

TEST(MirrorConvert, UnknownFlagBitsAreRefused) {
  RuntimeValue v = sample();
  v.flags = static_cast<uint8_t>(v.flags | 0x80);
  auto why = check_writable(v);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("value.flags"), std::string::npos) << *why;
  EXPECT_NE(why->find("0x80"), std::string::npos) << *why;
}

TEST(MirrorConvert, BoostWithoutLeaseIsRefused) {
  RuntimeValue v = sample();
  v.boost_until = 0;
  auto why = check_writable(v);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("INV-8"), std::string::npos) << *why;
}

// Boost inheritance (issue 43 item 3): its flags are writable beside boost, refused without it.
TEST(MirrorConvert, BoostInheritanceIsWritableOnlyBesideABoost) {
  RuntimeValue v = sample();
  ASSERT_TRUE(v.flags & kFlagBoost);
  v.flags = static_cast<uint8_t>(v.flags | kFlagWakeeBoost);
  EXPECT_EQ(check_writable(v), std::nullopt);
  v.flags = static_cast<uint8_t>(v.flags | kFlagWakeeDepth2);
  EXPECT_EQ(check_writable(v), std::nullopt);
  EXPECT_EQ(to_abi(v).flags & (C2C_F_WAKEE_BOOST | C2C_F_WAKEE_DEPTH2), C2C_F_WAKEE_BOOST | C2C_F_WAKEE_DEPTH2);
  v.flags = static_cast<uint8_t>(v.flags & ~kFlagBoost);
  v.boost_until = 0;
  auto why = check_writable(v);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("INV-8"), std::string::npos) << *why;
}

TEST(MirrorConvert, DecodedEntryOfAnotherAbiIsFlagged) {
  c2c_policy_value raw = to_abi(sample());
  EXPECT_EQ(check_decoded(raw), std::nullopt);
  raw.abi_version = 0;  // e.g. injected with bpftool
  auto why = check_decoded(raw);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("abi_version 0"), std::string::npos) << *why;
}

// The bounds themselves: the last class and the ABI version pass, one past each is refused. A
// check off by one (> instead of >=, or a range that admits the next version) fails here.
TEST(MirrorConvert, LastClassIsWritableAndOnePastItIsRefused) {
  RuntimeValue v = sample();
  v.exec_class = static_cast<ExecClass>(C2C_NR_CLASSES - 1);
  EXPECT_EQ(check_writable(v), std::nullopt);
  v.exec_class = static_cast<ExecClass>(C2C_NR_CLASSES);
  auto why = check_writable(v);
  ASSERT_TRUE(why.has_value()) << "class " << C2C_NR_CLASSES << " accepted";
  EXPECT_NE(why->find("value.exec_class: " + std::to_string(C2C_NR_CLASSES)), std::string::npos) << *why;
  c2c_policy_value raw = to_abi(sample());
  raw.exec_class = C2C_NR_CLASSES;  // read back from the map: the same bound applies
  EXPECT_TRUE(check_decoded(raw).has_value());
}

TEST(MirrorConvert, DecodedEntryOfTheNextAbiVersionIsFlagged) {
  c2c_policy_value raw = to_abi(sample());
  raw.abi_version = C2C_ABI_VERSION + 1;
  auto why = check_decoded(raw);
  ASSERT_TRUE(why.has_value()) << "abi_version " << C2C_ABI_VERSION + 1 << " accepted";
  EXPECT_NE(why->find("abi_version " + std::to_string(C2C_ABI_VERSION + 1)), std::string::npos) << *why;
  raw.abi_version = C2C_ABI_VERSION - 1;
  EXPECT_TRUE(check_decoded(raw).has_value());
}

}  // namespace
}  // namespace c2c::mirror
