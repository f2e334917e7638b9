#include "vm_sync_wakeup.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "vm_policy.hpp"
#include "vm_proc.hpp"

using nlohmann::json;

namespace c2c::vm {

namespace {

constexpr uint64_t kWriteEveryNs = 5'000'000;
constexpr uint64_t kWriterSliceNs = 20'000'000;
constexpr uint64_t kControlMinP50Ns = 2'000'000;
constexpr uint64_t kBoostedMaxP50Ns = 1'000'000;

// One series: the writer on `cpu` (latency-critical without a lease, a 20 ms slice, so an
// unboosted reader waits up to that long),
// the reader unpinned, with `reader` as its policy (none: no entry). The delays, write to read.
std::vector<uint64_t> series(int cpu, int rounds, const std::optional<PolicySpec>& reader) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("syncwake: pipe failed");
  std::atomic<pid_t> reader_tid{0}, writer_tid{0};
  std::atomic<bool> go{false}, pinned{true};
  std::vector<uint64_t> delays;
  delays.reserve(static_cast<size_t>(rounds));
  std::thread r([&] {
    reader_tid = gettid_now();
    uint64_t sent = 0;
    while (read(fds[0], &sent, sizeof sent) == static_cast<ssize_t>(sizeof sent) && sent != 0)
      delays.push_back(mono_ns() - sent);
  });
  // The writer owns the write end: closing it when done ends the reader's reads (EOF) even if
  // a write failed.
  std::thread w([&] {
    try {
      pin_self(cpu);
    } catch (const std::exception&) {
      pinned = false;
    }
    writer_tid = gettid_now();
    while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < rounds && pinned; ++i) {
      const uint64_t now = mono_ns();
      if (write(fds[1], &now, sizeof now) != static_cast<ssize_t>(sizeof now)) break;
      burn_until(now + kWriteEveryNs);  // never sleeps: the reader needs the writer's CPU taken
    }
    const uint64_t stop = 0;
    (void)!write(fds[1], &stop, sizeof stop);
    close(fds[1]);
  });
  while (reader_tid == 0 || writer_tid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::string error;
  std::optional<PolicyMap> map;
  try {
    map.emplace();
    // Latency-critical without a lease: a class a woken normal or unmatched task does not preempt
    // (c2c_run_preemptible, issue 43), so the control reader waits for the writer's slice; the
    // boosted reader must preempt it all the same.
    PolicySpec writer;
    writer.exec_class = C2C_CLASS_LATENCY_CRITICAL;
    writer.slice_ns = kWriterSliceNs;
    map->put_task(getpid(), writer_tid, writer);
    if (reader) map->put_task(getpid(), reader_tid, *reader);
  } catch (const std::exception& e) {
    error = e.what();
    pinned = false;  // the writer stops at once: nothing is measured without the entries
  }
  go = true;
  w.join();
  r.join();
  close(fds[0]);
  if (map) {
    map->del(static_cast<uint32_t>(writer_tid.load()));
    if (reader) map->del(static_cast<uint32_t>(reader_tid.load()));
  }
  if (!error.empty()) throw std::runtime_error("syncwake: " + error);
  if (!pinned) throw std::runtime_error("syncwake: cannot pin the writer to CPU " + std::to_string(cpu));
  return delays;
}

json summary(const std::vector<uint64_t>& d) {
  return {{"samples", d.size()},
          {"p50_us", d.empty() ? 0.0 : static_cast<double>(percentile(d, 0.5)) / 1e3},
          {"p99_us", d.empty() ? 0.0 : static_cast<double>(percentile(d, 0.99)) / 1e3}};
}

}  // namespace

int cmd_sync_wakeup(int cpu, int rounds) {
  PolicySpec boosted;
  boosted.exec_class = C2C_CLASS_LATENCY_CRITICAL;
  boosted.boost_ns = 60'000'000'000ull;
  const auto control = series(cpu, rounds, std::nullopt);
  const auto lc = series(cpu, rounds, boosted);
  const bool reached = !control.empty() && percentile(control, 0.5) >= kControlMinP50Ns;
  const bool preempts = !lc.empty() && percentile(lc, 0.5) <= kBoostedMaxP50Ns;
  json j = {{"scenario", "syncwake"},
            {"writer_cpu", cpu},
            {"control", summary(control)},
            {"boosted", summary(lc)},
            {"control_waited", reached},
            {"boosted_preempted", preempts},
            {"pass", reached && preempts}};
  std::cout << j.dump() << std::endl;
  return reached && preempts ? 0 : 1;
}

}  // namespace c2c::vm
