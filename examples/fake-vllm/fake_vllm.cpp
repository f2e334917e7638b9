// A stand-in for a standalone vLLM process, for the demo and the CLI integration test: the
// leader's comm is python3.12 and its threads are named like vLLM's (EngineCore_DP0,
// EngineCore_DP1) plus helpers that a node policy for the engines must not match. It prints
// "<tid> <comm>" for every thread, then "ready", and idles until SIGTERM/SIGINT or --seconds.
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

// Leader first, then the engines, then helpers (comm is at most 15 bytes).
constexpr const char* kLeader = "python3.12";
constexpr const char* kThreads[] = {"EngineCore_DP0", "EngineCore_DP1", "api_server", "tokenizer", "detokenizer"};

std::mutex g_print;

void announce(const char* comm) {
  std::lock_guard<std::mutex> lock(g_print);
  std::printf("%ld %s\n", static_cast<long>(::syscall(SYS_gettid)), comm);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  long seconds = 0;  // 0: until a signal
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::strtol(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--seconds N]\n", argv[0]);
      return 2;
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  ::prctl(PR_SET_NAME, kLeader, 0, 0, 0);  // /proc/<pid>/comm, like vLLM's interpreter
  announce(kLeader);

  std::atomic<int> named{0};
  std::vector<std::thread> threads;
  for (const char* comm : kThreads) {
    threads.emplace_back([comm, &named] {
      ::pthread_setname_np(::pthread_self(), comm);  // /proc/<pid>/task/<tid>/comm
      announce(comm);
      ++named;
      while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    });
  }
  while (named.load() < static_cast<int>(std::size(kThreads))) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("ready\n");
    std::fflush(stdout);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!g_stop && (seconds == 0 || std::chrono::steady_clock::now() < until))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  g_stop = true;
  for (auto& t : threads) t.join();
  return 0;
}
