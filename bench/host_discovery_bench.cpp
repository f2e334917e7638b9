// Task discovery figures, measured side by side in one run:
//  1. one full pass over every thread of the system with >= 10,000 named threads alive:
//     BPF task iterator vs procfs walker vs `ps -eLo pid=,lwp=,comm=` (median of interleaved runs;
//     only this process's threads are counted, other processes may use the same names);
//  2. a new thread naming itself "EngineCore_<n>" -> its Rename event read from the ring buffer:
//     p50/p99/max latency, from the name change and from pthread_create.
// Needs root. Prints figures; asserts nothing about speed (no timed tests), but checks that each
// method found every benchmark thread so the comparison is between equal results.
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "host/procfs_walker.hpp"
#include "thread_farm.hpp"
#include "host/task_events.hpp"
#include "host/task_iter.hpp"

using namespace c2c::host;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

// Parked threads named "EngineCore_<i>" (every 4th one "Worker_<i>"), none woken per creation.
std::string farm_name(int i) {
  char name[16];
  std::snprintf(name, sizeof name, (i % 4 == 3) ? "Worker_%d" : "EngineCore_%d", i);
  return name;
}

size_t count_own(const std::vector<TaskInfo>& tasks, uint32_t tgid) {
  return static_cast<size_t>(std::count_if(tasks.begin(), tasks.end(), [&](const TaskInfo& t) {
    return t.tgid == tgid && (t.comm.rfind("EngineCore_", 0) == 0 || t.comm.rfind("Worker_", 0) == 0);
  }));
}

