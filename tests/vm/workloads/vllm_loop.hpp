// The vLLM stand-in's measured loop (vllm_standin.cpp): the EngineCore's busy loop with a
// per-step deadline like an inter-token interval, its input and output threads, and the Worker's
// step. What a step costs and when it is late is defined here; the process layout is not.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace c2c::vllm {

struct LoopConfig {
  uint64_t period_us = 20000;       // the input tick (a request per tick) and the step's deadline
  uint64_t engine_work_us = 2000;   // the busy loop's CPU time per step (scheduling, sampling)
  uint64_t worker_work_us = 1000;   // each worker's CPU time per step (input prep, kernel launch)
  uint64_t device_us = 5000;        // each worker then waits for the "GPU" (a sleep)
  uint64_t measure_ms = 0;          // 0: run, record nothing, until stopped
  std::string start_file;           // measuring starts at the first tick after it exists
};

// The ends of a worker process's pipes as the EngineCore holds them.
struct WorkerLink {
  int request_fd = -1;  // the engine writes one step message per step
  int reply_fd = -1;    // the worker answers when its step is done
};

// Spins until the calling thread's own CPU time grew by us (CLOCK_THREAD_CPUTIME_ID): a fixed
// amount of work whatever the preemptions in between.
void spin_cpu_us(uint64_t us);

// One EngineCore's loop: a periodic release, as a decode loop that emits one token per interval.
// At each tick the input thread releases one step, unless the previous step is still running:
// then the tick is skipped (a token that could not be produced in its interval), never queued, so
// an overrun does not snowball. A measured tick is missed when it was skipped or its step's output
// came later than the deadline (the period) after the tick.
// input_thread/output_thread are the bodies of the input and output threads, which the layout
// starts itself (so that they are named and reported like the others); run_busy_loop runs on the
// calling (main) thread until the measured window ended or stop became true, and returns once the
// output thread has taken the last step.
class EngineLoop {
 public:
  EngineLoop(LoopConfig cfg, std::vector<WorkerLink> workers, const std::atomic<bool>& stop);
  ~EngineLoop();
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;
  void input_thread();   // body of the input socket thread
  void output_thread();  // body of the output socket thread
  void run_busy_loop();
  // After run_busy_loop: the summary (JSON text) and every sample (CSV text).
  std::string summary_json() const;
  std::string samples_csv() const;

 private:
  struct Sample {
    uint64_t seq, tick_ns, input_ns, pick_ns, workers_ns, out_ns, run_delay_ns, skipped_before;
  };
  LoopConfig cfg_;
  std::vector<WorkerLink> workers_;
  const std::atomic<bool>& stop_;
  int to_busy_[2] = {-1, -1}, to_output_[2] = {-1, -1};
  std::vector<Sample> samples_;
  std::atomic<bool> output_done_{false};
  std::atomic<bool> in_flight_{false};  // a step was released and its output not yet out
  uint64_t ticks_ = 0, skipped_ = 0;    // measured ticks; of them, not released (a step was running)
};

// A Worker process's loop on its two pipe ends: per step message, worker_work_us of CPU and
// device_us of sleep, then the reply; returns at end of file with what its steps waited for a CPU
// (JSON text: steps, the run delay per step: mean and max), the workers' share of a late step.
std::string run_worker_loop(const LoopConfig& cfg, int request_fd, int reply_fd);

}  // namespace c2c::vllm
