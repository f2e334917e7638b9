// c2c-exp-work: the experiment's workloads (tests/vm/experiment-guest.sh). Each one measures itself
// and prints one JSON line of figures; with --samples FILE it also writes every raw sample, one
// metric per line ("<metric> v1 v2 ..." in microseconds), for the CSVs and CDFs on the host.
//
//   probe   a periodic sleeper (1 ms): timer lateness and runnable-to-running delay per cycle
//   decode  an LLM-like host loop feeding a simulated device every --step-ms
//   upf-fwd / upf-gen / upf-sink   a UDP user-plane path between network namespaces
//   hog     a CPU hog that records how long it went without the CPU (starvation duration)
//
// The measured thread names itself (prctl PR_SET_NAME) so that policies select it by comm, and
// waits for --start-file before measuring, so that the runner can apply policies first. Every
// thread's CPU time is attributed to the CPU it ran on (sched_getcpu per iteration), which gives
// migrations, NUMA-node migrations and the device-local share (--local-cpus, from sysfs).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "exp_stats.hpp"
#include "vm_proc.hpp"

namespace {

using nlohmann::json;
using c2c::exp::Locality;
using c2c::exp::mono_ns;
using c2c::exp::Samples;

void name_thread(const std::string& name) { prctl(PR_SET_NAME, name.c_str(), 0, 0, 0); }

void wait_start(const std::string& file) {
  if (file.empty()) return;
  while (access(file.c_str(), F_OK) != 0) usleep(5000);
}

// The calling thread's time runnable but not running since construction (schedstat), in ms: which
// hop of the UPF path waited for a CPU.
class WaitedMs {
 public:
  WaitedMs() : start_(reader_.read().value_or(0)) {}
  double ms() const { return static_cast<double>(reader_.read().value_or(start_) - start_) / 1e6; }

