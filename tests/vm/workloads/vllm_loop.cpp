// The vLLM stand-in's measured loop. A step's latency is output time - tick: the tick is when the
// request was due (the input thread's timer), so the input thread's own wakeup delay, the wait for
// the busy loop, the engine's and the workers' CPU work, the device wait and the hand-over to the
// output thread all count, as they do for an inter-token interval. Ticks the input thread slept
// through or that found a step still running are counted as skipped (missed), never hidden.
#include "vllm_loop.hpp"

#include <fcntl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "exp_stats.hpp"
#include "vm_proc.hpp"

namespace c2c::vllm {
namespace {

struct Msg {  // what travels input -> busy loop -> output (< PIPE_BUF: one atomic write)
  uint64_t seq = 0, tick_ns = 0, input_ns = 0, pick_ns = 0, workers_ns = 0, run_delay_ns = 0, skipped_before = 0;
  uint8_t measured = 0, stop = 0;
};

uint64_t now_ns() { return c2c::vm::mono_ns(); }

bool write_all(int fd, const void* p, size_t n) {
  const auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    b += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, size_t n) {  // false at end of file or on an error
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, b, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void sleep_us(uint64_t us) {
  timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>((us % 1000000) * 1000)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

}  // namespace

void spin_cpu_us(uint64_t us) {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  const uint64_t end = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec) + us * 1000;
  for (;;) {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    if (static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec) >= end) return;
  }
}

EngineLoop::EngineLoop(LoopConfig cfg, std::vector<WorkerLink> workers, const std::atomic<bool>& stop)
    : cfg_(std::move(cfg)), workers_(std::move(workers)), stop_(stop) {
  if (cfg_.period_us == 0) throw std::invalid_argument("period_us must be > 0");
  if (pipe2(to_busy_, O_CLOEXEC) != 0 || pipe2(to_output_, O_CLOEXEC) != 0)
    throw std::runtime_error("vllm loop: pipe2 failed");
  if (cfg_.measure_ms > 0) samples_.reserve(cfg_.measure_ms * 1000 / cfg_.period_us + 16);
}

EngineLoop::~EngineLoop() {
  for (int fd : {to_busy_[0], to_busy_[1], to_output_[0], to_output_[1]}) ::close(fd);
}

void EngineLoop::input_thread() {
  const int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  const uint64_t period_ns = cfg_.period_us * 1000;
  const uint64_t first = now_ns() + period_ns;
  itimerspec its{};
  its.it_interval = {static_cast<time_t>(period_ns / 1000000000ull), static_cast<long>(period_ns % 1000000000ull)};
  its.it_value = {static_cast<time_t>(first / 1000000000ull), static_cast<long>(first % 1000000000ull)};
  if (tfd < 0 || timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, nullptr) != 0) {
    std::perror("vllm loop: timerfd");
    Msg m;
    m.stop = 1;
    write_all(to_busy_[1], &m, sizeof m);
    return;
  }
  bool measuring = false;
  uint64_t k = 0, end_seq = 0, skipped_run = 0;  // skipped_run: measured ticks skipped since the last release
  for (;;) {
    uint64_t expirations = 0;
    if (!stop_ && !read_all(tfd, &expirations, sizeof expirations)) break;
    if (stop_) break;
    const uint64_t input_ns = now_ns();
    if (!measuring && cfg_.measure_ms > 0 && (cfg_.start_file.empty() || access(cfg_.start_file.c_str(), F_OK) == 0)) {
      measuring = true;
      end_seq = k + cfg_.measure_ms * 1000 / cfg_.period_us;
    }
    if (measuring && k >= end_seq) break;
    if (measuring) expirations = std::min(expirations, end_seq - k);
    const uint64_t latest = k + expirations - 1;  // the newest due tick; older ones are past
    k += expirations;
    if (measuring) ticks_ += expirations;
    if (in_flight_) {  // the previous step is still running: every due tick is skipped
      if (measuring) skipped_ += expirations, skipped_run += expirations;
      continue;
    }
    if (measuring) skipped_ += expirations - 1, skipped_run += expirations - 1;
    Msg m;
    m.seq = latest;
    m.tick_ns = first + latest * period_ns;
    m.input_ns = input_ns;
    m.measured = measuring ? 1 : 0;
    m.skipped_before = skipped_run;
    skipped_run = 0;
    in_flight_ = true;
    if (!write_all(to_busy_[1], &m, sizeof m)) break;
  }
  ::close(tfd);
  Msg m;
  m.stop = 1;
  write_all(to_busy_[1], &m, sizeof m);
}

void EngineLoop::output_thread() {
  Msg m;
  while (read_all(to_output_[0], &m, sizeof m) && !m.stop) {
    const uint64_t out_ns = now_ns();
    if (m.measured)
      samples_.push_back({m.seq, m.tick_ns, m.input_ns, m.pick_ns, m.workers_ns, out_ns, m.run_delay_ns, m.skipped_before});
    in_flight_ = false;
  }
  output_done_ = true;
}

