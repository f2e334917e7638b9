// An in-memory PolicyMapIo with the kernel's batch semantics (stop at the first failing key,
// report how many were processed) and injectable per-key faults, for the applier's unit tests.
#pragma once

#include <functional>
#include <map>

#include "mirror/map_io.hpp"

namespace c2c::mirror::testing {

class FakePolicyMap final : public PolicyMapIo {
 public:
  explicit FakePolicyMap(uint32_t max) : max_(max) {}

  std::map<uint32_t, c2c_policy_value> entries;
  bool batch_supported = true;
  // Called before every key operation: 'l' lookup, 'u' write, 'd' delete. Returns an errno to
  // inject (0: proceed). It may also change `entries` to model a concurrent writer.
  std::function<int(char op, uint32_t tid)> fault;
  size_t batch_calls = 0, single_calls = 0;
  uint32_t min_read_chunk = 0;  // lookup_batch answers ENOSPC when *count is below this
  // compare_delete as the kernel program does it (true), or EOPNOTSUPP like a map without it.
  // A run covers compare_delete_run keys; fault('c', first tid of a run) fails that run.
  bool compares_and_deletes = false;
  size_t compare_delete_run = C2C_COMPARE_DELETE_SLOTS;
  size_t compare_delete_calls = 0;

  uint32_t max_entries() const override { return max_; }

  int lookup(uint32_t tid, c2c_policy_value* out) override {
    ++single_calls;
    if (int e = inject('l', tid)) return e;
    auto it = entries.find(tid);
    if (it == entries.end()) return ENOENT;
    *out = it->second;
    return 0;
  }
  int update(uint32_t tid, const c2c_policy_value& v) override {
    ++single_calls;
    return write(tid, v);
  }
  int remove(uint32_t tid) override {
    ++single_calls;
    return erase(tid);
  }
  BatchResult update_batch(const uint32_t* tids, const c2c_policy_value* values, size_t n) override {
    ++batch_calls;
    if (!batch_supported) return {EINVAL, 0};
    for (size_t i = 0; i < n; ++i)
      if (int e = write(tids[i], values[i])) return {e, i};
    return {0, n};
  }
  BatchResult delete_batch(const uint32_t* tids, size_t n) override {
    ++batch_calls;
    if (!batch_supported) return {EINVAL, 0};
    for (size_t i = 0; i < n; ++i)
      if (int e = erase(tids[i])) return {e, i};
    return {0, n};
  }
  int lookup_batch(const uint64_t* in, uint64_t* out, uint32_t* tids, c2c_policy_value* values,
                   uint32_t* count) override {
    ++batch_calls;
    if (!batch_supported) return EINVAL;
    if (*count < min_read_chunk) {
      *count = 0;
      return ENOSPC;
    }
    // The cursor is the next tid to read.
    auto it = in == nullptr ? entries.begin() : entries.lower_bound(static_cast<uint32_t>(*in));
    uint32_t n = 0;
    for (; it != entries.end() && n < *count; ++it, ++n) {
      tids[n] = it->first;
      values[n] = it->second;
    }
    *count = n;
    if (it == entries.end()) return ENOENT;
    *out = it->first;
    return 0;
  }
  BatchResult compare_delete(c2c_compare_delete_slot* slots, size_t n) override {
    ++compare_delete_calls;
    if (!compares_and_deletes) return {EOPNOTSUPP, 0};
    for (size_t i = 0; i < n; ++i) {
      if (i % compare_delete_run == 0)
        if (int e = inject('c', slots[i].tid)) return {e, i};
      c2c_compare_delete_slot& s = slots[i];
      auto it = entries.find(s.tid);
      if (it == entries.end()) {
        s.verdict = C2C_DELETE_ABSENT;
        continue;
      }
      s.verdict = c2c_delete_verdict(it->second.start_ticks, it->second.generation, s.start_ticks, s.generation);
      if (s.verdict != C2C_DELETE_OK) {
        s.start_ticks = it->second.start_ticks;
        s.generation = it->second.generation;
        continue;
      }
      s.verdict = -erase(s.tid);
    }
    return {0, n};
  }
  int next_key(const uint32_t* prev, uint32_t* next) override {
    ++single_calls;
    auto it = prev == nullptr ? entries.begin() : entries.upper_bound(*prev);
    if (it == entries.end()) return ENOENT;
    *next = it->first;
    return 0;
  }

 private:
  int inject(char op, uint32_t tid) { return fault ? fault(op, tid) : 0; }
  int write(uint32_t tid, const c2c_policy_value& v) {
    if (int e = inject('u', tid)) return e;
    if (entries.count(tid) == 0 && entries.size() >= max_) return E2BIG;
    entries[tid] = v;
    return 0;
  }
  int erase(uint32_t tid) {
    if (int e = inject('d', tid)) return e;
    return entries.erase(tid) == 1 ? 0 : ENOENT;
  }
  uint32_t max_;
};

}  // namespace c2c::mirror::testing