 private:
  c2c::vm::RunDelayReader reader_;
  uint64_t start_;
};

void sleep_until(uint64_t t) {
  timespec ts{static_cast<time_t>(t / 1000000000ull), static_cast<long>(t % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// W microseconds of this thread's CPU time: contention adds wall time, not less work.
void burn_cpu_us(uint64_t us) {
  const uint64_t end = thread_cpu_ns() + us * 1000;
  while (thread_cpu_ns() < end) {
  }
}

// ---- probe ----------------------------------------------------------------------------------
int cmd_probe(int duration_ms, int period_us, const std::string& name, const std::string& start, Samples& out,
              Locality& loc) {
  name_thread(name);
  wait_start(start);
  const c2c::vm::RunDelayReader rd;
  c2c::exp::CtxSwitches cs;
  auto& lat = out.metric("timer_lateness_us");
  auto& delay = out.metric("run_delay_us");
  auto before = rd.read();
  const uint64_t end = mono_ns() + static_cast<uint64_t>(duration_ms) * 1000000ull;
  loc.begin();
  while (true) {
    const uint64_t next = mono_ns() + static_cast<uint64_t>(period_us) * 1000ull;
    sleep_until(next);
    const uint64_t now = mono_ns();
    lat.push_back(static_cast<double>(now > next ? now - next : 0) / 1000);
    if (auto d = rd.read(); d && before && *d >= *before) {
      delay.push_back(static_cast<double>(*d - *before) / 1000);
      before = d;
    }
    loc.step();
    if (now >= end) break;
  }
  json j{{"workload", "probe"}, {"samples", lat.size()}, {"timer_lateness", c2c::exp::summary(lat)},
         {"run_delay", c2c::exp::summary(delay)}, {"ctx_switches", cs.delta()}};
  j.update(loc.json());
  std::cout << j.dump() << std::endl;
  return lat.empty() || delay.empty() ? 1 : 0;
}

// ---- decode: an LLM-like host loop ---------------------------------------------------------------
// Requests arrive every --burst-every-ms (closed loop, below); per token the host thread does
// --work-us of CPU (sampling, detokenizing), then submits the next step to the simulated device,
// which computes for --step-ms without host CPU (an accelerator) and completes at submit + step;
// the host thread waits for the completion and notices it when it runs again. The token counts
// from then (the host can only use it then); the device waits for the host between its
// completion and the next submit: that wait is the device idle gap. Only the host thread is
// scheduled, as on a real accelerator.
int cmd_decode(int duration_ms, int step_ms, int work_us, int tokens, int burst_every_ms, const std::string& start,
               Samples& out, Locality& loc) {
  name_thread("decode");
  wait_start(start);
  c2c::exp::CtxSwitches cs;
  auto& itl = out.metric("inter_token_us");
  auto& ttft = out.metric("ttft_us");
  auto& idle = out.metric("device_idle_gap_us");
  const uint64_t step_ns = static_cast<uint64_t>(step_ms) * 1000000ull;
  const uint64_t t0 = mono_ns(), end = t0 + static_cast<uint64_t>(duration_ms) * 1000000ull;
  uint64_t emitted = 0;
  loc.begin();
  // A closed-loop client: a request every --burst-every-ms, or as soon as the previous one is
  // done when it took longer (no backlog, so TTFT is the scheduling's, not a queue's).
  for (uint64_t next = t0; next < end; next += static_cast<uint64_t>(burst_every_ms) * 1000000ull) {
    const uint64_t arrival = std::max(next, mono_ns());
    sleep_until(arrival);
    uint64_t prev_seen = 0, prev_done = 0;
    for (int k = 0; k < tokens; ++k) {
      burn_cpu_us(static_cast<uint64_t>(work_us));
      const uint64_t submit = mono_ns();
      if (prev_done) idle.push_back(static_cast<double>(submit - prev_done) / 1000);
      const uint64_t done = submit + step_ns;
      sleep_until(done);  // the completion (an interrupt or a poll on a real device)
      const uint64_t seen = mono_ns();
      if (k == 0) ttft.push_back(static_cast<double>(seen - arrival) / 1000);
      else itl.push_back(static_cast<double>(seen - prev_seen) / 1000);
      prev_seen = seen;
      prev_done = done;
      ++emitted;
      loc.step();
    }
  }
  const double secs = static_cast<double>(mono_ns() - t0) / 1e9;
  json j{{"workload", "decode"}, {"step_ms", step_ms}, {"work_us", work_us}, {"tokens", emitted},
         {"tokens_per_s", secs > 0 ? static_cast<double>(emitted) / secs : 0.0},
         {"inter_token", c2c::exp::summary(itl)}, {"ttft", c2c::exp::summary(ttft)},
         {"device_idle_gap", c2c::exp::summary(idle)}, {"ctx_switches", cs.delta()}};
  j.update(loc.json());
  std::cout << j.dump() << std::endl;
  return emitted == 0 ? 1 : 0;
}

// ---- UPF-like user plane ----------------------------------------------------------------------
sockaddr_in addr_of(const std::string& hostport) {
  const auto colon = hostport.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("address " + hostport + ": expected IP:PORT");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(hostport.substr(colon + 1))));
  if (inet_pton(AF_INET, hostport.substr(0, colon).c_str(), &a.sin_addr) != 1)
    throw std::invalid_argument("address " + hostport + ": not an IPv4 address");
  return a;
}

int udp_bound(const std::string& hostport) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const sockaddr_in a = addr_of(hostport);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error("bind " + hostport + ": " + std::strerror(errno));
  return fd;
}

struct Packet {
  uint64_t seq;
  uint64_t sent_ns;
};

// The UPF's forwarder and echo run until the runner's SIGTERM (once the generator is done) and
// still report; --duration-ms only bounds them.
volatile sig_atomic_t stop_requested = 0;

void stop_on_sigterm() {
  struct sigaction sa {};
  sa.sa_handler = [](int) { stop_requested = 1; };
  sigaction(SIGTERM, &sa, nullptr);  // no SA_RESTART: poll() returns EINTR and the loop ends
}

// The forwarder (the UPF's user-plane thread): N3 side (from the generator) <-> N6 side (sink).
int cmd_upf_fwd(int duration_ms, const std::string& n3, const std::string& n6, const std::string& sink,
                const std::string& start, Locality& loc) {
  name_thread("upf-fwd");
  stop_on_sigterm();
  const int a = udp_bound(n3), b = udp_bound(n6);
  const sockaddr_in dn = addr_of(sink);
  sockaddr_in ran{};
  bool have_ran = false;
  wait_start(start);
  c2c::exp::CtxSwitches cs;
  WaitedMs waited;
  uint64_t up = 0, down = 0, send_errors = 0;
  int last_send_errno = 0;
  // A packet the kernel refused to send is lost here, not on the wire: count it and keep why.
  const auto forward = [&](int fd, const char* data, ssize_t n, const sockaddr_in& to) {
    if (sendto(fd, data, static_cast<size_t>(n), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) < 0) {
      ++send_errors;
      last_send_errno = errno;
    }
  };
  const uint64_t end = mono_ns() + static_cast<uint64_t>(duration_ms) * 1000000ull;
  char buf[2048];
  loc.begin();
  while (!stop_requested && mono_ns() < end) {
    pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    if (poll(p, 2, 50) <= 0) continue;
    if (p[0].revents & POLLIN) {
      socklen_t len = sizeof ran;
      const ssize_t n = recvfrom(a, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&ran), &len);
      if (n > 0) {
        have_ran = true;
        forward(b, buf, n, dn);
        ++up;
      }
    }
    if ((p[1].revents & POLLIN) && have_ran) {
      const ssize_t n = recv(b, buf, sizeof buf, 0);
      if (n > 0) {
        forward(a, buf, n, ran);
        ++down;
      }
    }
    loc.step();
  }
  json j{{"workload", "upf-fwd"}, {"forwarded_up", up}, {"forwarded_down", down}, {"send_errors", send_errors},
         {"last_send_error", last_send_errno ? std::strerror(last_send_errno) : ""}, {"ctx_switches", cs.delta()},
         {"waited_ms", waited.ms()}};
  j.update(loc.json());
  std::cout << j.dump() << std::endl;
  return 0;
}

