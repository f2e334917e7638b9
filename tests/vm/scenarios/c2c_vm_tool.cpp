// c2c-vm-tool: the guest side of the real-kernel scenarios (tests/vm/guest-init.sh runs it).
// Each scenario subcommand drives real threads, reads real kernel state (/proc, the pinned
// scheduler maps) and prints ONE JSON line with "pass": true|false and the evidence.
// Exit status: 0 pass, 1 fail, 2 usage/environment error.
//
//   put --tid T [--tgid G] --class C [--slice-us U] [--boost-ms B] [--allowed L] [--preferred L]
//   stats [--pin-root DIR]         summed scheduler statistics (default pin root or a daemon's)
//   latency  [--class C --boost-ms B --allowed L --preferred L] [--cgroup DIR] [--duration-ms D]
//   reuse                          TID reuse: a stale entry is ignored and counted (INV-2)
//   slice    --cpu N [--slice-us U] a slice-only policy changes the slice; untracked tasks run
//                                   the default slice with entries, scx_simple's without
//   spin     [--duration-ms D]     progress of a busy and a sleeping thread (unload scenario)
//   starve   --cpu N [--duration-ms D] [--max-gap-ms G] [--no-boost]
//                                  a boosted CPU hog does not starve an unmatched and a background
//                                  hog on the same CPU (INV-8); --no-boost: the unmatched hog does not
//                                  starve the background one
//   stale    --cpu N [--duration-ms D]
//                                  entries the scheduler must not act on: another ABI version's,
//                                  and a lease that ran out; the run-time oracle stays at 0
//   syncwake [--cpu N] [--rounds R]
//   inherit [--cpu N] [--rounds R]     boost inheritance: a boosted writer's reader inherits only when opted in
//                                  a boosted reader woken by a sync wakeup preempts its writer
//                                  on the writer's CPU; an unboosted one waits (the control)
//   prefer   --device BUS_ID [--duration-ms D]
//                                  a probe preferring the device's local CPUs runs there (>= 95 %)
//                                  against the no-policy baseline; spills only past the bound
//   taskcnt  --pid P [--device-node N]  the scheduler's per-task counters of P (c2c_task_cnt)
//   ctxgone  --cpu N [--wait-ms W]  a task's context deleted from user space: the scheduler stops
//                                  itself with scx_bpf_error (issue 44)
//   progs                          the verifier's figures (verified_insns, xlated length) of every
//                                  loaded BPF program named c2c_*: the scheduler's callbacks
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <bpf/bpf.h>
#include <nlohmann/json.hpp>

#include "c2c_guards.h"
#include "sched/loader.hpp"
#include "sched/stats.hpp"
#include "vm_ctx_missing.hpp"
#include "vm_policy.hpp"
#include "vm_prefer.hpp"
#include "vm_proc.hpp"
#include "vm_sync_wakeup.hpp"
#include "vm_inherit.hpp"
#include "vm_task_counters.hpp"

using nlohmann::json;
using namespace c2c;
using namespace c2c::vm;

