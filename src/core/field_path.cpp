#include "core/field_path.hpp"

#include <algorithm>

namespace c2c {

FieldPath FieldPath::parse(std::string_view text) {
  FieldPath p;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = i;
    while (end < text.size() && text[end] != '.' && text[end] != '[') ++end;
    p.add(std::string(text.substr(i, end - i)));
    i = end;
    while (i < text.size() && text[i] == '[') {
      // A key may hold dots and brackets (a label key): it runs to the "]" after which the path
      // goes on (a dot, another "[" or the end).
      size_t close = text.find(']', i + 1);
      while (close != std::string_view::npos && close + 1 < text.size() && text[close + 1] != '.' &&
             text[close + 1] != '[')
        close = text.find(']', close + 1);
      if (close == std::string_view::npos) {  // unbalanced: the rest is the key
        p.key(std::string(text.substr(i + 1)));
        return p;
      }
      const std::string_view inside = text.substr(i + 1, close - i - 1);
      if (!inside.empty() && inside.size() <= 18 && std::all_of(inside.begin(), inside.end(), [](char c) {
            return c >= '0' && c <= '9';
          }))
        p.index(std::stoull(std::string(inside)));
      else
        p.key(std::string(inside));
      i = close + 1;
    }
    if (i < text.size() && text[i] == '.') ++i;
  }
  return p;
}

FieldPath& FieldPath::add(std::string name) {
  segs_.push_back(FieldSegment{std::move(name), std::nullopt, std::nullopt});
  return *this;
}

FieldPath& FieldPath::index(size_t i) {
  if (segs_.empty()) add("");
  segs_.back().index = i;
  return *this;
}

FieldPath& FieldPath::key(std::string k) {
  if (segs_.empty()) add("");
  segs_.back().key = std::move(k);
  return *this;
}

FieldPath& FieldPath::append(const FieldPath& tail) {
  segs_.insert(segs_.end(), tail.segs_.begin(), tail.segs_.end());
  return *this;
}

bool FieldPath::starts_with(std::initializer_list<std::string_view> names) const {
  if (names.size() > segs_.size()) return false;
  size_t i = 0;
  for (auto n : names)
    if (segs_[i++].name != n) return false;
  return true;
}

FieldPath FieldPath::drop_front(size_t n) const {
  FieldPath p;
  if (n < segs_.size()) p.segs_.assign(segs_.begin() + static_cast<std::ptrdiff_t>(n), segs_.end());
  return p;
}

std::string FieldPath::str() const {
  std::string out;
  for (const auto& s : segs_) {
    if (!out.empty() && !s.name.empty()) out += '.';
    out += s.name;
    if (s.index) out += "[" + std::to_string(*s.index) + "]";
    if (s.key) out += "[" + *s.key + "]";
  }
  return out;
}

}  // namespace c2c
