// The controllers' signal windows (signal_windows.hpp).
#include "daemon/controller/signal_windows.hpp"

#include <algorithm>
#include <set>

namespace c2c::daemon {

std::vector<ControlledThread> controlled_threads(const Core& core, PolicyKind kind, const std::string& policy,
                                                 const ControllerSpec& spec) {
  std::vector<ControlledThread> out;
  for (const auto& [tid, e] : core.desired()) {
    if (!controller_acts_on(*e.origin, kind, policy, spec)) continue;
    out.push_back({tid, e.value.tgid, e.value.start});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.tid < b.tid; });
  return out;
}

std::vector<WindowSignals> SignalWindows::due(const Core& core, Nanos now) {
  std::vector<WindowSignals> out;
  std::set<std::pair<PolicyKind, std::string>> live;
  for (const ControllerStatus& c : core.controllers()) {
    const auto key = std::make_pair(c.kind, c.policy);
    live.insert(key);
    const ControllerSpec* spec = &c.spec;
    // The daemon measures run delay only; a stepP99 target needs the workload's adapter to
    // report its steps (not gathered yet): no windows, so the controller stays at its static level.
    if (spec->target != ControllerTarget::RunDelayP99) continue;
    auto [it, fresh] = policies_.try_emplace(key);
    PolicyWindows& pw = it->second;
    if (!fresh && !(pw.spec == *spec)) fresh = true;  // a new spec: its windows start again
    const bool window_ended = !fresh && now >= pw.started + pw.spec.window;
    if (!fresh && !window_ended) continue;
    pw.spec = *spec;

    // Read every thread the controller acts on now: the end of this window is the start of the next.
    std::map<uint32_t, Baseline> next;
    std::vector<host::ThreadWindow> windows;
    WindowSignals w;
    w.event = ControllerWindow{c.kind, c.policy, std::nullopt};
    w.length_ns = now - pw.started;
    size_t read = 0, zero = 0;
    for (const ControlledThread& t : controlled_threads(core, c.kind, c.policy, *spec)) {
      auto s = read_(t.tgid, t.tid);
      if (!s) continue;  // exited since the core saw it
      ++read;
      if (s->run_ns == 0 && s->wait_ns == 0 && s->timeslices == 0) ++zero;
      next[t.tid] = Baseline{t.start, *s};
      w.tids.push_back(t.tid);
      auto before = pw.baseline.find(t.tid);
      if (!window_ended || before == pw.baseline.end() || before->second.start != t.start) continue;
      if (auto tw = host::thread_window(t.tid, before->second.stat, *s, w.length_ns)) windows.push_back(*tw);
    }
    pw.baseline = std::move(next);
    pw.started = now;
    if (!window_ended) continue;  // the first read of a policy is a baseline, not a window

    // Every thread read 0 0 0: the kernel keeps no schedstat (CONFIG_SCHED_INFO off, or
    // schedstats disabled). That is no signal, never a zero delay (fail closed, CTL-5).
    if (read > 0 && zero == read) {
      schedstat_zero_ = true;
      w.no_signal = "schedstat reads 0 0 0 for every thread (a kernel without CONFIG_SCHED_INFO)";
    } else if (w.tids.empty()) {
      w.no_signal = "no thread to measure";
    } else {
      w.event.signal = host::run_delay_p99(windows);
      if (!w.event.signal) w.no_signal = "no measured thread ran in the window";
    }
    for (const auto& tw : windows) {
      if (tw.runs > 0) ++w.threads_ran;
      w.cpu_share_mean += tw.cpu_share;
      w.cpu_share_max = std::max(w.cpu_share_max, tw.cpu_share);
    }
    if (!windows.empty()) w.cpu_share_mean /= static_cast<double>(windows.size());
    out.push_back(std::move(w));
  }
  for (auto it = policies_.begin(); it != policies_.end();)
    it = live.count(it->first) ? std::next(it) : policies_.erase(it);
  return out;
}

std::optional<Nanos> SignalWindows::deadline() const {
  std::optional<Nanos> at;
  for (const auto& [key, pw] : policies_) {
    const Nanos end = pw.started + pw.spec.window;
    at = at ? std::min(*at, end) : end;
  }
  return at;
}

SignalWindows::Reader proc_schedstat_reader(std::string proc_root) {
  return [root = std::move(proc_root)](uint32_t tgid, uint32_t tid) { return host::read_schedstat(root, tgid, tid); };
}

}  // namespace c2c::daemon
