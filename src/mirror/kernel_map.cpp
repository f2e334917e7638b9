#include "mirror/kernel_map.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include "kernel/map_ops.hpp"

namespace c2c::mirror {

namespace {
// A batch count is a u32 in the kernel ABI.
uint32_t clamp_count(size_t n) {
  return n > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max() : static_cast<uint32_t>(n);
}
}  // namespace

int KernelPolicyMap::lookup(uint32_t tid, c2c_policy_value* out) {
  c2c_task_key key{tid};
  return kernel::map_lookup(fd_, &key, out);
}

int KernelPolicyMap::update(uint32_t tid, const c2c_policy_value& v) {
  c2c_task_key key{tid};
  return kernel::map_update(fd_, &key, &v);
}

int KernelPolicyMap::remove(uint32_t tid) {
  c2c_task_key key{tid};
  return kernel::map_delete(fd_, &key);
}

// c2c_task_key is exactly a u32 (static_assert in the ABI header), so a uint32_t array is an
// array of keys.
BatchResult KernelPolicyMap::update_batch(const uint32_t* tids, const c2c_policy_value* values, size_t n) {
  uint32_t count = clamp_count(n);
  const int err = kernel::map_update_batch(fd_, tids, values, &count);
  return {err, static_cast<size_t>(count)};  // the count is reported on error too
}

BatchResult KernelPolicyMap::delete_batch(const uint32_t* tids, size_t n) {
  uint32_t count = clamp_count(n);
  const int err = kernel::map_delete_batch(fd_, tids, &count);
  return {err, static_cast<size_t>(count)};
}

int KernelPolicyMap::lookup_batch(const uint64_t* in, uint64_t* out, uint32_t* tids, c2c_policy_value* values,
                                  uint32_t* count) {
  return kernel::map_lookup_batch(fd_, in, out, tids, values, count);
}

int KernelPolicyMap::next_key(const uint32_t* prev, uint32_t* next) {
  return kernel::map_next_key(fd_, prev, next);
}

BatchResult KernelPolicyMap::compare_delete(c2c_compare_delete_slot* slots, size_t n) {
  if (compare_delete_ == nullptr) return {EOPNOTSUPP, 0};
  return compare_delete_->run(slots, n);
}

}  // namespace c2c::mirror
