// The loop's real-time budget (spec/daemon.md "On a busy node"): with realtime_priority the loop
// wakes at SCHED_FIFO, so a task event or a command is handled at once on a busy node; but some
// turns are bulk work (a policy matching 100k threads, the periodic full pass at 100k, a burst's
// backlog: hundreds of ms), and at SCHED_FIFO they would hold a CPU from every time-shared and
// sched_ext task of the node for that long. So each wake-up gets a CPU-time budget: a timer on
// the thread's own CPU clock signals the thread when the budget is used up and the handler puts it
// back in SCHED_OTHER, where the rest of that work shares the CPU fairly. Before the loop waits
// again it returns to SCHED_FIFO (with CAP_SYS_NICE, which the daemon keeps for this).
// Turns that do not block (a backlog read 8 events at a time) share one budget: only a wait that
// may sleep starts a new one.
//
// The timer is not set on every wake-up: a task event costs a wake-up of ~20 µs of CPU, and arming
// and disarming the timer around each was two system calls of it (8 % of the loop's CPU per sparse
// task event). It stays armed across waits (a thread's CPU clock does not run while it sleeps),
// and a wake-up arms it again only once the CPU the thread may have spent since the arm leaves less
// than half the budget. That CPU is estimated from above by the time the thread was awake (the vDSO
// clock from each wake-up to the next wait) plus kWaitMarginNs per wait for the kernel's part of
// it, so a wake-up has about half the budget or more, and most short ones make no timer call. An
// estimate that falls short only ends a wake-up's SCHED_FIFO run earlier: the armed timer never
// holds more than one budget. A timer that fires in the tail of a wait (the tick after the thread
// last ran) is seen at the next wake-up, which takes its priority back first.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>

namespace c2c::daemon {

class RealtimeBudget {
 public:
  // For the calling thread, which runs SCHED_FIFO `priority` (0: the budget does nothing).
  // budget_ns: CPU time per wake-up before the thread goes time-shared.
  RealtimeBudget(uint32_t priority, uint64_t budget_ns);
  ~RealtimeBudget();
  RealtimeBudget(const RealtimeBudget&) = delete;
  RealtimeBudget& operator=(const RealtimeBudget&) = delete;

  // "" or why the budget could not be set up (then the thread keeps its priority unbounded).
  const std::string& error() const { return error_; }

  // Right after the loop's wait returned; `slept`: the wait could block (a new wake-up: at least
  // half the budget, the timer armed again when less is left). A wait that could not block
  // continues the budget of the turn before.
  void woke(bool slept);
  // Right before the loop waits; `will_sleep`: the wait can block. Only then is the time awake
  // counted against the armed budget and the thread put back in SCHED_FIFO if the budget ran out;
  // a wait that cannot block (a backlog read turn by turn) keeps the thread where the budget left
  // it. "" or the error (the thread stays time-shared).
  std::string before_wait(bool will_sleep);
  // Wake-ups whose budget ran out (claim2core_realtime_demotions_total).
  uint64_t demotions() const { return demotions_; }
  // Times the timer was armed (tests: short wake-ups share one arm).
  uint64_t arms() const { return arms_; }
  // Counted per wait for the CPU the kernel charges around it outside the measured awake time.
  static constexpr uint64_t kWaitMarginNs = 20'000;

 private:
  uint32_t priority_;
  uint64_t budget_ns_;
  timer_t timer_{};
  bool armed_timer_ = false;
  uint64_t demotions_ = 0;
  uint64_t arms_ = 0;
  uint64_t used_ns_ = 0;        // CPU the thread may have spent since the timer was armed (an upper bound)
  uint64_t awake_from_ns_ = 0;  // CLOCK_MONOTONIC of the wake-up not yet closed by a wait; 0: none
  std::string woke_error_;      // a failed return to SCHED_FIFO at a wake-up, for before_wait
  std::string error_;
};

}  // namespace c2c::daemon
