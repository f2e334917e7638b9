// PolicyMapIo on a real BPF hash map fd (libbpf's low-level bpf_map_* calls).
#pragma once

#include "mirror/map_io.hpp"
#include "mirror/policy_compare_delete.hpp"

namespace c2c::mirror {

class KernelPolicyMap final : public PolicyMapIo {
 public:
  // Does not own `fd` (PinnedMaps does); `max_entries` as the map was created. With
  // `compare_delete` (PinnedMaps::compare_delete(), loaded against this fd) deletes are compared
  // and made in the kernel; without it compare_delete() answers EOPNOTSUPP.
  KernelPolicyMap(int fd, uint32_t max_entries, PolicyCompareDelete* compare_delete = nullptr)
      : fd_(fd), max_entries_(max_entries), compare_delete_(compare_delete) {}

  uint32_t max_entries() const override { return max_entries_; }
  int lookup(uint32_t tid, c2c_policy_value* out) override;
  int update(uint32_t tid, const c2c_policy_value& v) override;
  int remove(uint32_t tid) override;
  BatchResult update_batch(const uint32_t* tids, const c2c_policy_value* values, size_t n) override;
  BatchResult delete_batch(const uint32_t* tids, size_t n) override;
  int lookup_batch(const uint64_t* in, uint64_t* out, uint32_t* tids, c2c_policy_value* values,
                   uint32_t* count) override;
  int next_key(const uint32_t* prev, uint32_t* next) override;
  BatchResult compare_delete(c2c_compare_delete_slot* slots, size_t n) override;

 private:
  int fd_;
  uint32_t max_entries_;
  PolicyCompareDelete* compare_delete_;
};

}  // namespace c2c::mirror