namespace {

std::optional<CpuSet> parse_cpus(const std::string& text, const char* field) {
  if (text.empty()) return std::nullopt;
  std::string err;
  auto s = CpuSet::parse(text, &err);
  if (!s) throw std::invalid_argument(std::string(field) + ": " + err);
  return s;
}

void join_cgroup(const std::string& dir) {
  if (dir.empty()) return;
  std::ofstream out(dir + "/cgroup.procs");
  out << getpid() << std::endl;
  if (!out) throw std::runtime_error("cgroup " + dir + ": cannot join");
}

// ---- latency: a periodic sleeper's wakeup lateness, optionally under a policy ---------------
//
// Two processes, so that the measuring never competes with what it measures: a child joins the
// cgroup and is the probe (its main thread sleeps periodically); this process stays outside the
// cgroup, writes the policy, samples the probe's CPU from /proc (INV-6 evidence) and its context
// switch and migration counters, and runs on CPUs outside the probe's cpuset when there are any.

// The probe's side. Protocol on the pipes: child -> "<cpuset>\n"; parent -> one byte (go);
// child -> one JSON line with its figures.
int latency_probe_child(const std::string& cgroup, int duration_ms, int period_us, int go_fd, int out_fd) {
  join_cgroup(cgroup);
  const std::string hello = cpus_allowed_list() + "\n";
  if (write(out_fd, hello.data(), hello.size()) != static_cast<ssize_t>(hello.size())) return 2;
  char go = 0;
  if (read(go_fd, &go, 1) != 1) return 2;

  std::vector<uint64_t> lat;
  // Per cycle, the time the probe spent runnable but not running (schedstat run delay): the
  // scheduler's share of the lateness. The timer lateness also holds the time the timer
  // interrupt takes to arrive, which under TCG is the emulator's, not the scheduler's.
  std::vector<uint64_t> run_delay;
  std::set<int> getcpu_seen;
  lat.reserve(static_cast<size_t>(duration_ms) * 1000 / static_cast<size_t>(period_us) + 16);
  run_delay.reserve(lat.capacity());
  const RunDelayReader delay_reader;
  std::optional<uint64_t> delay_before = delay_reader.read();
  bool run_delay_ok = delay_before.has_value();
  const uint64_t end = mono_ns() + static_cast<uint64_t>(duration_ms) * 1000000ull;
  while (true) {
    // Each deadline is one period after the previous wakeup (cyclictest -r style), so a slow
    // (emulated) machine does not pile the lateness of one cycle onto the next.
    const uint64_t next = mono_ns() + static_cast<uint64_t>(period_us) * 1000ull;
    timespec ts{static_cast<time_t>(next / 1000000000ull), static_cast<long>(next % 1000000000ull)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    const uint64_t now = mono_ns();
    lat.push_back(now > next ? now - next : 0);
    if (run_delay_ok) {
      const auto delay_now = delay_reader.read();
      run_delay_ok = delay_now && *delay_now >= *delay_before;
      if (run_delay_ok) run_delay.push_back(*delay_now - *delay_before);
      delay_before = delay_now;
    }
    getcpu_seen.insert(sched_getcpu());
    if (now >= end) break;
  }
  const auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1000; };
  json j{{"samples", lat.size()},
         {"p50_us", percentile(lat, 0.5) / 1000},
         {"p99_us", percentile(lat, 0.99) / 1000},
         {"p999_us", percentile(lat, 0.999) / 1000},
         {"max_us", percentile(lat, 1.0) / 1000},
         {"run_delay", run_delay_ok ? json{{"samples", run_delay.size()},
                                           {"p50_us", us(percentile(run_delay, 0.5))},
                                           {"p99_us", us(percentile(run_delay, 0.99))},
                                           {"p999_us", us(percentile(run_delay, 0.999))},
                                           {"max_us", us(percentile(run_delay, 1.0))}}
                                    : json(nullptr)},
         {"cpus_getcpu", getcpu_seen}};
  const std::string line = j.dump() + "\n";
  return write(out_fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) ? 0 : 2;
}

// Reads from fd until a newline (kept out) or EOF; waits at most timeout_ms for each chunk.
std::optional<std::string> read_line(int fd, int timeout_ms) {
  std::string line;
  char c = 0;
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
    if (read(fd, &c, 1) != 1) return line.empty() ? std::nullopt : std::optional(line);
    if (c == '\n') return line;
    line.push_back(c);
  }
}

// Keeps this process off the probe's CPUs when the machine has others.
void avoid_cpus(const CpuSet& probe_cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  int count = 0;
  for (long c = 0; c < n && c < CPU_SETSIZE; ++c)
    if (!probe_cpus.test(static_cast<unsigned>(c))) {
      CPU_SET(static_cast<unsigned>(c), &set);
      ++count;
    }
  if (count > 0) sched_setaffinity(0, sizeof set, &set);  // best effort: a placement preference
}

int cmd_latency(const PolicySpec* spec, const std::string& cgroup, int duration_ms, int period_us, int device_node) {
  int go_pipe[2], out_pipe[2];
  if (pipe2(go_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    close(go_pipe[1]);
    close(out_pipe[0]);
    int rc = 2;
    try {
      rc = latency_probe_child(cgroup, duration_ms, period_us, go_pipe[0], out_pipe[1]);
    } catch (const std::exception& e) {
      std::cerr << "latency probe: " << e.what() << std::endl;
    }
    _exit(rc);
  }
  close(go_pipe[0]);
  close(out_pipe[1]);
  const auto fail = [&](const std::string& why) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    throw std::runtime_error("latency probe: " + why);
  };
  const auto cpuset = read_line(out_pipe[0], 30000);
  if (!cpuset) fail("the probe process did not start (cgroup " + cgroup + ")");
  auto allowed = CpuSet::parse(*cpuset);
  if (allowed) avoid_cpus(*allowed);
  std::unique_ptr<PolicyMap> map;
  if (spec) {
    map = std::make_unique<PolicyMap>();
    map->put_task(child, child, *spec);
  }
  const uint64_t csw0 = read_ctxt_switches(child, child, true) + read_ctxt_switches(child, child, false);
  const uint64_t mig0 = read_nr_migrations(child, child);
  uint64_t csw1 = csw0, mig1 = mig0;
  const char go = 'g';
  if (write(go_pipe[1], &go, 1) != 1) fail("cannot start the probe");
  std::set<int> stat_seen;  // field 39 of /proc/<tid>/stat, sampled from outside the probe
  std::optional<std::string> result;
  const int deadline_ms = duration_ms + 60000;  // a hang guard only
  for (int waited = 0; !result && waited < deadline_ms; waited += 20) {
    if (auto st = read_task_stat(child, child)) stat_seen.insert(st->processor);
    // Counters only grow; a read after the probe exited gives 0 and is ignored.
    csw1 = std::max(csw1, read_ctxt_switches(child, child, true) + read_ctxt_switches(child, child, false));
    mig1 = std::max(mig1, read_nr_migrations(child, child));
    result = read_line(out_pipe[0], 20);
  }
  int status = 0;
  if (!result) fail("no result within " + std::to_string(deadline_ms) + " ms");
  // The scheduler's counters of the probe (tests/vm/README.md): read before it is reaped, which
  // frees them; a probe that already exited is a zombie until then.
  std::string cnt_why;
  const auto cnt = read_task_counters(child, C2C_PIN_ROOT, &cnt_why);
  waitpid(child, &status, 0);
  if (map) map->del(static_cast<uint32_t>(child));
  close(go_pipe[1]);
  close(out_pipe[0]);

  json j = json::parse(*result);
  std::set<int> getcpu_seen = j["cpus_getcpu"].get<std::set<int>>();
  bool inside = allowed.has_value();
  for (int c : getcpu_seen) inside = inside && allowed->test(static_cast<unsigned>(c));
  for (int c : stat_seen) inside = inside && allowed->test(static_cast<unsigned>(c));
  const bool ok = inside && j["samples"].get<size_t>() > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  j.update(json{{"scenario", "latency"}, {"policy", spec != nullptr}, {"boost", spec && spec->boost_ns > 0},
                {"cpuset", *cpuset}, {"ctx_switches", csw1 - csw0}, {"migrations", mig1 - mig0},
                {"cpus_stat39", stat_seen}, {"inside_cpuset", inside}, {"pass", ok}});
  if (cnt) j["counters"] = counters_json(*cnt, device_node);
  std::cout << j.dump() << std::endl;
  return ok ? 0 : 1;
}

