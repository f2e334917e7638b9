// When the loop reads the task-event ring buffer: at the kernel's wake-up, or, in a storm of forks
// and exits, on its own clock with the producers' wake-ups off (spec/daemon.md, "Storms").
//
// The kernel wakes a ring buffer's reader (an irq_work: a self-IPI, then a turn of the loop) for
// each record written when the reader had read everything before it. A daemon that keeps up reads
// every record as it comes, so each fork and exit on the node costs a wake-up: under a fork storm
// that is most of the daemon's cost and a part of every forking task's (hackbench in the TCG
// guest spent ~60 us per record in the task tracepoints, issue #16). So:
//  - Wake (the start): the ring buffer is in the loop's epoll set; a lone record is read at once.
//  - kStormReads (8) reads in a row that found records, each after the loop waited less than
//    `interval` for it, make a storm: Poll. (A short-lived thread is three records, its fork, its
//    name a few microseconds later and its exit: three reads, no storm, each read at once; a
//    process that forks, execs and exits is three or four. The wait, not the time between reads,
//    because a loop busy with each record for longer than the interval, as under emulation, is
//    in a storm however far apart its reads start.) The producers stop waking the reader and the
//    loop reads on its timer, every `interval`, all the records written meanwhile.
//  - A Poll read that finds nothing ends the storm: Wake again. The caller turns the wake-ups back
//    on and reads once more at once (records written with wake-ups off before the switch). A
//    program that saw the switch too late could still write one record without a wake-up after
//    that read, and then nothing would wake the reader again (the kernel wakes it only for a
//    record written when it had read everything): one settle read `interval` later picks it up.
// Cost: in a storm a record waits up to `interval` (default 1 ms) before it is read; a lone
// record is read at once. interval 0 turns pacing off (always Wake, no settle read).
// Pure: clocks are parameters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace c2c::daemon {

class TaskEventPacing {
 public:
  enum class Mode : uint8_t { Wake, Poll };
  static constexpr unsigned kStormReads = 8;

  explicit TaskEventPacing(uint64_t interval_ns) : interval_ns_(interval_ns) {}

  // A new interval (SIGHUP); 0 ends a storm at its next read.
  void set_interval(uint64_t interval_ns) { interval_ns_ = interval_ns; }

  // The loop read the ring buffer at now_ns, after waiting waited_ns for anything to do, and found
  // `records`; returns the mode from now on.
  // A change of mode is the caller's to carry out: Wake -> Poll, producers' wake-ups off and the
  // ring buffer out of the epoll set; Poll -> Wake, wake-ups on, back in the set, one more read.
  Mode read(uint64_t now_ns, size_t records, uint64_t waited_ns) {
    settle_at_.reset();
    if (mode_ == Mode::Poll) {
      if (records > 0 && interval_ns_ > 0) {
        next_poll_ns_ = now_ns + interval_ns_;
        return mode_;
      }
      mode_ = Mode::Wake;
      streak_ = 0;
      if (interval_ns_ > 0) settle_at_ = now_ns + interval_ns_;
      return mode_;
    }
    if (records == 0) return mode_;
    const bool close = interval_ns_ > 0 && waited_ns < interval_ns_;
    streak_ = close ? streak_ + 1 : 1;
    if (streak_ >= kStormReads) {
      mode_ = Mode::Poll;
      streak_ = 0;
      ++storms_;
      next_poll_ns_ = now_ns + interval_ns_;
    }
    return mode_;
  }

  Mode mode() const { return mode_; }

  // When the loop must read without a wake-up: the next poll of a storm, or the settle read after
  // one; nothing otherwise.
  std::optional<uint64_t> deadline() const {
    if (mode_ == Mode::Poll) return next_poll_ns_;
    return settle_at_;
  }

  // Storms so far (claim2core_task_event_storms_total).
  uint64_t storms() const { return storms_; }

 private:
  uint64_t interval_ns_;
  Mode mode_ = Mode::Wake;
  unsigned streak_ = 0;  // reads in a row that found records, each after a wait shorter than the interval
  uint64_t next_poll_ns_ = 0;
  std::optional<uint64_t> settle_at_;
  uint64_t storms_ = 0;
};

}  // namespace c2c::daemon