void EngineLoop::run_busy_loop() {
  const c2c::vm::RunDelayReader run_delay;
  Msg m;
  while (read_all(to_busy_[0], &m, sizeof m) && !m.stop) {
    m.pick_ns = now_ns();
    const uint64_t rd0 = run_delay.read().value_or(0);
    spin_cpu_us(cfg_.engine_work_us);
    if (workers_.empty()) {  // one rank: the worker runs in the engine process (UniProcExecutor)
      spin_cpu_us(cfg_.worker_work_us);
      sleep_us(cfg_.device_us);
    } else {  // MultiprocExecutor: broadcast the step, collect every rank's output
      bool ok = true;
      const uint64_t step = m.seq;
      for (const auto& w : workers_) ok = ok && write_all(w.request_fd, &step, sizeof step);
      for (const auto& w : workers_) {
        uint64_t done = 0;
        ok = ok && read_all(w.reply_fd, &done, sizeof done);
      }
      if (!ok) {
        std::fprintf(stderr, "vllm loop: a worker went away\n");
        break;
      }
    }
    m.workers_ns = now_ns();
    m.run_delay_ns = run_delay.read().value_or(rd0) - rd0;
    write_all(to_output_[1], &m, sizeof m);
  }
  Msg stop;
  stop.stop = 1;
  write_all(to_output_[1], &stop, sizeof stop);
  while (!output_done_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (const auto& w : workers_) ::close(w.request_fd);  // the workers see end of file and exit
}

std::string EngineLoop::summary_json() const {
  std::vector<double> latency, queue, input, step, run_delay;
  uint64_t late = 0;
  for (const auto& s : samples_) {
    latency.push_back(static_cast<double>(s.out_ns - s.tick_ns) / 1000.0);
    queue.push_back(static_cast<double>(s.pick_ns - s.tick_ns) / 1000.0);
    input.push_back(static_cast<double>(s.input_ns - s.tick_ns) / 1000.0);
    step.push_back(static_cast<double>(s.workers_ns - s.pick_ns) / 1000.0);
    run_delay.push_back(static_cast<double>(s.run_delay_ns) / 1000.0);
    if (s.out_ns - s.tick_ns > cfg_.period_us * 1000) ++late;
  }
  const uint64_t expected = cfg_.measure_ms * 1000 / cfg_.period_us;
  const uint64_t missed = late + skipped_;
  nlohmann::json j{{"period_us", cfg_.period_us},
                   {"deadline_us", cfg_.period_us},
                   {"engine_work_us", cfg_.engine_work_us},
                   {"worker_work_us", cfg_.worker_work_us},
                   {"device_us", cfg_.device_us},
                   {"workers", workers_.size()},
                   {"ticks_expected", expected},
                   {"ticks", ticks_},
                   {"steps", samples_.size()},
                   {"skipped", skipped_},
                   {"late", late},
                   {"missed", missed},
                   {"missed_pct", ticks_ == 0 ? 0.0 : 100.0 * static_cast<double>(missed) / static_cast<double>(ticks_)},
                   {"latency", c2c::exp::summary(latency)},
                   {"wait_for_busy_loop", c2c::exp::summary(queue)},
                   {"input_wakeup", c2c::exp::summary(input)},
                   {"step", c2c::exp::summary(step)},
                   {"busy_loop_run_delay", c2c::exp::summary(run_delay)}};
  return j.dump();
}

std::string EngineLoop::samples_csv() const {
  std::ostringstream o;
  o << "seq,tick_ms,skipped_before,input_us,pick_us,step_done_us,latency_us,busy_loop_run_delay_us,late\n";
  const uint64_t t0 = samples_.empty() ? 0 : samples_.front().tick_ns;
  const auto us = [](uint64_t from, uint64_t to) { return static_cast<double>(to - from) / 1000.0; };
  for (const auto& s : samples_) {
    o << s.seq << ',' << static_cast<double>(s.tick_ns - t0) / 1e6 << ',' << s.skipped_before << ','
      << us(s.tick_ns, s.input_ns) << ','
      << us(s.tick_ns, s.pick_ns) << ',' << us(s.tick_ns, s.workers_ns) << ',' << us(s.tick_ns, s.out_ns) << ',' << static_cast<double>(s.run_delay_ns) / 1000.0 << ','
      << (s.out_ns - s.tick_ns > cfg_.period_us * 1000 ? 1 : 0) << '\n';
  }
  return o.str();
}

std::string run_worker_loop(const LoopConfig& cfg, int request_fd, int reply_fd) {
  const c2c::vm::RunDelayReader run_delay;
  uint64_t step = 0, steps = 0, total_ns = 0, max_ns = 0;
  while (read_all(request_fd, &step, sizeof step)) {
    const uint64_t rd0 = run_delay.read().value_or(0);
    spin_cpu_us(cfg.worker_work_us);
    sleep_us(cfg.device_us);
    const uint64_t rd1 = run_delay.read().value_or(rd0);
    if (!write_all(reply_fd, &step, sizeof step)) break;
    ++steps;
    total_ns += rd1 - rd0;
    max_ns = std::max(max_ns, rd1 - rd0);
  }
  nlohmann::json j{{"steps", steps},
                   {"run_delay_mean_us", steps ? static_cast<double>(total_ns) / 1000.0 / static_cast<double>(steps) : 0.0},
                   {"run_delay_max_us", static_cast<double>(max_ns) / 1000.0}};
  return j.dump();
}

}  // namespace c2c::vllm