// ---- reuse: an entry left behind for an exited thread must not apply to its TID's next owner ----
int cmd_reuse(int max_spawns) {
  PolicyMap map;
  PolicySpec spec;
  spec.exec_class = C2C_CLASS_THROUGHPUT;  // a class no other task in the guest uses
  spec.slice_ns = 5'000'000;

  // After a wrap the kernel hands out TIDs from RESERVED_PIDS (300) up: move past it so A's TID
  // can come back.
  for (int i = 0; i < max_spawns; ++i) {
    std::atomic<pid_t> t_tid{0};
    std::thread([&] { t_tid = gettid_now(); }).join();
    if (t_tid > 310) break;
  }
  // Thread A gets the policy and runs a while: the positive control (the entry IS used for A).
  std::atomic<pid_t> a_tid{0};
  std::atomic<bool> a_go{false};
  std::thread a([&] {
    a_tid = gettid_now();
    while (!a_go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < 20; ++i) {  // sleep/run cycles: each wakeup is an enqueue
      burn_until(mono_ns() + 2'000'000);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  while (a_tid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const pid_t target = a_tid;
  const auto a_stat = read_task_stat(getpid(), target);
  if (!a_stat) throw std::runtime_error("reuse: cannot read thread A's stat");
  map.put(static_cast<uint32_t>(target), make_value(spec, getpid(), a_stat->start_ticks));
  const c2c_stats s0 = sched::read_pinned_stats();
  a_go = true;
  a.join();
  const c2c_stats s1 = sched::read_pinned_stats();
  // The entry stays behind (as if the daemon had not collected it yet). Let the clock move on
  // so the next owner of the TID has a different start time.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));

  std::atomic<bool> b_found{false};
  uint64_t b_start = 0;
  int spawns = 0;
  for (; spawns < max_spawns && !b_found; ++spawns) {
    std::thread t([&] {
      if (gettid_now() != target) return;
      b_found = true;
      // B's own identity, read by B itself so it is certainly B's.
      if (auto st = read_task_stat(getpid(), target)) b_start = st->start_ticks;
      for (int i = 0; i < 20; ++i) {
        burn_until(mono_ns() + 2'000'000);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    t.join();
  }
  const c2c_stats s2 = sched::read_pinned_stats();
  map.del(static_cast<uint32_t>(target));

  const uint64_t a_dispatched = s1.dispatched[C2C_CLASS_THROUGHPUT] - s0.dispatched[C2C_CLASS_THROUGHPUT];
  const uint64_t b_dispatched = s2.dispatched[C2C_CLASS_THROUGHPUT] - s1.dispatched[C2C_CLASS_THROUGHPUT];
  const uint64_t b_mismatches = s2.identity_mismatches - s1.identity_mismatches;
  const bool pass = b_found && b_start != 0 && b_start != a_stat->start_ticks && a_dispatched > 0 &&
                    b_dispatched == 0 && b_mismatches > 0;
  json j{{"scenario", "tid_reuse"}, {"tid", target}, {"a_start_ticks", a_stat->start_ticks},
         {"b_start_ticks", b_start}, {"reused", b_found.load()}, {"spawns", spawns},
         {"a_throughput_dispatches", a_dispatched}, {"b_throughput_dispatches", b_dispatched},
         {"b_identity_mismatches", b_mismatches}, {"pass", pass}};
  std::cout << j.dump() << std::endl;
  return pass ? 0 : 1;
}

// ---- slice: two CPU hogs sharing one CPU switch as often as their slice says ------------------
// Three phases of the same pair: untracked on a node without entries (scx_simple's long slice,
// c2c_untracked_slice), untracked while the map holds an entry (the witness: this tool's main
// thread, which only sleeps; the default slice), and tracked with a slice-only policy.
int cmd_slice(int cpu, uint64_t slice_us, int duration_ms) {
  PolicyMap map;
  enum class Phase { NoEntries, Untracked, Custom };
  auto run_pair = [&](Phase phase) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false}, stop{false};
    pid_t tids[2] = {0, 0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 2; ++i)
      ts.emplace_back([&, i] {
        pin_self(cpu);
        tids[i] = gettid_now();
        ++ready;
        while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        while (!stop) {
        }
      });
    while (ready < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (phase == Phase::Custom) {
      PolicySpec spec;
      spec.exec_class = C2C_CLASS_NORMAL;
      spec.slice_ns = slice_us * 1000ull;
      for (pid_t t : tids) map.put_task(getpid(), t, spec);
    }
    go = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // settle
    uint64_t before = 0, after = 0;
    for (pid_t t : tids) before += read_ctxt_switches(getpid(), t, false);
    const uint64_t t0 = mono_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(duration_ms));
    for (pid_t t : tids) after += read_ctxt_switches(getpid(), t, false);
    const double secs = static_cast<double>(mono_ns() - t0) / 1e9;
    stop = true;
    for (auto& t : ts) t.join();
    if (phase == Phase::Custom)
      for (pid_t t : tids) map.del(static_cast<uint32_t>(t));
    return static_cast<double>(after - before) / secs;
  };
  // The first phase needs a map without entries: another scenario's leftovers are reported.
  const size_t entries_before = map.entries();
  const double no_entries = run_pair(Phase::NoEntries);
  PolicySpec witness;
  witness.exec_class = C2C_CLASS_NORMAL;
  map.put_task(getpid(), getpid(), witness);
  const c2c_stats s0 = sched::read_pinned_stats();
  const double base = run_pair(Phase::Untracked);
  const c2c_stats s1 = sched::read_pinned_stats();
  const double custom = run_pair(Phase::Custom);
  const c2c_stats s2 = sched::read_pinned_stats();
  map.del(static_cast<uint32_t>(getpid()));
  const uint64_t normal_base = s1.dispatched[C2C_CLASS_NORMAL] - s0.dispatched[C2C_CLASS_NORMAL];
  const uint64_t normal_custom = s2.dispatched[C2C_CLASS_NORMAL] - s1.dispatched[C2C_CLASS_NORMAL];
  // Two CPU-bound threads on one CPU switch once per slice: the custom slice must change the
  // involuntary switch rate by its ratio to the default, in the right direction. Under TCG on a
  // busy host the guest's ticks arrive late and bunched, so 3x is required of a 10x ratio.
  const double expected = static_cast<double>(C2C_DEFAULT_SLICE_NS) / static_cast<double>(slice_us * 1000);
  const double seen = custom / std::max(base, 1.0);
  const bool right_way = expected >= 1.0 ? seen >= std::min(3.0, expected) : seen <= std::max(1.0 / 3.0, expected);
  // Without entries the pair runs scx_simple's slice: 6.7x fewer switches than with the witness
  // entry there (3x required, as above).
  const double expected_long = static_cast<double>(C2C_UNTRACKED_LONG_SLICE_NS) / static_cast<double>(C2C_DEFAULT_SLICE_NS);
  const double seen_long = base / std::max(no_entries, 1.0);
  const bool long_ok = entries_before == 0 && seen_long >= std::min(3.0, expected_long);
  const bool pass = std::abs(expected - 1.0) > 0.5 && right_way && normal_custom > 0 && long_ok;
  json j{{"scenario", "slice"}, {"cpu", cpu}, {"slice_us", slice_us},
         {"default_slice_us", C2C_DEFAULT_SLICE_NS / 1000}, {"expected_rate_ratio", expected},
         {"nvcsw_per_s_default", base}, {"nvcsw_per_s_custom", custom}, {"rate_ratio", seen},
         {"normal_dispatches_default", normal_base}, {"normal_dispatches_custom", normal_custom},
         {"entries_before", entries_before}, {"untracked_long_slice_us", C2C_UNTRACKED_LONG_SLICE_NS / 1000},
         {"nvcsw_per_s_no_entries", no_entries}, {"expected_long_rate_ratio", expected_long},
         {"long_rate_ratio", seen_long}, {"pass", pass}};
  std::cout << j.dump() << std::endl;
  return pass ? 0 : 1;
}

// ---- spin: a busy and a periodic thread; reports the longest gap each saw -------------------
int cmd_spin(int duration_ms) {
  const uint64_t end = mono_ns() + static_cast<uint64_t>(duration_ms) * 1000000ull;
  uint64_t busy_gap = 0, sleep_gap = 0, busy_loops = 0, wakeups = 0;
  std::thread busy([&] {
    uint64_t last = mono_ns();
    for (uint64_t now = last; now < end; now = mono_ns()) {
      busy_gap = std::max(busy_gap, now - last);
      last = now;
      ++busy_loops;
    }
  });
  std::thread sleeper([&] {
    uint64_t last = mono_ns();
    while (last < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const uint64_t now = mono_ns();
      sleep_gap = std::max(sleep_gap, now - last);
      last = now;
      ++wakeups;
    }
  });
  busy.join();
  sleeper.join();
  // Nothing may stall for a second, whatever happens to the scheduler meanwhile.
  const bool pass = busy_gap < 1'000'000'000ull && sleep_gap < 1'000'000'000ull && wakeups > 0;
  json j{{"scenario", "spin"}, {"busy_max_gap_ms", busy_gap / 1000000}, {"sleep_max_gap_ms", sleep_gap / 1000000},
         {"busy_loops", busy_loops}, {"wakeups", wakeups}, {"pass", pass}};
  std::cout << j.dump() << std::endl;
  return pass ? 0 : 1;
}

// ---- starve: a boosted CPU hog must not starve an unmatched and a background hog (INV-8) ------
//
// Three CPU-bound threads pinned to one CPU: one latency-critical with a live boost lease, one
// with no policy, one in class background. The boost must win most of the CPU, yet the others
// must keep running: the longest time each went without the CPU stays far below the sched_ext
// watchdog, the CPU's boost budget is seen ending boosted runs, and the starvation bound is seen
// serving the background queue. Exit 0 when all of that holds.
// --no-boost: two unmatched hogs and the background one. No task above the normal class waits and
// none runs boosted, so while the background runs dispatch serves the normal queue without the
// rescue's reads (c2c_dispatch); while a normal hog runs, the other one waits in the normal queue,
// which is never empty when dispatch runs, so only the starvation bound gives the background the
// CPU. (With a single normal hog the two would just alternate: dispatch runs before the hog whose
// slice ended is queued again, finds the normal queue empty and serves the background.)
int cmd_starve(int cpu, int duration_ms, uint64_t max_gap_ms, bool no_boost) {
  struct Hog {
    const char* name;
    std::optional<PolicySpec> spec;
    pid_t tid = 0;
    uint64_t max_gap_ns = 0;
    uint64_t cpu_ns = 0;
  };
  PolicySpec lc;
  lc.exec_class = C2C_CLASS_LATENCY_CRITICAL;
  lc.boost_ns = 60'000'000'000ull;
  PolicySpec bg;
  bg.exec_class = C2C_CLASS_BACKGROUND;
  std::vector<Hog> hogs{{"boosted", lc}, {"unmatched", std::nullopt}, {"background", bg}};
  if (no_boost) hogs.front() = {"unmatched2", std::nullopt};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  uint64_t start = 0, end = 0;
  std::vector<std::thread> ts;
  for (auto& h : hogs)
    ts.emplace_back([&, hp = &h] {
      pin_self(cpu);
      hp->tid = gettid_now();
      ++ready;
      while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      timespec c0{}, c1{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
      // Gaps count from the common start to the end: a thread that never gets the CPU, or loses
      // it for good, shows the whole wait.
      uint64_t last = start;
      for (uint64_t now = mono_ns();; now = mono_ns()) {
        hp->max_gap_ns = std::max(hp->max_gap_ns, now - last);
        last = now;
        if (now >= end) break;
      }
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
      hp->cpu_ns = static_cast<uint64_t>((c1.tv_sec - c0.tv_sec) * 1'000'000'000ll + (c1.tv_nsec - c0.tv_nsec));
    });
  while (ready < static_cast<int>(hogs.size())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  PolicyMap map;
  for (auto& h : hogs)
    if (h.spec) map.put_task(getpid(), h.tid, *h.spec);
  const c2c_stats s0 = sched::read_pinned_stats();
  start = mono_ns();
  end = start + static_cast<uint64_t>(duration_ms) * 1'000'000ull;
  go = true;
  for (auto& t : ts) t.join();
  const c2c_stats s1 = sched::read_pinned_stats();
  for (auto& h : hogs)
    if (h.spec) map.del(static_cast<uint32_t>(h.tid));

  uint64_t total = 0;
  for (auto& h : hogs) total += h.cpu_ns;
  const double boosted_share =
      no_boost || !total ? 0.0 : static_cast<double>(hogs[0].cpu_ns) / static_cast<double>(total);
  const uint64_t exhausted = s1.boost_budget_exhausted - s0.boost_budget_exhausted;
  const uint64_t rescues = s1.starvation_rescues - s0.starvation_rescues;
  bool nobody_starved = true;
  json threads = json::object();
  for (auto& h : hogs) {
    nobody_starved = nobody_starved && h.max_gap_ns <= max_gap_ms * 1'000'000ull && h.cpu_ns > 0;
    threads[h.name] = {{"max_gap_ms", static_cast<double>(h.max_gap_ns) / 1e6},
                       {"cpu_share", total ? static_cast<double>(h.cpu_ns) / static_cast<double>(total) : 0.0}};
  }
  const bool boost_ok = no_boost || (boosted_share >= 0.5 && exhausted > 0);
  const bool pass = nobody_starved && boost_ok && rescues > 0;
  json j{{"scenario", no_boost ? "starve_no_boost" : "starve"}, {"cpu", cpu}, {"duration_ms", duration_ms},
         {"max_gap_ms_allowed", max_gap_ms}, {"threads", threads}, {"boost_budget_exhausted", exhausted},
         {"starvation_rescues", rescues}, {"nobody_starved", nobody_starved}, {"pass", pass}};
  if (!no_boost) j["boost_in_force"] = boosted_share >= 0.5;
  std::cout << j.dump() << std::endl;
  return pass ? 0 : 1;
}

// ---- stale: entries the scheduler must not boost by (INV-2, INV-8), watched by the oracle ------
//
// Three CPU hogs pinned to one CPU: one whose entry (its own tid and start) carries another ABI
// version, written past the mirror (which would stamp the right one), with a 60 s boost lease;
// one whose boost lease ran out before it started; one with no policy, so the CPU is contended.
// The scheduler must ignore the first entry (identity_mismatches) and let the second lease
// expire (boost_expired), and the run-time oracle (c2c_stats.oracle_*) must count nothing. A
// scheduler that boosts by either entry (tests/mutants/kernel.tsv: inv2-no-abi-check,
// inv8-lease-ignored) makes oracle_stale_identity or oracle_past_lease count.
int cmd_stale(int cpu, int duration_ms) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  uint64_t end = 0;
  pid_t tids[3] = {0, 0, 0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 3; ++i)
    ts.emplace_back([&, i] {
      pin_self(cpu);
      tids[i] = gettid_now();
      ++ready;
      while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      burn_until(end);
    });
  while (ready < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  // Before the entries exist: the waiting hogs wake every 1 ms, so the scheduler meets both
  // entries (and counts the mismatch and the expiry) before the hogs start burning.
  const c2c_stats s0 = sched::read_pinned_stats();
  PolicySpec lc;
  lc.exec_class = C2C_CLASS_LATENCY_CRITICAL;
  lc.boost_ns = 60'000'000'000ull;
  auto a_stat = read_task_stat(getpid(), tids[0]);
  if (!a_stat) throw std::runtime_error("stale: cannot read thread 0's stat");
  c2c_policy_value wrong_abi = make_value(lc, getpid(), a_stat->start_ticks);
  wrong_abi.abi_version = C2C_ABI_VERSION + 1;
  const int policy_fd = bpf_obj_get(C2C_POLICY_PIN);
  if (policy_fd < 0) throw std::runtime_error(std::string("stale: ") + C2C_POLICY_PIN + ": " + std::strerror(errno));
  c2c_task_key key{static_cast<__u32>(tids[0])};
  if (bpf_map_update_elem(policy_fd, &key, &wrong_abi, BPF_ANY) != 0) {
    const int err = errno;
    close(policy_fd);
    throw std::runtime_error(std::string("stale: writing the wrong-ABI entry: ") + std::strerror(err));
  }
  PolicyMap map;
  PolicySpec expired = lc;
  expired.boost_ns = 1'000'000ull;  // 1 ms: over before the hogs start
  map.put_task(getpid(), tids[1], expired);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));

  end = mono_ns() + static_cast<uint64_t>(duration_ms) * 1'000'000ull;
  go = true;
  for (auto& t : ts) t.join();
  const c2c_stats s1 = sched::read_pinned_stats();
  bpf_map_delete_elem(policy_fd, &key);
  close(policy_fd);
  map.del(static_cast<uint32_t>(tids[1]));

  const uint64_t mismatches = s1.identity_mismatches - s0.identity_mismatches;
  const uint64_t expired_leases = s1.boost_expired - s0.boost_expired;
  const uint64_t lc_dispatches = s1.dispatched[C2C_CLASS_LATENCY_CRITICAL] - s0.dispatched[C2C_CLASS_LATENCY_CRITICAL];
  const json oracle{{"cpu_outside", s1.oracle_cpu_outside - s0.oracle_cpu_outside},
                    {"stale_identity", s1.oracle_stale_identity - s0.oracle_stale_identity},
                    {"past_lease", s1.oracle_past_lease - s0.oracle_past_lease}};
  const bool oracle_zero = oracle["cpu_outside"] == 0 && oracle["stale_identity"] == 0 && oracle["past_lease"] == 0;
  const bool pass = oracle_zero && mismatches > 0 && expired_leases > 0;
  json j{{"scenario", "stale"}, {"cpu", cpu}, {"duration_ms", duration_ms}, {"identity_mismatches", mismatches},
         {"boost_expired", expired_leases}, {"lc_dispatches", lc_dispatches}, {"oracle", oracle},
         {"oracle_zero", oracle_zero}, {"pass", pass}};
  std::cout << j.dump() << std::endl;
  return pass ? 0 : 1;
}

// ---- progs: what the verifier made of the loaded scheduler ---------------------------------------
//
// One JSON line: per program named c2c_* (the struct_ops callbacks of bpf/claim2core.bpf.c and the
// daemon's task tracepoints), or with struct_ops_only every struct_ops program (any scheduler's,
// scx_simple's too), the instructions the verifier processed (verified_insns), the translated
// length, the time spent in it and its runs (run_time_ns, run_cnt: counted only while
// kernel.bpf_stats_enabled is 1), and their sums. The guest prints it after loading the scheduler
// (tests/vm/README.md records the figures) and around a hackbench run with the stats on.
int cmd_progs(bool struct_ops_only) {
  json progs = json::object();
  uint64_t verified = 0, xlated = 0, run_ns = 0, runs = 0;
  for (__u32 id = 0; bpf_prog_get_next_id(id, &id) == 0;) {
    const int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_prog_info info{};
    __u32 len = sizeof(info);
    const int rc = bpf_obj_get_info_by_fd(fd, &info, &len);
    close(fd);
    if (rc != 0) continue;
    if (struct_ops_only ? info.type != BPF_PROG_TYPE_STRUCT_OPS : std::strncmp(info.name, "c2c_", 4) != 0) continue;
    progs[info.name] = {{"verified_insns", info.verified_insns}, {"xlated_insns", info.xlated_prog_len / 8},
                        {"run_time_ns", info.run_time_ns}, {"run_cnt", info.run_cnt}};
    verified += info.verified_insns;
    xlated += info.xlated_prog_len / 8;
    run_ns += info.run_time_ns;
    runs += info.run_cnt;
  }
  const bool pass = !progs.empty();
  std::cout << json{{"scenario", "progs"}, {"programs", progs}, {"verified_insns_total", verified},
                    {"xlated_insns_total", xlated}, {"run_time_ns_total", run_ns}, {"run_cnt_total", runs},
                    {"pass", pass}}.dump()
            << std::endl;
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"claim2core guest scenario tool"};
  app.require_subcommand(1);
  std::string cls, allowed, preferred, cgroup;
  int pid = 0, device_node = -1;
  int tid = 0, tgid = 0, duration_ms = 2000, period_us = 1000, cpu = 0, max_spawns = 200000, rounds = 100;
  uint64_t slice_us = 0, boost_ms = 0;

  auto add_policy_opts = [&](CLI::App* c) {
    c->add_option("--class", cls, "lc|comm|throughput|background|normal");
    c->add_option("--slice-us", slice_us);
    c->add_option("--boost-ms", boost_ms);
    c->add_option("--allowed", allowed, "CPU list");
    c->add_option("--preferred", preferred, "CPU list");
  };
  auto* put = app.add_subcommand("put", "write one policy entry for a live task");
  put->add_option("--tid", tid)->required();
  put->add_option("--tgid", tgid);
  add_policy_opts(put);
  auto* stats = app.add_subcommand("stats", "print the scheduler statistics");
  std::string stats_pin_root = C2C_PIN_ROOT;
  stats->add_option("--pin-root", stats_pin_root, "bpffs directory holding c2c_stats (a daemon's private pin root)")
      ->capture_default_str();
  auto* lat = app.add_subcommand("latency", "wakeup latency probe");
  add_policy_opts(lat);
  lat->add_option("--cgroup", cgroup);
  lat->add_option("--duration-ms", duration_ms);
  lat->add_option("--period-us", period_us)->check(CLI::PositiveNumber);
  lat->add_option("--device-node", device_node, "the counters' device_local_share is for this NUMA node");
  auto* reuse = app.add_subcommand("reuse", "TID reuse scenario (INV-2)");
  reuse->add_option("--max-spawns", max_spawns);
  auto* slice = app.add_subcommand("slice", "slice-only policy scenario");
  slice->add_option("--cpu", cpu)->required();
  slice->add_option("--slice-us", slice_us)->default_val(30000);
  slice->add_option("--duration-ms", duration_ms)->default_val(1000);
  auto* spin = app.add_subcommand("spin", "progress probe for the unload scenario");
  spin->add_option("--duration-ms", duration_ms);
  // Far above the 40 ms background bound and below the 5 s watchdog: a host that stalls the
  // whole guest for a moment stalls every thread alike, and must not read as starvation.
  uint64_t max_gap_ms = 500;
  auto* starve = app.add_subcommand("starve", "a boosted CPU hog vs an unmatched and a background hog (INV-8)");
  starve->add_option("--cpu", cpu);
  starve->add_option("--duration-ms", duration_ms);
  starve->add_option("--max-gap-ms", max_gap_ms, "the longest any hog may go without the CPU")->capture_default_str();
  bool no_boost = false;
  starve->add_flag("--no-boost", no_boost, "two unmatched hogs and the background one: no class above normal waits");
  auto* syncwake = app.add_subcommand("syncwake", "a boosted task woken by a sync wakeup preempts its waker");
  syncwake->add_option("--cpu", cpu, "the writer's CPU");
  syncwake->add_option("--rounds", rounds)->check(CLI::PositiveNumber)->capture_default_str();
  auto* inherit = app.add_subcommand("inherit", "a boosted writer's reader inherits its boost only when it opted in");
  inherit->add_option("--cpu", cpu, "the writer's CPU");
  inherit->add_option("--rounds", rounds)->check(CLI::PositiveNumber)->capture_default_str();
  auto* stale = app.add_subcommand("stale", "entries the scheduler must not boost by; the oracle stays 0");
  stale->add_option("--cpu", cpu);
  stale->add_option("--duration-ms", duration_ms);
  auto* progs = app.add_subcommand("progs", "the verifier's and run-time figures of the loaded scheduler programs");
  bool struct_ops_only = false;
  progs->add_flag("--struct-ops", struct_ops_only, "every struct_ops program (any scheduler's), not the c2c_* ones");
  std::string device;
  auto* prefer = app.add_subcommand("prefer", "a probe preferring a device's local CPUs runs there (issue #16)");
  prefer->add_option("--device", device, "PCI bus id, e.g. 0000:81:00.0")->required();
  prefer->add_option("--duration-ms", duration_ms);
  auto* taskcnt = app.add_subcommand("taskcnt", "the scheduler's per-task counters of one task (c2c_task_cnt)");
  taskcnt->add_option("--pid", pid, "a process or thread id")->required();
  taskcnt->add_option("--device-node", device_node, "adds device_local_ns / device_local_share for this NUMA node");
  taskcnt->add_option("--pin-root", stats_pin_root, "bpffs directory holding c2c_task_cnt");
  auto* ctxgone = app.add_subcommand("ctxgone", "a task without its context stops the scheduler (scx_bpf_error)");
  int wait_ms = 2000;
  ctxgone->add_option("--cpu", cpu, "the CPU both hogs share")->required();
  ctxgone->add_option("--wait-ms", wait_ms, "how long to wait for the scheduler to stop")->capture_default_str();
  ctxgone->add_option("--pin-root", stats_pin_root, "bpffs directory holding c2c_task_cnt");
  CLI11_PARSE(app, argc, argv);

  try {
    auto spec = [&]() -> std::optional<PolicySpec> {
      if (cls.empty()) return std::nullopt;
      PolicySpec s;
      s.exec_class = parse_class(cls);
      s.slice_ns = slice_us * 1000ull;
      s.boost_ns = boost_ms * 1000000ull;
      s.allowed = parse_cpus(allowed, "policy.allowedCpus");
      s.preferred = parse_cpus(preferred, "policy.preferredCpus");
      return s;
    };
    if (*put) {
      PolicyMap map;
      auto s = spec();
      if (!s) throw std::invalid_argument("policy.class: required for put");
      map.put_task(tgid ? tgid : tid, tid, *s);
      return 0;
    }
    if (*stats) {
      std::cout << sched::stats_json(sched::read_pinned_stats(stats_pin_root + "/" + C2C_STATS_MAP_NAME)) << std::endl;
      return 0;
    }
    if (*lat) {
      auto s = spec();
      return cmd_latency(s ? &*s : nullptr, cgroup, duration_ms, period_us, device_node);
    }
    if (*reuse) return cmd_reuse(max_spawns);
    if (*slice) return cmd_slice(cpu, slice_us, duration_ms);
    if (*spin) return cmd_spin(duration_ms);
    if (*starve) return cmd_starve(cpu, duration_ms, max_gap_ms, no_boost);
    if (*stale) return cmd_stale(cpu, duration_ms);
    if (*syncwake) return cmd_sync_wakeup(cpu, rounds);
    if (*inherit) return cmd_inherit(cpu, rounds);
    if (*progs) return cmd_progs(struct_ops_only);
    if (*ctxgone) return cmd_ctx_missing(cpu, stats_pin_root, wait_ms);
    if (*prefer) return cmd_prefer(device, duration_ms);
    if (*taskcnt) {
      std::string why;
      const auto c = read_task_counters(pid, stats_pin_root, &why);
      if (!c) throw std::runtime_error("taskcnt: " + why);
      std::cout << counters_json(*c, device_node).dump() << std::endl;
      return 0;
    }
  } catch (const std::exception& e) {
    std::cout << json{{"error", e.what()}, {"pass", false}}.dump() << std::endl;
    return 2;
  }
  return 2;
}
