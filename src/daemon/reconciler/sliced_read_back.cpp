#include "daemon/reconciler/sliced_read_back.hpp"

#include <algorithm>

namespace c2c::daemon {

void TidBits::set(uint32_t tid) {
  const size_t w = tid / 64;
  if (w >= words_.size()) words_.resize(w + 1, 0);
  words_[w] |= uint64_t{1} << (tid % 64);
}

bool TidBits::test(uint32_t tid) const {
  const size_t w = tid / 64;
  return w < words_.size() && (words_[w] >> (tid % 64)) & 1;
}

void SlicedReadBack::walked(const std::vector<ActualEntry>& chunk, const Core::ActualTable& known, bool last) {
  for (const auto& e : chunk) {
    read_.set(e.tid);
    auto it = known.find(e.tid);
    if (it == known.end() || !(it->second == e.value)) ++drift_;
  }
  units += chunk.size();
  if (last) walking_ = false;
}

void SlicedReadBack::take_keys(std::vector<uint32_t> keys) {
  keys_ = std::move(keys);
  keys_taken_ = true;
  next_key_ = 0;
}

std::vector<uint32_t> SlicedReadBack::next_slice(size_t n, const Core::ActualTable& known) {
  const size_t end = std::min(keys_.size(), next_key_ + std::max<size_t>(n, 1));
  std::vector<uint32_t> slice(keys_.begin() + static_cast<std::ptrdiff_t>(next_key_),
                              keys_.begin() + static_cast<std::ptrdiff_t>(end));
  next_key_ = end;
  units += slice.size();
  if (!observed_)
    for (uint32_t tid : slice)
      if (!read_.test(tid) && !written_.test(tid) && known.contains(tid)) ++drift_;
  return slice;
}

}  // namespace c2c::daemon
