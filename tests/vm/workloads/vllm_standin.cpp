// c2c-vllm-standin: stock vLLM's process and thread naming in C++, for the sched_ext guest (its
// initramfs has no Python; tests/vm/README.md, "The vLLM adapter in the guest"). The same layout as
// examples/vllm-standin/vllm_standin.py (which uses the real setproctitle on the host; the test
// vm.vllm_standin_naming compares the two):
//
//   API server (the launcher; comm `vllm`, the console script's name; one API server: no title)
//     tokenizer pool thread (unnamed), ZMQbg/Reaper, ZMQbg/IO/0
//   EngineCore per DP rank (spawned: a fresh exec, comm `python3`, the interpreter's)
//     a thread started before the title (keeps `python3`), setproctitle("VLLM::EngineCore[_DP<r>]")
//     on the main thread (the busy loop: comm `VLLM::EngineCor`), the worker processes, the input
//     and output socket threads (unnamed, started after: they inherit `VLLM::EngineCor`),
//     ZMQbg/Reaper, ZMQbg/IO/0
//   Worker per TP rank when TP > 1 (setproctitle("VLLM::Worker[_DP<r>][_TP<t>]"))
//     the busy loop (main thread), ZMQbg/Reaper, ZMQbg/IO/0
//
// Every process writes its threads (tid, tgid, comm, title, part; the parts of
// examples/vllm-standin/intended.json) to <out>/<pid>.json; the launcher prints one JSON object per
// thread of the tree, then `ready`. With --measure-ms each EngineCore runs the measured loop
// (vllm_loop.hpp) from the first tick after --start-file exists, writes
// <out>/engine-<rank>.json (summary) and .csv (every step), and the tree exits; otherwise it runs
// until SIGTERM/SIGINT or --seconds.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "proc_title.hpp"
#include "vllm_loop.hpp"
#include "vm_proc.hpp"

namespace {

using c2c::vllm::LoopConfig;
using nlohmann::json;
namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};
void on_stop(int) { g_stop = true; }

struct Options {
  std::string role = "api-server";  // api-server (the launcher), engine, worker
  int dp_size = 1, tp_size = 2, dp_rank = 0, tp_rank = 0;
  double seconds = 0;
  std::string out;
  LoopConfig loop;
};

std::mutex g_threads_mu;
std::vector<std::pair<std::string, pid_t>> g_threads;  // (part, tid), in creation order

// Starts a detached thread (Python's daemon threads) that registers its tid under part, optionally
// renames itself first (libzmq names its threads), then runs body; returns once it registered, so
// the creation order is the order of the calls.
void start_thread(const std::string& part, std::function<void()> body, const std::string& os_name = "") {
  std::atomic<bool> ready{false};
  std::thread([&ready, part, body = std::move(body), os_name] {
    if (!os_name.empty()) c2c::vllm::set_thread_name(os_name);
    {
      std::lock_guard<std::mutex> lock(g_threads_mu);
      g_threads.emplace_back(part, c2c::vm::gettid_now());
    }
    ready = true;
    body();
  }).detach();
  while (!ready) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

void idle() {
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

void zmq_context(const std::string& kind) {  // zmq.Context(): libzmq's reaper and I/O thread
  start_thread(kind + "-zmq-reaper", idle, "ZMQbg/Reaper");
  start_thread(kind + "-zmq-io", idle, "ZMQbg/IO/0");
}

std::string read_first_line(const std::string& path, char sep) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s, sep);
  return s;
}

void report(const Options& o, const std::string& main_part) {
  json rows = json::array();
  const std::string title = read_first_line("/proc/self/cmdline", '\0');
  std::lock_guard<std::mutex> lock(g_threads_mu);
  g_threads.insert(g_threads.begin(), {main_part, c2c::vm::gettid_now()});
  for (const auto& [part, tid] : g_threads)
    rows.push_back({{"tid", tid}, {"tgid", getpid()}, {"part", part}, {"title", title},
                    {"comm", read_first_line("/proc/self/task/" + std::to_string(tid) + "/comm", '\n')}});
  const std::string path = o.out + "/" + std::to_string(getpid()) + ".json";
  std::ofstream(path + ".tmp") << rows.dump();
  fs::rename(path + ".tmp", path);
}

