// The reconciler (spec/daemon.md, "Incremental reconcile", "Intents"; issue 44): makes the pinned
// policy map hold what the node state wants and says how far it got. It writes the core's plan
// delta and the retries that are due (one attempt a write: a failed key waits in the retry
// queue, on the loop's timer, never a sleep), holds adds and updates while the generation lease
// cannot cover them (INV-4), and reads the map back (the short pass over the written keys, the
// whole map at once or in slices between which the loop serves events): drift is re-observed
// and repaired (INV-5), a map as believed confirms the intents (SENT -> APPLIED). It reaches the
// map only through mirror::PolicyMapIo (the seam the mirror's fake map stands in for in
// tests/unit/daemon_reconciler_test.cpp) and time only through its clock.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "daemon/process/config.hpp"
#include "daemon/reconciler/confirm_pass.hpp"
#include "daemon/reconciler/full_pass_pacing.hpp"
#include "daemon/loop/heap_trim.hpp"
#include "daemon/reconciler/reconciler_metrics.hpp"
#include "daemon/node_state/node_state.hpp"
#include "daemon/reconciler/retry_queue.hpp"
#include "daemon/reconciler/sliced_read_back.hpp"
#include "mirror/applier.hpp"

namespace c2c::daemon {

// The wait between two slices of a read-back in slices (and between two batches of a lease
// renewal wave, the loop's): task events and commands are served in it.
constexpr uint64_t kSliceGapNs = 500'000;

// What a whole pass cost the loop (the wall and CPU time it held the loop): into the metrics
// (claim2core_full_pass_*) and, at debug level, the log; `what` says which pass it was.
void report_pass(ReconcilerMetrics& metrics, const char* pass, const std::string& what, uint64_t held_ns, uint64_t cpu_ns);

struct ReconcilerClock {
  std::function<uint64_t()> now_ns;  // CLOCK_BOOTTIME: deadlines, backoff
  std::function<uint64_t()> cpu_ns;  // the loop thread's CPU time: what a pass cost
  std::function<int64_t()> unix_ms;  // the intents' timestamps
};

// What the loop does around a full read-back pass (the kernel's side, outside this unit).
struct FullPassHooks {
  std::function<void()> begins;  // the pins that vanished are pinned again (restore_pins)
  std::function<void()> ends;    // the scheduler's metrics from its stats map
};

class Reconciler {
 public:
  // `cfg`: the loop's (readback_interval_ns may change on reload). The applier makes one attempt
  // a write and reads the map in chunks of 512 (~0.3 ms a read-back slice at 100k entries).
  Reconciler(NodeState& node, mirror::PolicyMapIo& map, const DaemonConfig& cfg, ReconcilerMetrics& metrics,
             HeapTrim& heap_trim, ReconcilerClock clock, FullPassHooks hooks = {});

  // The ops the core yields for what changed since the last call (take_plan_delta) plus the
  // retries that are due, written; then BpfSynced when nothing is owed, else the map read back
  // (BpfObserved); the intents settled.
  void reconcile();
  // The read-back the loop owes at `now`, if any: the next slice of a pass under way, the
  // periodic full pass (in slices), or the short pass after a write (not while `writes_under_way`:
  // a pass that sees writes does not confirm). True when drift was found and re-observed: the
  // loop must reconcile now to repair it.
  bool read_back_if_due(uint64_t now, bool writes_under_way);
  // The whole pass at once (full: pins, plan, check, intents' selection too). True on drift.
  bool readback(bool full);
  // Written but not read back: the short pass comes soon (100 ms), not a readback_interval later.
  void schedule_confirm();

  // The earliest time the reconciler wants the loop to wake (a slice, a pass, a retry), or
  // UINT64_MAX.
  uint64_t next_wakeup() const;
  bool retry_due(uint64_t now) const;
  FullPassSchedule& readback_pass() { return readback_pass_; }
  size_t pending_ops() const { return retry_.size(); }
  const std::vector<std::string>& violations() const { return last_violations_; }
  void set_violations(const std::vector<Violation>& found);
  // The whole map (startup's BpfObserved).
  mirror::Result<mirror::ReadResult> read_actual() { return applier_.read_actual(); }

 private:
  std::optional<PlanOp> retry_op(uint32_t tid) const;
  void confirm_read_back();
  bool start_sliced(bool full);
  bool continue_sliced();
  void finish_sliced();
  size_t write_missed(const Plan& full_plan);
  void report_violations(const std::vector<Violation>& found);
  size_t map_units() const { return node_.core.desired_size() + node_.core.actual().size(); }  // a full read-back's work

  NodeState& node_;
  const DaemonConfig& cfg_;
  ReconcilerMetrics& metrics_;
  HeapTrim& heap_trim_;
  ReconcilerClock clock_;
  FullPassHooks hooks_;
  mirror::Applier applier_;
  RetryQueue retry_{mirror::RetryPolicy{1, std::chrono::milliseconds(1), std::chrono::seconds(1)}};
  WrittenKeys written_;                    // the keys the next short read-back reads (confirm_pass.hpp)
  std::string last_apply_error_;
  FullPassSchedule readback_pass_;         // the periodic full pass (full_pass_pacing.hpp)
  uint64_t next_confirm_ns_ = UINT64_MAX;  // the short read-back pass for SENT intents, if due
  std::optional<SlicedReadBack> sliced_;   // a whole-map read-back under way
  mirror::MapWalk sliced_walk_;            // its walk of the map (the applier's cursor)
  uint64_t next_slice_ns_ = 0;
  std::vector<std::string> last_violations_;
};

}  // namespace c2c::daemon
