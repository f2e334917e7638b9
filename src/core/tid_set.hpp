// A set of TIDs in one flat array (open addressing, linear probing, backward-shift deletion), for
// the core's hot indexes: a member costs ~6 bytes instead of a ~40-byte hash node, an insert or an
// erase touches one or two cache lines, and the array shrinks as members leave, so memory is
// given back when tasks exit. TID 0 never occurs (validate() refuses it) and marks a free slot.
// Up to kInline members are kept unhashed inside the object instead (see below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace c2c {

class TidSet {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = uint32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const uint32_t*;
    using reference = const uint32_t&;
    const_iterator(const uint32_t* p, const uint32_t* end) : p_(p), end_(end) { skip(); }
    reference operator*() const { return *p_; }
    const_iterator& operator++() {
      ++p_;
      skip();
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++*this;
      return t;
    }
    bool operator==(const const_iterator& o) const { return p_ == o.p_; }

   private:
    void skip() {
      while (p_ != end_ && *p_ == 0) ++p_;
    }
    const uint32_t* p_;
    const uint32_t* end_;
  };
  using iterator = const_iterator;
  using value_type = uint32_t;

  TidSet() = default;
  template <class It>
  TidSet(It first, It last) {
    insert(first, last);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator begin() const { return small() ? const_iterator{small_, small_ + size_} : const_iterator{slots_.data(), slots_.data() + slots_.size()}; }
  const_iterator end() const {
    const uint32_t* e = small() ? small_ + size_ : slots_.data() + slots_.size();
    return {e, e};
  }
  void clear() {
    slots_.clear();
    slots_.shrink_to_fit();
    size_ = 0;
  }

  // Brings tid's home slot towards the cache ahead of an insert, erase or count (Core::prefetch).
  void prefetch(uint32_t tid) const {
    if (!small()) __builtin_prefetch(slots_.data() + home(tid), 1);
  }

  size_t count(uint32_t tid) const {
    if (tid == 0) return 0;
    if (small()) return find_small(tid) != kInline;
    for (size_t i = home(tid);; i = next(i)) {
      if (slots_[i] == tid) return 1;
      if (slots_[i] == 0) return 0;
    }
  }

  bool insert(uint32_t tid) {
    if (tid == 0) return false;
    if (small()) {
      if (find_small(tid) != kInline) return false;
      if (size_ < kInline) {
        small_[size_++] = tid;
        return true;
      }
      rehash(4 * kInline);  // the first member past the inline ones: the members move to an array
    }
    if ((size_ + 1) * 4 > slots_.size() * 3) rehash(slots_.size() * 2);
    for (size_t i = home(tid);; i = next(i)) {
      if (slots_[i] == tid) return false;
      if (slots_[i] == 0) {
        slots_[i] = tid;
        ++size_;
        return true;
      }
    }
  }
  template <class It>
  void insert(It first, It last) {
    for (; first != last; ++first) insert(*first);
  }

  size_t erase(uint32_t tid) {
    if (tid == 0) return 0;
    if (small()) {
      const uint32_t at = find_small(tid);
      if (at == kInline) return 0;
      small_[at] = small_[--size_];
      return 1;
    }
    size_t i = home(tid);
    while (slots_[i] != tid) {
      if (slots_[i] == 0) return 0;
      i = next(i);
    }
    // Backward shift: pull later members of the probe run into the hole, so no tombstones pile up.
    for (size_t j = next(i);; j = next(j)) {
      const uint32_t v = slots_[j];
      if (v == 0) break;
      const size_t h = home(v);
      // v may move to i when its home is not in the cyclic range (i, j].
      if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
        slots_[i] = v;
        i = j;
      }
    }
    slots_[i] = 0;
    --size_;
    // Back inline at half the inline room, so that a set at the boundary does not move each time.
    if (size_ <= kInline / 2) to_small();
    else if (slots_.size() > 16 && size_ * 8 < slots_.size()) rehash(slots_.size() / 2);
    return 1;
  }

  bool operator==(const TidSet& o) const {
    if (size_ != o.size_) return false;
    for (uint32_t t : *this)
      if (!o.count(t)) return false;
    return true;
  }

 private:
  // Most thread groups and cgroups hold a few threads: up to kInline members sit unhashed in the
  // object (a linear scan of one cache line), so such a set costs no allocation and an insert or
  // erase reads no second line (the flat maps keep the set in their slot; issue #13's profile had
  // the separate array as a cache miss of every exit at 100k tasks). Small iff no array.
  static constexpr uint32_t kInline = 16;
  bool small() const { return slots_.empty(); }
  uint32_t find_small(uint32_t tid) const {
    for (uint32_t i = 0; i < size_; ++i)
      if (small_[i] == tid) return i;
    return kInline;
  }
  void to_small() {
    std::vector<uint32_t> old;
    old.swap(slots_);
    size_ = 0;
    for (uint32_t v : old)
      if (v != 0) small_[size_++] = v;
  }

  size_t home(uint32_t tid) const { return (static_cast<uint32_t>(tid * 0x9E3779B1u) >> shift_) & (slots_.size() - 1); }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void rehash(size_t capacity) {
    std::vector<uint32_t> old;
    if (small()) old.assign(small_, small_ + size_);
    else old.swap(slots_);
    slots_.assign(capacity, 0);
    shift_ = 32;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    size_ = 0;
    for (uint32_t v : old)
      if (v != 0) insert(v);
  }

  std::vector<uint32_t> slots_;
  uint32_t size_ = 0;
  uint8_t shift_ = 32;
  uint32_t small_[kInline] = {};
};

}  // namespace c2c
