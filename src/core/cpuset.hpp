// A fixed-width CPU set: the unit of INV-6 (the cgroup/DRA cpuset is a hard boundary).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace c2c {

// Matches C2C_MAX_CPUS in bpf/claim2core_abi.h (checked by a static_assert in src/host).
inline constexpr unsigned kMaxCpus = 256;

class CpuSet {
 public:
  static constexpr unsigned kWords = kMaxCpus / 64;

  CpuSet() = default;
  static CpuSet range(unsigned first, unsigned last_inclusive);
  static CpuSet of(std::initializer_list<unsigned> cpus);

  // Parses the kernel's list format ("0-3,8,10-11"); empty string is the empty set.
  // Returns nullopt with a reason on syntax errors or CPUs >= kMaxCpus.
  static std::optional<CpuSet> parse(std::string_view text, std::string* error = nullptr);
  std::string to_string() const;  // kernel list format

  void set(unsigned cpu) { words_[cpu / 64] |= (uint64_t{1} << (cpu % 64)); }
  void clear(unsigned cpu) { words_[cpu / 64] &= ~(uint64_t{1} << (cpu % 64)); }
  bool test(unsigned cpu) const { return cpu < kMaxCpus && ((words_[cpu / 64] >> (cpu % 64)) & 1u); }
  bool empty() const;
  unsigned count() const;
  std::vector<unsigned> cpus() const;

  bool subset_of(const CpuSet& other) const;
  CpuSet operator&(const CpuSet& o) const;
  CpuSet operator|(const CpuSet& o) const;
  bool operator==(const CpuSet&) const = default;
  auto operator<=>(const CpuSet&) const = default;

  const std::array<uint64_t, kWords>& words() const { return words_; }
  static CpuSet from_words(const std::array<uint64_t, kWords>& w) {
    CpuSet s;
    s.words_ = w;
    return s;
  }

 private:
  std::array<uint64_t, kWords> words_{};
};

}  // namespace c2c
