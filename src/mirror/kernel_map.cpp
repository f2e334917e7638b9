#include "mirror/kernel_map.hpp"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdlib>
#include <limits>

namespace c2c::mirror {

namespace {
// libbpf returns -errno (and sets errno); the mirror speaks positive errno.
int err_of(int rc) { return rc < 0 ? -rc : 0; }

// A batch count is a u32 in the kernel ABI.
__u32 clamp_count(size_t n) {
  return n > std::numeric_limits<__u32>::max() ? std::numeric_limits<__u32>::max() : static_cast<__u32>(n);
}
}  // namespace

int KernelPolicyMap::lookup(uint32_t tid, c2c_policy_value* out) {
  c2c_task_key key{tid};
  return err_of(bpf_map_lookup_elem(fd_, &key, out));
}

int KernelPolicyMap::update(uint32_t tid, const c2c_policy_value& v) {
  c2c_task_key key{tid};
  return err_of(bpf_map_update_elem(fd_, &key, &v, BPF_ANY));
}

int KernelPolicyMap::remove(uint32_t tid) {
  c2c_task_key key{tid};
  return err_of(bpf_map_delete_elem(fd_, &key));
}

// c2c_task_key is exactly a u32 (static_assert in the ABI header), so a uint32_t array is an
// array of keys.
BatchResult KernelPolicyMap::update_batch(const uint32_t* tids, const c2c_policy_value* values, size_t n) {
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  __u32 count = clamp_count(n);
  int rc = bpf_map_update_batch(fd_, tids, values, &count, &opts);
  return {err_of(rc), static_cast<size_t>(count)};  // libbpf reports the count on error too
}

BatchResult KernelPolicyMap::delete_batch(const uint32_t* tids, size_t n) {
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  __u32 count = clamp_count(n);
  int rc = bpf_map_delete_batch(fd_, tids, &count, &opts);
  return {err_of(rc), static_cast<size_t>(count)};
}

int KernelPolicyMap::lookup_batch(const uint64_t* in, uint64_t* out, uint32_t* tids, c2c_policy_value* values,
                                  uint32_t* count) {
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  // The kernel reads `in` only; libbpf's prototype is not const-correct.
  int rc = bpf_map_lookup_batch(fd_, const_cast<uint64_t*>(in), out, tids, values, count, &opts);
  return err_of(rc);
}

int KernelPolicyMap::next_key(const uint32_t* prev, uint32_t* next) {
  return err_of(bpf_map_get_next_key(fd_, prev, next));
}

BatchResult KernelPolicyMap::compare_delete(c2c_compare_delete_slot* slots, size_t n) {
  if (compare_delete_ == nullptr) return {EOPNOTSUPP, 0};
  return compare_delete_->run(slots, n);
}

}  // namespace c2c::mirror