int cmd_upf_sink(int duration_ms, const std::string& listen, const std::string& start) {
  name_thread("upf-sink");
  stop_on_sigterm();
  const int fd = udp_bound(listen);
  // Its lifetime counts from the start, as the forwarder's and the generator's do: counted from
  // its own launch it ended before the traffic whenever the runner's apply took longer than the
  // margin, and every packet after that met no socket (the "loss" under claim2core, #16).
  wait_start(start);
  const uint64_t end = mono_ns() + static_cast<uint64_t>(duration_ms) * 1000000ull;
  char buf[2048];
  uint64_t n_echo = 0;
  c2c::exp::CtxSwitches cs;
  WaitedMs waited;
  while (!stop_requested && mono_ns() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const ssize_t n = recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n > 0 && sendto(fd, buf, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), len) == n) ++n_echo;
  }
  std::cout << json{{"workload", "upf-sink"}, {"echoed", n_echo}, {"ctx_switches", cs.delta()}, {"waited_ms", waited.ms()}}.dump()
            << std::endl;
  return 0;
}

// The traffic generator: --pps packets per second to the forwarder, RTT from the echo.
int cmd_upf_gen(int duration_ms, int pps, const std::string& bind_to, const std::string& target,
                const std::string& start, Samples& out) {
  name_thread("upf-gen");
  const int fd = udp_bound(bind_to);
  const sockaddr_in dst = addr_of(target);
  wait_start(start);
  auto& rtt = out.metric("rtt_us");
  std::atomic<bool> done{false};
  std::atomic<uint64_t> received{0};
  double rx_waited_ms = 0;
  WaitedMs waited;
  std::thread rx([&] {
    name_thread("upf-gen-rx");
    WaitedMs rx_waited;
    Packet pk{};
    while (!done) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      if (recv(fd, &pk, sizeof pk, 0) == static_cast<ssize_t>(sizeof pk)) {
        rtt.push_back(static_cast<double>(mono_ns() - pk.sent_ns) / 1000);
        ++received;
      }
    }
    rx_waited_ms = rx_waited.ms();
  });
  const uint64_t period = 1000000000ull / static_cast<uint64_t>(std::max(pps, 1));
  const uint64_t t0 = mono_ns(), end = t0 + static_cast<uint64_t>(duration_ms) * 1000000ull;
  uint64_t sent = 0;
  for (uint64_t t = t0; t < end; t += period) {
    sleep_until(t);
    Packet pk{sent, mono_ns()};
    if (sendto(fd, &pk, sizeof pk, 0, reinterpret_cast<const sockaddr*>(&dst), sizeof dst) == sizeof pk) ++sent;
  }
  usleep(300000);  // stragglers
  done = true;
  rx.join();
  double jitter = 0;  // mean |RTT_i - RTT_i-1| (RFC 3550's estimator without the smoothing)
  for (size_t i = 1; i < rtt.size(); ++i) jitter += std::abs(rtt[i] - rtt[i - 1]);
  if (rtt.size() > 1) jitter /= static_cast<double>(rtt.size() - 1);
  json j{{"workload", "upf"}, {"pps", pps}, {"sent", sent}, {"received", received.load()},
         {"loss", sent ? 1.0 - static_cast<double>(received.load()) / static_cast<double>(sent) : 1.0},
         {"rtt", c2c::exp::summary(rtt)}, {"jitter_us", jitter}, {"waited_ms", waited.ms()}, {"rx_waited_ms", rx_waited_ms}};
  std::cout << j.dump() << std::endl;
  return sent == 0 ? 1 : 0;
}

