// The policy map operations the applier needs, as an interface: the kernel implementation
// (kernel_map.hpp) wraps libbpf on a map fd; unit tests use an in-memory map with injected faults.
// Errors are positive errno values (0 = success), as the kernel reports them.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "claim2core_abi.hpp"
#include "policy_compare_delete.h"

namespace c2c::mirror {

struct BatchResult {
  int err = 0;      // 0, or the errno that stopped the batch
  size_t done = 0;  // elements processed before it stopped (the batch is not atomic)
};

class PolicyMapIo {
 public:
  virtual ~PolicyMapIo() = default;
  virtual uint32_t max_entries() const = 0;

  virtual int lookup(uint32_t tid, c2c_policy_value* out) = 0;  // ENOENT when absent
  virtual int update(uint32_t tid, const c2c_policy_value& v) = 0;  // BPF_ANY
  virtual int remove(uint32_t tid) = 0;                            // ENOENT when absent

  // BPF_ANY writes of n entries; stops at the first error.
  virtual BatchResult update_batch(const uint32_t* tids, const c2c_policy_value* values, size_t n) = 0;
  // Deletes of n keys; stops at the first error (ENOENT included).
  virtual BatchResult delete_batch(const uint32_t* tids, size_t n) = 0;

  // One step of a batched read. `in` is the cursor of the previous step (nullptr: start),
  // `out` receives the next cursor. *count is the capacity in, the number read out.
  // Returns 0 (more may follow), ENOENT (end reached; *count entries are still valid),
  // ENOSPC (a bucket holds more than *count entries) or another errno.
  virtual int lookup_batch(const uint64_t* in, uint64_t* out, uint32_t* tids, c2c_policy_value* values,
                           uint32_t* count) = 0;
  // Iteration: the key after *prev (nullptr: the first key); ENOENT at the end.
  virtual int next_key(const uint32_t* prev, uint32_t* next) = 0;

  // Compare-and-delete of n keys where the map itself decides (bpf/policy_compare_delete.h: each
  // entry deleted only if it holds the expected start and is not newer; verdicts out).
  // EOPNOTSUPP with nothing done where this map cannot: the applier then compares against a
  // read of the map. Stops at the first failing run like a batch.
  virtual BatchResult compare_delete(c2c_compare_delete_slot* /*slots*/, size_t /*n*/) { return {EOPNOTSUPP, 0}; }
};

}  // namespace c2c::mirror
