// Names are bytes (names.hpp). UTF-8 is decoded with ICU's U8_NEXT (header-only macros of
// libicu-dev's unicode/utf8.h; nothing of ICU is linked): it yields a negative code point for an
// ill-formed sequence and advances past its maximal subpart, which is the unit replaced.
#include "core/names.hpp"

#include <unicode/utf8.h>

namespace c2c {
namespace {

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD in UTF-8

// Calls f(begin, end, code point) for each decoded unit of `s`; the code point is negative for an
// ill-formed subsequence [begin, end).
template <class F>
void for_each_unit(std::string_view s, F&& f) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const auto n = static_cast<int32_t>(s.size());
  int32_t i = 0;
  while (i < n) {
    const int32_t begin = i;
    UChar32 c = 0;
    U8_NEXT(p, i, n, c);
    f(static_cast<size_t>(begin), static_cast<size_t>(i), c);
  }
}

bool all_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

// Characters a terminal acts on rather than shows (terminal_text).
bool acts_on_terminal(UChar32 c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x200e || c == 0x200f || (c >= 0x2028 && c <= 0x202e) ||
         (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

bool is_utf8(std::string_view bytes) {
  if (all_ascii(bytes)) return true;
  bool ok = true;
  for_each_unit(bytes, [&](size_t, size_t, UChar32 c) { ok = ok && c >= 0; });
  return ok;
}

std::string name_text(std::string_view bytes) {
  if (is_utf8(bytes)) return std::string(bytes);
  std::string out;
  out.reserve(bytes.size() + 8);
  for_each_unit(bytes, [&](size_t b, size_t e, UChar32 c) {
    if (c < 0) out += kReplacement;
    else out.append(bytes.substr(b, e - b));
  });
  return out;
}

bool name_matches(std::string_view name, const RE2& re) {
  if (is_utf8(name)) return RE2::PartialMatch(name, re);
  const std::string text = name_text(name);
  return RE2::PartialMatch(text, re);
}

std::string terminal_text(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  for_each_unit(bytes, [&](size_t b, size_t e, UChar32 c) {
    if (c >= 0 && !acts_on_terminal(c)) {
      out.append(bytes.substr(b, e - b));
      return;
    }
    for (size_t k = b; k < e; ++k) {
      const auto v = static_cast<unsigned char>(bytes[k]);
      out += "\\x";
      out += kHex[v >> 4];
      out += kHex[v & 0xf];
    }
  });
  return out;
}

std::string echo(std::string_view input) {
  if (input.size() <= kEchoBytes) return name_text(input);
  size_t cut = kEchoBytes;
  // Back to the start of a character the cut would split (at most 3 continuation bytes).
  while (cut > kEchoBytes - 3 && (static_cast<unsigned char>(input[cut]) & 0xc0) == 0x80) --cut;
  return name_text(input.substr(0, cut)) + "... (" + std::to_string(input.size()) + " bytes)";
}

size_t terminal_width(std::string_view text) {
  size_t n = 0;
  for (char c : text)
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++n;  // every byte but a continuation byte
  return n;
}

}  // namespace c2c
