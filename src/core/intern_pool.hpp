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
  InternPool() { slots_.emplace_back(); }

  // The id of `v`, with one more reference.
  uint32_t acquire(const T& v) {
    auto [it, fresh] = ids_.try_emplace(v, 0);
    if (fresh) {
      if (free_.empty()) {
        it->second = static_cast<uint32_t>(slots_.size());
        slots_.push_back(Slot{v, 0, ++serials_});
      } else {
        it->second = free_.back();
        free_.pop_back();
        slots_[it->second].value = v;
        slots_[it->second].serial = ++serials_;
      }
    }
    ++slots_[it->second].refs;
    return it->second;
  }
  // The id `v` has, without a reference; 0 when no task holds it.
  uint32_t find(const T& v) const {
    auto it = ids_.find(v);
    return it == ids_.end() ? 0 : it->second;
  }
  void retain(uint32_t id) {
    if (id != 0) ++slots_[id].refs;
  }
  void release(uint32_t id) {
    if (id == 0) return;
    Slot& s = slots_[id];
    assert(s.refs > 0);
    if (--s.refs != 0) return;
    ids_.erase(s.value);
    s.value = T{};
    if (ids_.empty()) {
      clear();
      return;
    }
    free_.push_back(id);
  }
  const T& operator[](uint32_t id) const { return slots_[id].value; }
  // Which value an id holds now: ids are reused once released, serials never (not even after
  // clear()), so (id, serial) names one value for the pool's life (a memo's key, CoreImpl).
  uint64_t serial(uint32_t id) const { return slots_[id].serial; }
  size_t size() const { return ids_.size(); }  // distinct live values
  void clear() {
    std::vector<Slot>(1).swap(slots_);
    std::vector<uint32_t>().swap(free_);
    absl::flat_hash_map<T, uint32_t, Hash>().swap(ids_);
  }

 private:
  struct Slot {
    T value{};
    uint32_t refs = 0;
    uint64_t serial = 0;  // 0: the "none" value
  };
  uint64_t serials_ = 0;
  std::vector<Slot> slots_;      // slots_[0]: the "none" value
  std::vector<uint32_t> free_;   // released ids, reused first
  absl::flat_hash_map<T, uint32_t, Hash> ids_;
};

}  // namespace c2c
