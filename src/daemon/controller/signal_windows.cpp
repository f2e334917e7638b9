// The controllers' signal windows (signal_windows.hpp).
#include "daemon/controller/signal_windows.hpp"

#include <algorithm>
#include <set>

#include "host/cgroup.hpp"

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

namespace {

// The controller's own threads and those its applied proposals join (controller_members, CLS-3).
std::vector<ControlledThread> measured_threads(const Core& core, const ControllerStatus& c,
                                               const SignalWindows::Joined& joined) {
  std::vector<ControlledThread> own = controlled_threads(core, c.kind, c.policy, c.spec);
  auto j = joined.find({c.kind, c.policy});
  if (j == joined.end()) return own;
  std::vector<uint32_t> members;
  for (const auto& t : own) members.push_back(t.tid);
  std::vector<RoleProposal> proposals;
  std::vector<ProposalOutcome> outcomes;
  for (const auto& p : j->second) {
    proposals.push_back(p.proposal);
    outcomes.push_back(p.outcome);
  }
  for (uint32_t tid : controller_members(members, proposals, outcomes)) {
    if (std::any_of(own.begin(), own.end(), [&](const auto& o) { return o.tid == tid; })) continue;
    for (const auto& p : j->second)
      if (p.proposal.tid == tid) own.push_back({tid, p.tgid, p.start});
  }
  std::sort(own.begin(), own.end(), [](const auto& a, const auto& b) { return a.tid < b.tid; });
  return own;
}

}  // namespace

std::vector<WindowSignals> SignalWindows::due(const Core& core, Nanos now, const Joined& joined) {
  std::vector<WindowSignals> out;
  std::set<std::pair<PolicyKind, std::string>> live;
  for (const ControllerStatus& c : core.controllers()) {
    const auto key = std::make_pair(c.kind, c.policy);
    live.insert(key);
    // The daemon measures run delay only; a stepP99 target needs the workload's adapter to
    // report its steps (not gathered yet): no windows, so the controller stays at its static level.
    if (c.spec.target != ControllerTarget::RunDelayP99) continue;
    auto [it, fresh] = policies_.try_emplace(key);
    PolicyWindows& pw = it->second;
    if (!fresh && !(pw.spec == c.spec)) fresh = true;  // a new spec: its windows start again
    const bool window_ended = !fresh && now >= pw.started + pw.spec.window;
    if (!fresh && !window_ended) continue;
    pw.spec = c.spec;
    WindowSignals w = measure(pw, c, measured_threads(core, c, joined), now, window_ended);
    if (window_ended) out.push_back(std::move(w));  // the first read of a policy is a baseline, not a window
  }
  for (auto it = policies_.begin(); it != policies_.end();)
    it = live.count(it->first) ? std::next(it) : policies_.erase(it);
  return out;
}

// Reads every thread now: the end of this window is the start of the next.
WindowSignals SignalWindows::measure(PolicyWindows& pw, const ControllerStatus& c,
                                     const std::vector<ControlledThread>& threads, Nanos now, bool ended) {
  std::map<uint32_t, Baseline> next;
  std::vector<host::ThreadWindow> windows;
  WindowSignals w;
  w.event = ControllerWindow{c.kind, c.policy, std::nullopt};
  w.length_ns = now - pw.started;
  size_t read = 0, zero = 0;
  for (const ControlledThread& t : threads) {
    auto s = read_(t.tgid, t.tid);
    if (!s) continue;  // exited since the core saw it
    ++read;
    if (s->run_ns == 0 && s->wait_ns == 0 && s->timeslices == 0) ++zero;
    next[t.tid] = Baseline{t.start, *s};
    w.tids.push_back(t.tid);
    auto before = pw.baseline.find(t.tid);
    if (!ended || before == pw.baseline.end() || before->second.start != t.start) continue;
    if (auto tw = host::thread_window(t.tid, before->second.stat, *s, w.length_ns)) windows.push_back(*tw);
  }
  pw.baseline = std::move(next);
  read_pressure(pw, threads, ended, w);
  pw.started = now;
  if (!ended) return w;
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
  return w;
}

// The cgroups' cpu.pressure now (each cgroup once): the window's stall share is the highest
// difference from the window's start over its length, the reads are the next window's start.
void SignalWindows::read_pressure(PolicyWindows& pw, const std::vector<ControlledThread>& threads, bool ended,
                                  WindowSignals& w) {
  if (!pressure_) return;
  std::map<std::string, uint64_t> next;
  for (const ControlledThread& t : threads) {
    auto p = pressure_(t.tgid, t.tid);
    if (!p || next.count(p->cgroup_dir)) continue;
    next.emplace(p->cgroup_dir, p->some_total_us);
    auto before = pw.pressure.find(p->cgroup_dir);
    if (!ended || before == pw.pressure.end() || before->second > p->some_total_us || w.length_ns == 0) continue;
    const double pct = 100.0 * static_cast<double>(p->some_total_us - before->second) * 1000.0 /
                       static_cast<double>(w.length_ns);
    if (!w.cpu_pressure_pct || pct > *w.cpu_pressure_pct) {
      w.cpu_pressure_pct = std::min(pct, 100.0);  // the two reads are not atomic with the window's clock
      w.pressure_cgroup = p->cgroup_dir;
    }
  }
  pw.pressure = std::move(next);
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

SignalWindows::PressureReader proc_pressure_reader(std::string proc_root) {
  auto mounts = host::CgroupMounts::discover();
  if (!mounts || !mounts->unified()) return nullptr;
  return [root = std::move(proc_root), unified = *mounts->unified()](uint32_t tgid, uint32_t tid)
             -> std::optional<PressureSample> {
    const auto text = host::read_file(root + "/" + std::to_string(tgid) + "/task/" + std::to_string(tid) + "/cgroup");
    if (!text) return std::nullopt;
    auto lines = host::parse_proc_cgroup(*text);
    if (!lines) return std::nullopt;
    for (const auto& l : *lines) {
      if (!l.unified()) continue;
      auto dir = host::CgroupMounts::dir_of(unified, l.path);
      if (!dir) return std::nullopt;
      auto p = host::read_cpu_pressure(dir->string());
      if (!p) return std::nullopt;  // no PSI (psi=0, or a kernel without CONFIG_PSI)
      return PressureSample{dir->string(), p->some.total_us};
    }
    return std::nullopt;
  };
}

}  // namespace c2c::daemon
