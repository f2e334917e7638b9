// The in-kernel compare-and-delete of policy entries: policy_maps.bpf.c's c2c_compare_delete, a
// BPF_PROG_TYPE_SYSCALL program loaded against the pinned policy map's fd and run with
// BPF_PROG_TEST_RUN. One run compares and deletes up to C2C_COMPARE_DELETE_SLOTS keys, the keys
// and verdicts passing through the program's .bss, which this class maps into the process.
//
// Without it the applier compares against a read of the whole map (Applier::delete_keys), which
// at 100k entries costs about as much as the deletes themselves (issue 13's mixed reconcile).
// Not thread-safe: one caller at a time (the daemon's loop; each loader has its own .bss).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "claim2core_abi.hpp"
#include "kernel/bpf_object.hpp"
#include "mirror/map_io.hpp"
#include "mirror/result.hpp"
#include "policy_compare_delete.h"

namespace c2c::mirror {

class PolicyCompareDelete {
 public:
  // Opens object_path (policy_maps.bpf.o), points its policy map at policy_fd (no map is created
  // but the program's .bss) and loads the program. Fails naming the object and the cause: a
  // kernel without BPF_PROG_TYPE_SYSCALL or bpf_loop (before 5.17), no CAP_BPF, no object.
  static Result<std::unique_ptr<PolicyCompareDelete>> load(const std::string& object_path, int policy_fd);
  ~PolicyCompareDelete();
  PolicyCompareDelete(const PolicyCompareDelete&) = delete;
  PolicyCompareDelete& operator=(const PolicyCompareDelete&) = delete;

  // Compares and deletes slots[0, n) (c2c_compare_delete_slot: tid and the expected start and
  // generation in; verdict, and what a kept entry holds, out), one run per
  // C2C_COMPARE_DELETE_SLOTS keys. `done` is how many slots carry a verdict; err the errno of
  // the run that failed (the slots from `done` on are untouched), 0 when all ran.
  BatchResult run(c2c_compare_delete_slot* slots, size_t n);

 private:
  PolicyCompareDelete() = default;
  kernel::BpfObject obj_;
  int prog_fd_ = -1;
  c2c_compare_delete_slot* shared_ = nullptr;  // the program's .bss, mapped here
  size_t shared_bytes_ = 0;
};

}  // namespace c2c::mirror
