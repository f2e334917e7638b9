// Loads the claim2core sched_ext scheduler (bpf/claim2core.bpf.c) through libbpf's object API
// (libbpf 1.4.6: no skeletons, no struct_ops auto-attach), reusing the pinned policy and stats
// maps when they exist and pinning them when they do not, and keeps the struct_ops link.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernel/bpf_object.hpp"
#include "sched/exit_info.hpp"
#include "sched/stats.hpp"
#include "sched/tunables.hpp"

namespace c2c::sched {

// A load or attach failure; what() names the step, the path or field, and the errno text.
class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoaderOptions {
  std::string object_path;                // claim2core.bpf.o
  std::string pin_root = C2C_PIN_ROOT;    // where c2c_policy and c2c_stats are pinned
  int enable_timeout_ms = 10000;          // how long to wait for state "enabled"
  // The scheduler's tunables (sched/tunables.hpp: names, defaults, ranges), written into the
  // object's .rodata before load; the ones not named keep the object's defaults.
  TunableValues tunables;
  // Bytes of the kernel's debug dump the exit record keeps (ops.dump and the kernel's own lines,
  // written when the kernel throws the scheduler out); 0 keeps none.
  uint32_t exit_dump_bytes = 32768;
};

// /sys/kernel/sched_ext/state ("enabled", "disabled", ...) or "" when sched_ext is absent.
std::string scx_state();
// /sys/kernel/sched_ext/root/ops (the loaded scheduler's name) or "" when none is loaded.
std::string scx_root_ops();

// Mounts bpffs at /sys/fs/bpf if it is not mounted and creates dir; throws LoadError on failure.
void ensure_pin_dir(const std::string& dir);

// Reads and sums the stats of a pinned c2c_stats map (for tools that did not load it).
c2c_stats read_pinned_stats(const std::string& pin_path = C2C_STATS_PIN);

// The scheduler's per-task counters of thread tid from the pinned task storage c2c_task_cnt (looked
// up by the thread's pidfd), or nullopt with *why: no map pinned there (no scheduler loaded since the
// pins were made), no such thread, or no counters for it (it never ran under the scheduler).
std::optional<c2c_task_counters> read_pinned_task_counters(uint32_t tid, const std::string& pin_path, std::string* why);

class Scheduler {
 public:
  // open -> reuse/pin maps -> load -> attach -> wait for "enabled". Throws LoadError.
  static std::unique_ptr<Scheduler> load(const LoaderOptions& opts);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // The exit record, once the scheduler has exited (kind != 0); nullopt while it runs.
  std::optional<ExitReport> exit_report() const;
  // Summed per-CPU statistics.
  c2c_stats stats() const;
  // Destroys the link (the kernel disables the scheduler: SCX_EXIT_UNREG); idempotent.
  void detach();
  bool policy_map_reused() const { return policy_reused_; }

 private:
  Scheduler() = default;
  kernel::BpfObject obj_;
  kernel::BpfLink link_;  // destroyed before obj_
  int data_fd_ = -1;          // the .data map holding the exit record
  size_t data_size_ = 0;      // its value size
  size_t uei_offset_ = 0;     // offset of `uei` in it
  int dump_fd_ = -1;          // the .data.uei_dump map holding the exit record's dump
  size_t dump_size_ = 0;      // its value size
  int stats_fd_ = -1;
  bool policy_reused_ = false;
};

}  // namespace c2c::sched
