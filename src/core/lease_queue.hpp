// The boosted entries' renewal times, (renew_at, tid), smallest first: the core's lease index
// (CoreImpl::lease_renewals). A task event that grants, moves or drops a lease must not walk an
// ordered tree to a random leaf (the B-tree this replaces cost ~1.2 cache misses per task event at
// 100k tasks, issue #13): here both are an append to the end of a binary min-heap, whose last
// lines and the path above them stay in the cache.
//
// Removal is lazy: a removed lease goes into a second heap, and a lease is live while it is in
// `added_` more often than in `removed_` (multisets: a lease dropped and granted again at the same
// renewal time is in both). Where the two heaps' smallest elements are equal, that lease is
// cancelled; settle() pops such pairs, so the smallest element of `added_` is then the smallest
// live lease. Once the removed leases outnumber the live ones, both heaps are sorted and merged
// into the live leases alone (sequential passes, amortized O(log n) per removal), so the index
// stays within twice the live leases and is given back as leases go (issue #13: memory is
// returned when tasks exit).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "core/model.hpp"

namespace c2c {

class LeaseQueue {
 public:
  using Lease = std::pair<Nanos, uint32_t>;  // (renew_at, tid)

  bool empty() const { return added_.size() == removed_.size(); }
  size_t size() const { return added_.size() - removed_.size(); }
  size_t footprint() const { return added_.capacity() + removed_.capacity(); }  // leases the arrays hold room for
  void clear() {
    std::vector<Lease>().swap(added_);
    std::vector<Lease>().swap(removed_);
    shortest_half_life_ = kNoHalfLife;
  }

  // `l` must not be live (as a set: at most one live lease per (renew_at, tid)). `half_life`: the
  // lease's maxBoost / 2, so that the leases that may have run out by a time can be found
  // without reading every due entry (run_out_candidates).
  void insert(const Lease& l, Nanos half_life) {
    added_.push_back(l);
    std::push_heap(added_.begin(), added_.end(), kAfter);
    shortest_half_life_ = std::min(shortest_half_life_, half_life);
  }
  // `l` must be live.
  void erase(const Lease& l) {
    removed_.push_back(l);
    std::push_heap(removed_.begin(), removed_.end(), kAfter);
    if (removed_.size() == added_.size()) clear();  // the last live lease: both heaps hold the same
    else if (removed_.size() > 64 && 2 * removed_.size() >= added_.size()) compact();
  }

  // The earliest live renewal time; nullopt when no lease is live. Settling only drops cancelled
  // pairs (the live leases stay the same), hence const.
  std::optional<Nanos> earliest() const {
    settle();
    if (added_.empty()) return std::nullopt;
    return added_.front().first;
  }

  // The live leases with renew_at <= now, in (renew_at, tid) order: what the B-tree's in-order walk
  // from its start gave. The elements <= now of a min-heap form a subtree at its root, so this
  // visits only those (and their children).
  // Settling first makes the common case (nothing due: every renewal happened) one comparison,
  // however many dropped leases wait behind the front.
  std::vector<Lease> due(Nanos now) const {
    settle();
    std::vector<Lease> live = at_most(added_, now);
    if (live.empty()) return live;
    std::vector<Lease> gone = at_most(removed_, now);
    std::sort(live.begin(), live.end());
    std::sort(gone.begin(), gone.end());
    std::vector<Lease> out;
    out.reserve(live.size());
    std::set_difference(live.begin(), live.end(), gone.begin(), gone.end(), std::back_inserter(out));
    return out;
  }

  // The first `limit` of due(now), in the same order, visiting only those and the dropped leases
  // before them (a best-first walk of each heap): a renewal turn bounded in leases must not pay for
  // every due lease each time (issue #13: the daemon renews a wave of 100k leases 512 per turn).
  std::vector<Lease> first_due(Nanos now, size_t limit) const {
    std::vector<Lease> out;
    if (limit == 0) return out;
    InOrder live(added_), gone(removed_);
    while (out.size() < limit) {
      const Lease* l = live.peek();
      if (!l || l->first > now) break;
      // removed_ is within added_ (as multisets), so a dropped lease never sorts before the live
      // lease it cancels: equal fronts cancel, a smaller dropped front cannot occur.
      const Lease* g = gone.peek();
      while (g && *g < *l) {
        gone.next();
        g = gone.peek();
      }
      if (g && *g == *l) gone.next();
      else out.push_back(*l);
      live.next();
    }
    return out;
  }

