#include "core/cpuset.hpp"

#include <charconv>

#include "core/names.hpp"

namespace c2c {

CpuSet CpuSet::range(unsigned first, unsigned last_inclusive) {
  CpuSet s;
  for (unsigned c = first; c <= last_inclusive && c < kMaxCpus; ++c) s.set(c);
  return s;
}

CpuSet CpuSet::of(std::initializer_list<unsigned> cpus) {
  CpuSet s;
  for (unsigned c : cpus)
    if (c < kMaxCpus) s.set(c);
  return s;
}

namespace {
bool parse_cpu(std::string_view tok, unsigned& out) {
  if (tok.empty()) return false;
  auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), out);
  return ec == std::errc() && p == tok.data() + tok.size();
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

std::optional<CpuSet> CpuSet::parse(std::string_view text, std::string* error) {
  auto fail = [&](std::string msg) -> std::optional<CpuSet> {
    if (error) *error = std::move(msg);
    return std::nullopt;
  };
  CpuSet s;
  text = trim(text);
  if (text.empty()) return s;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    size_t dash = item.find('-');
    unsigned lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!parse_cpu(item, lo)) return fail("not a CPU number: '" + echo(item) + "'");
      hi = lo;
    } else if (!parse_cpu(item.substr(0, dash), lo) || !parse_cpu(item.substr(dash + 1), hi)) {
      return fail("not a CPU range: '" + echo(item) + "'");
    }
    if (hi < lo) return fail("descending CPU range: '" + echo(item) + "'");
    if (hi >= kMaxCpus)
      return fail("CPU " + std::to_string(hi) + " is out of range (max " + std::to_string(kMaxCpus - 1) + ")");
    for (unsigned c = lo; c <= hi; ++c) s.set(c);
  }
  return s;
}

std::string CpuSet::to_string() const {
  std::string out;
  unsigned c = 0;
  while (c < kMaxCpus) {
    if (!test(c)) {
      ++c;
      continue;
    }
    unsigned end = c;
    while (end + 1 < kMaxCpus && test(end + 1)) ++end;
    if (!out.empty()) out += ',';
    out += std::to_string(c);
    if (end > c) out += '-' + std::to_string(end);
    c = end + 1;
  }
  return out;
}

bool CpuSet::empty() const {
  for (auto w : words_)
    if (w) return false;
  return true;
}

unsigned CpuSet::count() const {
  unsigned n = 0;
  for (auto w : words_) n += static_cast<unsigned>(std::popcount(w));
  return n;
}

std::vector<unsigned> CpuSet::cpus() const {
  std::vector<unsigned> v;
  for (unsigned c = 0; c < kMaxCpus; ++c)
    if (test(c)) v.push_back(c);
  return v;
}

bool CpuSet::subset_of(const CpuSet& o) const {
  for (unsigned i = 0; i < kWords; ++i)
    if (words_[i] & ~o.words_[i]) return false;
  return true;
}

CpuSet CpuSet::operator&(const CpuSet& o) const {
  CpuSet r;
  for (unsigned i = 0; i < kWords; ++i) r.words_[i] = words_[i] & o.words_[i];
  return r;
}

CpuSet CpuSet::operator|(const CpuSet& o) const {
  CpuSet r;
  for (unsigned i = 0; i < kWords; ++i) r.words_[i] = words_[i] | o.words_[i];
  return r;
}

}  // namespace c2c