// ---- hog: starvation duration of a background thread -----------------------------------------------
int cmd_hog(int duration_ms, const std::string& start, Samples& out) {
  name_thread("bg-hog");
  wait_start(start);
  auto& gaps = out.metric("starvation_gap_us");
  const uint64_t t0 = mono_ns(), end = t0 + static_cast<uint64_t>(duration_ms) * 1000000ull;
  const uint64_t cpu0 = thread_cpu_ns();
  uint64_t prev = t0, longest = 0;
  while (prev < end) {
    const uint64_t now = mono_ns();
    // A jump of more than 100 us between two clock reads: the thread was off the CPU.
    if (now - prev > 100000) {
      gaps.push_back(static_cast<double>(now - prev) / 1000);
      longest = std::max(longest, now - prev);
    }
    prev = now;
  }
  const double wall = static_cast<double>(mono_ns() - t0);
  json j{{"workload", "hog"}, {"longest_gap_us", static_cast<double>(longest) / 1000}, {"gaps", gaps.size()},
         {"cpu_share", wall > 0 ? static_cast<double>(thread_cpu_ns() - cpu0) / wall : 0.0}};
  std::cout << j.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the 2x2 experiment's workloads"};
  app.require_subcommand(1);
  int duration_ms = 3000, period_us = 1000, step_ms = 2, work_us = 300, tokens = 40, burst_ms = 250, pps = 1000;
  std::string start, samples, local_cpus, name = "lc-probe", n3 = "10.1.0.1:2152", n6 = "10.2.0.1:2153",
                                           sink = "10.2.0.2:9000", gen_bind = "10.1.0.2:9001",
                                           target = "10.1.0.1:2152";
  auto common = [&](CLI::App* c) {
    c->add_option("--duration-ms", duration_ms)->check(CLI::PositiveNumber);
    c->add_option("--start-file", start, "wait until this file exists before measuring");
    c->add_option("--samples", samples, "write every raw sample here");
    c->add_option("--local-cpus", local_cpus, "CPU list local to the device (device-local CPU time)");
  };
  auto* probe = app.add_subcommand("probe", "periodic sleeper: timer lateness, runnable-to-running delay");
  common(probe);
  probe->add_option("--period-us", period_us)->check(CLI::PositiveNumber);
  probe->add_option("--name", name, "the thread's comm");
  auto* decode = app.add_subcommand("decode", "LLM-like decode loop feeding a simulated device");
  common(decode);
  decode->add_option("--step-ms", step_ms)->check(CLI::PositiveNumber);
  decode->add_option("--work-us", work_us)->check(CLI::NonNegativeNumber);
  decode->add_option("--tokens", tokens)->check(CLI::PositiveNumber);
  decode->add_option("--burst-every-ms", burst_ms)->check(CLI::PositiveNumber);
  auto* fwd = app.add_subcommand("upf-fwd", "UDP forwarder between the N3 and N6 sides");
  common(fwd);
  fwd->add_option("--n3", n3);
  fwd->add_option("--n6", n6);
  fwd->add_option("--sink", sink);
  auto* sinkc = app.add_subcommand("upf-sink", "UDP echo on the data-network side");
  common(sinkc);
  sinkc->add_option("--listen", sink);
  auto* gen = app.add_subcommand("upf-gen", "UDP traffic generator: RTT, jitter, loss");
  common(gen);
  gen->add_option("--pps", pps)->check(CLI::PositiveNumber);
  gen->add_option("--bind", gen_bind);
  gen->add_option("--target", target);
  auto* hog = app.add_subcommand("hog", "CPU hog: its longest time without the CPU");
  common(hog);
  CLI11_PARSE(app, argc, argv);
  try {
    Samples out;
    Locality loc(local_cpus);
    int rc = 2;
    if (*probe) rc = cmd_probe(duration_ms, period_us, name, start, out, loc);
    else if (*decode) rc = cmd_decode(duration_ms, step_ms, work_us, tokens, burst_ms, start, out, loc);
    else if (*fwd) rc = cmd_upf_fwd(duration_ms, n3, n6, sink, start, loc);
    else if (*sinkc) rc = cmd_upf_sink(duration_ms, sink, start);
    else if (*gen) rc = cmd_upf_gen(duration_ms, pps, gen_bind, target, start, out);
    else if (*hog) rc = cmd_hog(duration_ms, start, out);
    if (!samples.empty()) out.write(samples);
    return rc;
  } catch (const std::exception& e) {
    std::cout << json{{"error", e.what()}}.dump() << std::endl;
    return 2;
  }
}
