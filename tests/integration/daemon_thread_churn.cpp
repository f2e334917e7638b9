// Test helper for claim2cored: creates and ends named threads.
//   daemon_thread_churn hold <name> <count>
//       starts <count> threads named <name> (prctl PR_SET_NAME), prints "ready <tgid> <tid>..." and
//       keeps them until stdin closes or a line arrives.
//   daemon_thread_churn churn <prefix> <total> <seconds> [<concurrency>]
//       starts <total> short-lived threads spread over <seconds> (at most <concurrency> alive at
//       once), each named "<prefix><n%100>", and prints "done <created>" at the end.
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

void set_name(const std::string& n) { prctl(PR_SET_NAME, n.substr(0, 15).c_str(), 0, 0, 0); }

int hold(const std::string& name, int count) {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::vector<pid_t> tids(static_cast<size_t>(count));
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < count; ++i)
    ts.emplace_back([&, i] {
      set_name(name);
      tids[static_cast<size_t>(i)] = static_cast<pid_t>(syscall(SYS_gettid));
      ++ready;
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return stop; });
    });
  while (ready < count) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::printf("ready %d", getpid());
  for (auto t : tids) std::printf(" %d", t);
  std::printf("\n");
  std::fflush(stdout);
  std::string line;
  std::getline(std::cin, line);
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  for (auto& t : ts) t.join();
  return 0;
}

int churn(const std::string& prefix, int total, double seconds, int concurrency) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> alive;
  int created = 0;
  while (created < total) {
    // Pace creations evenly over the run.
    auto due = start + std::chrono::duration<double>(seconds * created / total);
    std::this_thread::sleep_until(due);
    if (static_cast<int>(alive.size()) >= concurrency) {
      alive.front().join();
      alive.erase(alive.begin());
    }
    std::string name = prefix + std::to_string(created % 100);
    alive.emplace_back([name] {
      set_name(name);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
    ++created;
  }
  for (auto& t : alive) t.join();
  std::printf("done %d\n", created);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "hold") return hold(argv[2], std::atoi(argv[3]));
  if (argc >= 5 && std::string(argv[1]) == "churn")
    return churn(argv[2], std::atoi(argv[3]), std::atof(argv[4]), argc >= 6 ? std::atoi(argv[5]) : 200);
  std::fprintf(stderr, "usage: %s hold <name> <count> | churn <prefix> <total> <seconds> [<concurrency>]\n", argv[0]);
  return 2;
}