  // A superset of the live leases whose boost has run out by `now` (boost_until = renew_at +
  // half-life <= now), in due() order: the due leases at least the shortest half-life ever
  // granted before `now` (since the last clear). The caller reads each one's boost_until.
  std::vector<Lease> run_out_candidates(Nanos now) const {
    if (shortest_half_life_ == kNoHalfLife || now < shortest_half_life_) return {};
    return due(now - shortest_half_life_);
  }

 private:
  // std::*_heap keep the largest element first; this order makes the earliest lease first.
  static constexpr std::greater<Lease> kAfter{};

  void settle() const {
    while (!removed_.empty() && !added_.empty() && removed_.front() == added_.front()) {
      std::pop_heap(added_.begin(), added_.end(), kAfter);
      added_.pop_back();
      std::pop_heap(removed_.begin(), removed_.end(), kAfter);
      removed_.pop_back();
    }
  }

  // Both heaps sorted and merged, in place, into the live leases (a sorted array is a valid
  // min-heap). The arrays keep their capacity unless it is mostly unused: a new array per
  // compaction made malloc consolidate its free lists on the task path.
  void compact() {
    std::sort(added_.begin(), added_.end());
    std::sort(removed_.begin(), removed_.end());
    auto out = added_.begin();
    auto gone = removed_.cbegin();
    for (auto in = added_.cbegin(); in != added_.cend(); ++in) {
      while (gone != removed_.cend() && *gone < *in) ++gone;  // cannot happen (removed_ is within added_)
      if (gone != removed_.cend() && *gone == *in) ++gone;  // one removal cancels one grant
      else *out++ = *in;
    }
    added_.erase(out, added_.end());
    removed_.clear();
    if (added_.capacity() > 4 * added_.size() + 64) added_.shrink_to_fit();
    if (removed_.capacity() > 2 * added_.size() + 64) removed_.shrink_to_fit();
  }

  static std::vector<Lease> at_most(const std::vector<Lease>& heap, Nanos now) {
    std::vector<Lease> out;
    std::vector<size_t> todo;
    if (!heap.empty()) todo.push_back(0);
    while (!todo.empty()) {
      const size_t i = todo.back();
      todo.pop_back();
      if (heap[i].first > now) continue;
      out.push_back(heap[i]);
      for (size_t c = 2 * i + 1; c <= 2 * i + 2 && c < heap.size(); ++c) todo.push_back(c);
    }
    return out;
  }

  // A heap's elements in ascending order, without popping: the next one is the smallest of the
  // children of those already given (a frontier of heap indexes, itself a small min-heap).
  class InOrder {
   public:
    explicit InOrder(const std::vector<Lease>& heap) : heap_(heap) {
      if (!heap_.empty()) frontier_.push(0);
    }
    const Lease* peek() const { return frontier_.empty() ? nullptr : &heap_[frontier_.top()]; }
    void next() {
      const size_t i = frontier_.top();
      frontier_.pop();
      for (size_t c = 2 * i + 1; c <= 2 * i + 2 && c < heap_.size(); ++c) frontier_.push(c);
    }

   private:
    struct Later {
      const std::vector<Lease>* heap;
      bool operator()(size_t a, size_t b) const { return (*heap)[a] > (*heap)[b]; }
    };
    const std::vector<Lease>& heap_;
    std::priority_queue<size_t, std::vector<size_t>, Later> frontier_{Later{&heap_}};
  };

  static constexpr Nanos kNoHalfLife = std::numeric_limits<Nanos>::max();
  Nanos shortest_half_life_ = kNoHalfLife;  // never raised until clear(): a bound, not the exact minimum

  // Mutable for settle() only, which pops cancelled pairs and leaves the live leases as they are.
  mutable std::vector<Lease> added_;    // every lease granted (a min-heap by kAfter)
  mutable std::vector<Lease> removed_;  // every lease dropped since the last compaction, all in added_
};

}  // namespace c2c