// multiprocessing's spawn: a fresh exec of the interpreter (here: this binary) with the role's
// options; fds (child fd <- parent fd) are put at fixed numbers for it. Returns the child's pid.
pid_t spawn(const Options& o, const std::string& role, const std::vector<std::pair<int, int>>& fds = {}) {
  std::vector<std::string> args{"python3", "--role", role, "--data-parallel-size", std::to_string(o.dp_size),
                                "--tensor-parallel-size", std::to_string(o.tp_size), "--dp-rank",
                                std::to_string(o.dp_rank), "--tp-rank", std::to_string(o.tp_rank), "--out", o.out,
                                "--period-us", std::to_string(o.loop.period_us), "--engine-work-us",
                                std::to_string(o.loop.engine_work_us), "--worker-work-us",
                                std::to_string(o.loop.worker_work_us), "--device-us",
                                std::to_string(o.loop.device_us), "--measure-ms", std::to_string(o.loop.measure_ms)};
  if (!o.loop.start_file.empty()) args.insert(args.end(), {"--start-file", o.loop.start_file});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  static const std::string self = fs::read_symlink("/proc/self/exe");
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until exec (the parent has threads)
    // Moved above the targets first: a source may sit at a target's number (dup2 onto itself
    // would keep its close-on-exec flag), and dup2 clears the flag on the copy.
    std::pair<int, int> moved[8];
    size_t n = 0;
    for (const auto& [to, from] : fds) moved[n++] = {to, fcntl(from, F_DUPFD, 10)};
    for (size_t i = 0; i < n; ++i) dup2(moved[i].second, moved[i].first);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  if (pid < 0) throw std::runtime_error("fork failed");
  return pid;
}

void child_setup() {  // the stand-in's children die with their parent, stop on SIGTERM
  prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
  signal(SIGTERM, on_stop);
  signal(SIGINT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);  // a peer that went away is an error reported by the loop, not a kill
  c2c::vllm::set_thread_name("python3");  // a spawned interpreter's comm
}

std::string rank_suffix(const Options& o, bool with_tp) {
  std::string s = o.dp_size > 1 ? "_DP" + std::to_string(o.dp_rank) : "";
  if (with_tp && o.tp_size > 1) s += "_TP" + std::to_string(o.tp_rank);
  return s;
}

int run_worker(const Options& o) {
  child_setup();
  c2c::vllm::set_process_title("VLLM::Worker" + rank_suffix(o, true));
  zmq_context("worker");
  report(o, "worker-busy-loop");
  // fds 3 and 4: spawn() put the engine's pipes there.
  const std::string stats = c2c::vllm::run_worker_loop(o.loop, 3, 4);
  if (o.loop.measure_ms > 0)
    std::ofstream(o.out + "/worker-" + std::to_string(o.dp_rank) + "-" + std::to_string(o.tp_rank) + ".stats") << stats << "\n";
  return 0;
}

