// The controllers' signal windows on this host (issue 46; spec/daemon.md, "The controller"): for
// every policy with a spec.controller, the threads it acts on are read at the end of each of its
// windows (spec.controller.window) from /proc/<tgid>/task/<tid>/schedstat, and the window's
// run-delay p99 and CPU share become one controller_window event for the core; the CPU pressure
// (PSI `some`, cpu.pressure) of the threads' cgroups over the window goes with the decision as a
// signal value (shown, not decided on). Imperative shell:
// the reads happen here, the decision is the core's (src/core/controller.hpp). The reader is a
// parameter, so tests feed it counters; the arithmetic is src/host/run_signals.hpp's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/core.hpp"
#include "host/run_signals.hpp"

namespace c2c::daemon {

// A thread a controller measures: (tid, tgid, start).
struct ControlledThread {
  uint32_t tid = 0, tgid = 0;
  uint64_t start = 0;
  bool operator==(const ControlledThread&) const = default;
};

// What the daemon measured over one window, beside the event it gives the core.
struct WindowSignals {
  ControllerWindow event;            // signal: the run-delay p99, none without a signal
  std::vector<uint32_t> tids;        // the threads measured (and acted on), sorted
  size_t threads_ran = 0;            // of them, those that ran in the window
  double cpu_share_mean = 0;         // mean of the threads' CPU shares (1.0 = one CPU for the window)
  double cpu_share_max = 0;
  Nanos length_ns = 0;               // the window as measured (the loop may wake late)
  std::string no_signal;             // why there is no signal ("" when there is one)
  // The highest CPU pressure over the window of the measured threads' cgroups: the share of the
  // window (percent) in which some runnable task of the cgroup waited for a CPU (cpu.pressure's
  // `some total` difference). Absent when no cgroup's cpu.pressure could be read twice.
  std::optional<double> cpu_pressure_pct;
  std::string pressure_cgroup;       // the cgroup it is of
};

// A cgroup's cumulative CPU stall (cpu.pressure `some total`, microseconds) and the cgroup's
// directory, as read for a thread.
struct PressureSample {
  std::string cgroup_dir;
  uint64_t some_total_us = 0;
};

class SignalWindows {
 public:
  // (tgid, tid) -> the thread's counters; nullopt when it cannot be read (gone).
  using Reader = std::function<std::optional<host::SchedStat>(uint32_t tgid, uint32_t tid)>;
  // (tgid, tid) -> the cpu.pressure of the thread's cgroup; nullopt when it cannot be read (no
  // PSI on this kernel, cgroup v1 only, the thread gone). Null: no pressure is read.
  using PressureReader = std::function<std::optional<PressureSample>(uint32_t tgid, uint32_t tid)>;
  explicit SignalWindows(Reader read, PressureReader pressure = nullptr)
      : read_(std::move(read)), pressure_(std::move(pressure)) {}

  // A policy's latest role proposals with their outcomes (classify: apply, activity_windows.hpp):
  // the controller measures its own threads plus those controller_members (core/role_proposals.hpp)
  // adds, i.e. the applied critical-path ones (CLS-3).
  struct JoinedProposal {
    RoleProposal proposal;
    ProposalOutcome outcome = ProposalOutcome::Shown;
    uint32_t tgid = 0;
    uint64_t start = 0;
  };
  using Joined = std::map<std::pair<PolicyKind, std::string>, std::vector<JoinedProposal>>;

  // The windows that ended by `now`, one per controlled policy whose window is due. A policy
  // seen for the first time (or with a new spec) starts its first window now: its first event
  // comes one window later. Policies without a controller any more are forgotten.
  std::vector<WindowSignals> due(const Core& core, Nanos now, const Joined& joined = {});
  // The next window's end (the loop's timer), if any controller exists.
  std::optional<Nanos> deadline() const;
  // True once every thread of a window read 0 0 0 (a kernel without CONFIG_SCHED_INFO, or with
  // schedstats off): no signal from then on for that window, and the loop logs it once.
  bool schedstat_zero() const { return schedstat_zero_; }

 private:
  struct Baseline {
    uint64_t start = 0;  // the task's start: a reused tid is another thread (INV-2)
    host::SchedStat stat;
  };
  struct PolicyWindows {
    ControllerSpec spec;
    Nanos started = 0;
    std::map<uint32_t, Baseline> baseline;  // tid -> counters at the window's start
    std::map<std::string, uint64_t> pressure;  // cgroup dir -> cpu.pressure some total (us) at the start
  };
  // One policy's window read at `now` (the next one's baseline kept); `ended`: a window ended.
  WindowSignals measure(PolicyWindows& pw, const ControllerStatus& c, const std::vector<ControlledThread>& threads,
                        Nanos now, bool ended);
  void read_pressure(PolicyWindows& pw, const std::vector<ControlledThread>& threads, bool ended, WindowSignals& w);
  Reader read_;
  PressureReader pressure_;
  std::map<std::pair<PolicyKind, std::string>, PolicyWindows> policies_;
  bool schedstat_zero_ = false;
};

// The threads a policy's controller acts on: the desired entries it derives (for a DRA policy,
// those of spec.controller.role), sorted by tid.
std::vector<ControlledThread> controlled_threads(const Core& core, PolicyKind kind, const std::string& policy,
                                                 const ControllerSpec& spec);

// Reads /proc/<tgid>/task/<tid>/schedstat under `proc_root`.
SignalWindows::Reader proc_schedstat_reader(std::string proc_root);
// Reads the cpu.pressure of the thread's cgroup v2 (its `0::` line in /proc/<tgid>/task/<tid>/cgroup,
// under the unified mount found in /proc/self/mountinfo); null when this host has no cgroup v2.
SignalWindows::PressureReader proc_pressure_reader(std::string proc_root);

}  // namespace c2c::daemon
