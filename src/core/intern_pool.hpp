// Interned values with reference counts, for the compact per-task record (issue #13 item 2): a
// task holds 4-byte ids instead of its comm, cgroup, title, role, pod uid and cpuset. Tasks share
// few distinct values (a container's threads share a cgroup, a pod uid and a cpuset; a process's
// threads a title), so the record drops from ~260 bytes to 48 and a task event copies no strings.
// A value is dropped when its last task leaves, and the arrays are given back once every value is
// gone (memory is returned when tasks exit). Plain values: copying the pool copies the ids' meaning,
// so a copied CoreImpl stays consistent.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cassert>
#include <cstdint>
#include <vector>

namespace c2c {

// Id 0 is "none" (the empty string, no cpuset): it is never counted and never released.
template <class T, class Hash = absl::Hash<T>>
class InternPool {
 public:
  InternPool() { clear(); }

  // The id of `v`, with one more reference.
  uint32_t acquire(const T& v) {
    auto [it, fresh] = ids_.try_emplace(v, 0);
    if (fresh) {
      if (free_.empty()) {
        it->second = static_cast<uint32_t>(values_.size());
        values_.push_back(v);
        refs_.push_back(0);
        serials_.push_back(++serials_issued_);
      } else {
        it->second = free_.back();
        free_.pop_back();
        values_[it->second] = v;
        serials_[it->second] = ++serials_issued_;
      }
    }
    ++refs_[it->second];
    return it->second;
  }
  // The id `v` has, without a reference; 0 when no task holds it.
  uint32_t find(const T& v) const {
    auto it = ids_.find(v);
    return it == ids_.end() ? 0 : it->second;
  }
  void retain(uint32_t id) {
    if (id != 0) ++refs_[id];
  }
  void release(uint32_t id) {
    if (id == 0) return;
    assert(refs_[id] > 0);
    if (--refs_[id] != 0) return;
    ids_.erase(values_[id]);
    values_[id] = T{};
    if (ids_.empty()) {
      clear();
      return;
    }
    free_.push_back(id);
  }
  const T& operator[](uint32_t id) const { return values_[id]; }
  // Which value an id holds now: ids are reused once released, serials never (not even after
  // clear()), so (id, serial) names one value for the pool's life (a memo's key, CoreImpl).
  uint64_t serial(uint32_t id) const { return serials_[id]; }
  size_t size() const { return ids_.size(); }  // distinct live values
  void clear() {
    std::vector<T>(1).swap(values_);
    std::vector<uint32_t>(1, 0).swap(refs_);
    std::vector<uint64_t>(1, 0).swap(serials_);
    std::vector<uint32_t>().swap(free_);
    absl::flat_hash_map<T, uint32_t, Hash>().swap(ids_);
  }

 private:
  // Per id, in three arrays: the counts and serials a task event reads and writes (every acquire,
  // release and memo key) are 4 and 8 bytes an id, so they stay in the cache at 100k tasks; the
  // values (a cgroup path is a 32-byte string and its buffer) are only read to compare or print.
  // Index 0 is the "none" value (serial 0).
  uint64_t serials_issued_ = 0;
  std::vector<T> values_;
  std::vector<uint32_t> refs_;
  std::vector<uint64_t> serials_;
  std::vector<uint32_t> free_;  // released ids, reused first
  absl::flat_hash_map<T, uint32_t, Hash> ids_;
};

}  // namespace c2c
