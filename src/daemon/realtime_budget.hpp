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

  // Right after the loop's wait returned; `slept`: the wait could block (a new wake-up, a new
  // budget). A wait that could not block continues the budget of the turn before.
  void woke(bool slept);
  // Right before the loop waits; `will_sleep`: the wait can block. Only then is the budget
  // disarmed (a timer left running could demote the thread while it sleeps) and the thread put back
  // in SCHED_FIFO if the budget ran out; a wait that cannot block (a backlog read turn by turn)
  // keeps the thread where the budget left it. "" or the error (the thread stays time-shared).
  std::string before_wait(bool will_sleep);
  // Wake-ups whose budget ran out (claim2core_realtime_demotions_total).
  uint64_t demotions() const { return demotions_; }

 private:
  uint32_t priority_;
  uint64_t budget_ns_;
  timer_t timer_{};
  bool armed_timer_ = false;
  uint64_t demotions_ = 0;
  std::string error_;
};

}  // namespace c2c::daemon