// Runs ps and counts the benchmark threads of this process in its output. Other processes may
// have threads of the same names (another benchmark, a vLLM engine), so threads are counted by
// their process id, not recognised by name alone.
size_t run_ps(uint32_t tgid) {
  FILE* p = ::popen("ps -eLo pid=,lwp=,comm=", "r");
  if (p == nullptr) return 0;
  char line[256];
  size_t n = 0;
  while (std::fgets(line, sizeof line, p) != nullptr) {
    unsigned long pid = 0, tid = 0;
    char comm[64] = {0};
    if (std::sscanf(line, "%lu %lu %63s", &pid, &tid, comm) != 3 || pid != tgid) continue;
    if (std::strncmp(comm, "EngineCore_", 11) == 0 || std::strncmp(comm, "Worker_", 7) == 0) ++n;
  }
  ::pclose(p);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int nthreads = 10000;
  int samples = 1000;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) nthreads = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--samples") == 0) samples = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "host_discovery_bench: needs root to load BPF programs\n");
    return 2;
  }
  std::string err;
  auto iter = BpfTaskIterator::open(&err);
  if (!iter) {
    std::fprintf(stderr, "task iterator: %s\n", err.c_str());
    return 1;
  }
  auto events = TaskEventStream::open(&err);
  if (!events) {
    std::fprintf(stderr, "event stream: %s\n", err.c_str());
    return 1;
  }
  const uint32_t tgid = static_cast<uint32_t>(::getpid());

  // ---- 1. enumeration ------------------------------------------------------------------------
  std::vector<double> t_iter, t_proc, t_ps;
  size_t total_tasks = 0;
  {
    const auto t0 = Clock::now();
    c2c::bench::ThreadFarm farm(nthreads, farm_name);
    farm.wait_ready();
    std::printf("created %zu named threads in %.0f ms\n", farm.size(), ms_since(t0));
    const size_t expect = farm.size();
    // Nobody consumed while the farm was created (2 records per thread), so the ring buffer may
    // have overflowed here; drain it so that it does not fill during the timing.
    std::printf("ring buffer drops while creating the farm without a consumer: %llu\n",
                static_cast<unsigned long long>(events->dropped()));
    while (events->poll(0, [](const TaskEvent&) {}) > 0) {
    }
    for (int r = 0; r < reps; ++r) {
      auto t = Clock::now();
      auto snap = iter->snapshot(&err);
      t_iter.push_back(ms_since(t));
      if (!snap || count_own(*snap, tgid) != expect) {
        std::fprintf(stderr, "iterator found %zu of %zu threads (%s)\n", snap ? count_own(*snap, tgid) : 0, expect,
                     err.c_str());
        return 1;
      }
      total_tasks = snap->size();

      t = Clock::now();
      auto walk = walk_procfs();
      t_proc.push_back(ms_since(t));
      if (count_own(walk, tgid) != expect) {
        std::fprintf(stderr, "procfs walk found %zu of %zu threads\n", count_own(walk, tgid), expect);
        return 1;
      }

      t = Clock::now();
      const size_t from_ps = run_ps(tgid);
      t_ps.push_back(ms_since(t));
      if (from_ps != expect) {
        std::fprintf(stderr, "ps found %zu of %zu threads\n", from_ps, expect);
        return 1;
      }
    }
  }
  while (events->poll(0, [](const TaskEvent&) {}) > 0) {
  }
  const double mi = median(t_iter), mp = median(t_proc), ms = median(t_ps);
  std::printf("\nfull pass over %zu threads (%d named benchmark threads), median of %d interleaved runs:\n",
              total_tasks, nthreads, reps);
  std::printf("  BPF task iterator   %8.2f ms   (min %.2f)\n", mi, *std::min_element(t_iter.begin(), t_iter.end()));
  std::printf("  procfs walker       %8.2f ms   (min %.2f)\n", mp, *std::min_element(t_proc.begin(), t_proc.end()));
  std::printf("  ps -eLo pid=,lwp=,comm= %4.2f ms   (min %.2f)\n", ms, *std::min_element(t_ps.begin(), t_ps.end()));
  std::printf("  ratio ps / iterator      = %.1fx\n", ms / mi);
  std::printf("  ratio procfs / iterator  = %.1fx\n", mp / mi);
  std::printf("  ratio ps / procfs        = %.1fx\n", ms / mp);

  // ---- 2. event latency ----------------------------------------------------------------------
  // A producer creates one thread every 2 ms; the thread names itself "EngineCore_<i>" at once.
  std::vector<Clock::time_point> created(static_cast<size_t>(samples)), named(static_cast<size_t>(samples));
  std::vector<std::atomic<bool>> have_named(static_cast<size_t>(samples));
  std::vector<double> lat_name, lat_create;
  std::atomic<bool> producer_done{false};
  std::thread producer([&] {
    for (int i = 0; i < samples; ++i) {
      created[static_cast<size_t>(i)] = Clock::now();
      std::thread t([&, i] {
        char name[16];
        std::snprintf(name, sizeof name, "EngineCore_%d", i);
        named[static_cast<size_t>(i)] = Clock::now();
        have_named[static_cast<size_t>(i)].store(true, std::memory_order_release);
        pthread_setname_np(pthread_self(), name);
      });
      t.join();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    producer_done = true;
  });
  auto on_event = [&](const TaskEvent& e) {
    const auto now = Clock::now();
    if (e.kind != TaskEventKind::Rename || e.task.tgid != tgid || e.task.comm.rfind("EngineCore_", 0) != 0) return;
    const int i = std::atoi(e.task.comm.c_str() + 11);
    if (i < 0 || i >= samples || !have_named[static_cast<size_t>(i)].load(std::memory_order_acquire)) return;
    lat_name.push_back(std::chrono::duration<double, std::micro>(now - named[static_cast<size_t>(i)]).count());
    lat_create.push_back(std::chrono::duration<double, std::micro>(now - created[static_cast<size_t>(i)]).count());
  };
  const uint64_t drops_before = events->dropped();
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while ((!producer_done || static_cast<int>(lat_name.size()) < samples) && Clock::now() < deadline)
    events->poll(100, on_event);
  producer.join();
  if (lat_name.empty()) {
    std::fprintf(stderr, "no rename events received\n");
    return 1;
  }
  std::printf("\nnew thread named EngineCore_<n> -> Rename event read from the ring buffer (%zu of %d samples,\n"
              "consumer blocked in ring_buffer__poll):\n",
              lat_name.size(), samples);
  std::printf("  from pthread_setname_np: p50 %7.1f us   p99 %7.1f us   max %8.1f us\n", pct(lat_name, 0.5),
              pct(lat_name, 0.99), pct(lat_name, 1.0));
  std::printf("  from pthread_create:     p50 %7.1f us   p99 %7.1f us   max %8.1f us\n", pct(lat_create, 0.5),
              pct(lat_create, 0.99), pct(lat_create, 1.0));
  std::printf("  ring buffer drops during the latency run: %llu\n",
              static_cast<unsigned long long>(events->dropped() - drops_before));
  double load[3] = {0, 0, 0};
  if (::getloadavg(load, 3) > 0) std::printf("\nload average during the run: %.2f %.2f %.2f (2 CPUs)\n", load[0], load[1], load[2]);
  return 0;
}