int run_engine(Options o) {
  child_setup();
  // An import-time helper thread, started before the title: it keeps the comm `python3`.
  start_thread("engine-pre-title", idle);
  c2c::vllm::set_process_title("VLLM::EngineCore" + rank_suffix(o, false));
  std::vector<c2c::vllm::WorkerLink> links;
  std::vector<pid_t> workers;
  if (o.tp_size > 1) {  // MultiprocExecutor: one process per TP rank
    for (int t = 0; t < o.tp_size; ++t) {
      int req[2], rep[2];
      if (pipe2(req, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
      Options w = o;
      w.tp_rank = t;
      workers.push_back(spawn(w, "worker", {{3, req[0]}, {4, rep[1]}}));
      close(req[0]);
      close(rep[1]);
      links.push_back({req[1], rep[0]});
    }
  }
  c2c::vllm::EngineLoop loop(o.loop, links, g_stop);
  // EngineCoreProc: the input and output socket threads (unnamed), then the ZMQ context.
  start_thread("engine-core-input", [&loop] { loop.input_thread(); });
  start_thread("engine-core-output", [&loop] { loop.output_thread(); });
  zmq_context("engine");
  report(o, "engine-core-busy-loop");
  loop.run_busy_loop();
  for (const auto& l : links) close(l.reply_fd);
  for (pid_t w : workers) waitpid(w, nullptr, 0);
  if (o.loop.measure_ms > 0) {
    const std::string base = o.out + "/engine-" + std::to_string(o.dp_rank);
    std::ofstream(base + ".csv") << loop.samples_csv();
    std::ofstream(base + ".json") << loop.summary_json() << "\n";
  }
  g_stop = true;
  return 0;
}

size_t reports_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json" && e.path().filename().string().rfind("engine-", 0) != 0) ++n;
  return n;
}

int run_api_server(Options o) {
  signal(SIGTERM, on_stop);
  signal(SIGINT, on_stop);
  c2c::vllm::set_thread_name("vllm");  // `vllm serve`: the kernel names the process after the script
  start_thread("tokenizer", idle);     // the tokenizer pool: one thread, no name
  zmq_context("api");
  std::vector<pid_t> engines;
  for (int r = 0; r < o.dp_size; ++r) {
    Options e = o;
    e.dp_rank = r;
    engines.push_back(spawn(e, "engine"));
  }
  report(o, "api-server");
  const size_t expected = 1 + static_cast<size_t>(o.dp_size) * (1 + (o.tp_size > 1 ? o.tp_size : 0));
  const auto t0 = std::chrono::steady_clock::now();
  while (reports_in(o.out) < expected) {
    if (g_stop || std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) {
      std::cerr << "vllm-standin: not every process reported its threads\n";
      for (pid_t e : engines) kill(e, SIGTERM);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (const auto& e : fs::directory_iterator(o.out)) {
    if (e.path().extension() != ".json" || e.path().filename().string().rfind("engine-", 0) == 0) continue;
    for (const auto& row : json::parse(std::ifstream(e.path()))) std::cout << row.dump() << "\n";
  }
  std::cout << "ready" << std::endl;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.seconds);
  int failed = 0;
  for (size_t left = engines.size(); left > 0;) {
    int status = 0;
    const pid_t p = waitpid(-1, &status, WNOHANG);
    if (p > 0) {
      --left;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
      continue;
    }
    if (g_stop || (o.seconds > 0 && std::chrono::steady_clock::now() > until)) {
      for (pid_t e : engines) kill(e, SIGTERM);
      g_stop = false;  // once
      o.seconds = 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"vLLM's process and thread naming, and an EngineCore loop with an inter-token deadline"};
  app.add_option("command", o.role, "serve (the API server)")->check(CLI::IsMember({"serve"}));
  app.add_option("--role", o.role, "internal: the spawned process's role")->check(CLI::IsMember({"engine", "worker"}));
  app.add_option("--data-parallel-size", o.dp_size)->check(CLI::Range(1, 8));
  app.add_option("--tensor-parallel-size", o.tp_size)->check(CLI::Range(1, 8));
  app.add_option("--dp-rank", o.dp_rank)->check(CLI::Range(0, 7));
  app.add_option("--tp-rank", o.tp_rank)->check(CLI::Range(0, 7));
  app.add_option("--out", o.out, "directory for the thread reports and results")->required();
  app.add_option("--seconds", o.seconds, "without --measure-ms: exit after this long (0: until a signal)");
  app.add_option("--period-us", o.loop.period_us, "input tick and step deadline")->check(CLI::Range(1000, 10000000));
  app.add_option("--engine-work-us", o.loop.engine_work_us, "busy loop CPU time per step");
  app.add_option("--worker-work-us", o.loop.worker_work_us, "each worker's CPU time per step");
  app.add_option("--device-us", o.loop.device_us, "each worker's device wait per step");
  app.add_option("--measure-ms", o.loop.measure_ms, "measured window per EngineCore (0: no measuring)");
  app.add_option("--start-file", o.loop.start_file, "measuring starts once this file exists");
  CLI11_PARSE(app, argc, argv);
  if (o.role == "serve") o.role = "api-server";
  c2c::vllm::init_process_title(argc, argv);
  try {
    if (o.role == "api-server") {
      fs::create_directories(o.out);
      return run_api_server(o);
    }
    return o.role == "engine" ? run_engine(o) : run_worker(o);
  } catch (const std::exception& e) {
    std::cerr << "vllm-standin (" << o.role << "): " << e.what() << "\n";
    return 1;
  }
}
