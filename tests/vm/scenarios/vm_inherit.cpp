#include "vm_inherit.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "sched/loader.hpp"
#include "vm_policy.hpp"
#include "vm_proc.hpp"
#include "vm_task_counters.hpp"

using nlohmann::json;

namespace c2c::vm {

namespace {

constexpr uint64_t kWriteEveryNs = 5'000'000;

struct Series {
  c2c_task_counters reader{};  // the reader's counters after the series
  uint32_t writer_tid = 0;
  uint64_t boost_inherited = 0;  // c2c_stats.boost_inherited over the series (all tasks)
};

// The writer spins on `cpu` (it never sleeps, so its run stays boosted) and writes every 5 ms; the
// reader, unpinned, reads. The reader stays alive until its counters are read (they go with it).
Series series(int cpu, int rounds, uint8_t writer_flags) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("inherit: pipe failed");
  std::atomic<pid_t> reader_tid{0}, writer_tid{0};
  std::atomic<bool> go{false}, pinned{true}, read_done{false}, counted{false};
  std::thread r([&] {
    reader_tid = gettid_now();
    uint64_t sent = 0;
    while (read(fds[0], &sent, sizeof sent) == static_cast<ssize_t>(sizeof sent) && sent != 0) {
    }
    read_done = true;
    while (!counted) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
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
      burn_until(now + kWriteEveryNs);
    }
    const uint64_t stop = 0;
    (void)!write(fds[1], &stop, sizeof stop);
    close(fds[1]);
  });
  while (reader_tid == 0 || writer_tid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::string error;
  std::optional<PolicyMap> map;
  Series s;
  s.writer_tid = static_cast<uint32_t>(writer_tid.load());
  const c2c_stats before = sched::read_pinned_stats();
  try {
    map.emplace();
    PolicySpec writer;
    writer.exec_class = C2C_CLASS_LATENCY_CRITICAL;
    writer.boost_ns = 60'000'000'000ull;
    writer.extra_flags = writer_flags;
    map->put_task(getpid(), writer_tid, writer);
    PolicySpec reader;  // class normal, no boost: anything boosted about it is inherited
    map->put_task(getpid(), reader_tid, reader);
  } catch (const std::exception& e) {
    error = e.what();
    pinned = false;
  }
  go = true;
  w.join();
  while (!read_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::string why;
  auto c = read_task_counters(reader_tid, C2C_PIN_ROOT, &why);
  counted = true;
  r.join();
  close(fds[0]);
  s.boost_inherited = sched::read_pinned_stats().boost_inherited - before.boost_inherited;
  if (map) {
    map->del(static_cast<uint32_t>(writer_tid.load()));
    map->del(static_cast<uint32_t>(reader_tid.load()));
  }
  if (!error.empty()) throw std::runtime_error("inherit: " + error);
  if (!pinned) throw std::runtime_error("inherit: cannot pin the writer to CPU " + std::to_string(cpu));
  if (!c) throw std::runtime_error("inherit: the reader's counters: " + why);
  s.reader = *c;
  return s;
}

json summary(const Series& s) {
  return {{"writer_tid", s.writer_tid},
          {"reader_runs", s.reader.runs},
          {"inherited_runs", s.reader.inherited_runs},
          {"inherited_from", s.reader.inherited_from},
          {"inherited_depth", s.reader.inherited_depth},
          {"boost_inherited", s.boost_inherited}};
}

}  // namespace

int cmd_inherit(int cpu, int rounds) {
  const Series control = series(cpu, rounds, 0);
  const Series opted = series(cpu, rounds, C2C_F_WAKEE_BOOST);
  // The control: a boosted writer that did not opt in passes nothing on.
  const bool control_none = control.reader.inherited_runs == 0 && control.reader.runs > 0;
  // Opted in: the reader inherited, from the writer, at depth 1.
  const bool inherited = opted.reader.inherited_runs > 0 && opted.reader.inherited_from == opted.writer_tid &&
                         opted.reader.inherited_depth == 1 && opted.boost_inherited >= opted.reader.inherited_runs;
  json j = {{"scenario", "inherit"},
            {"writer_cpu", cpu},
            {"control", summary(control)},
            {"opted_in", summary(opted)},
            {"control_inherited_nothing", control_none},
            {"inherited_from_writer", inherited},
            {"pass", control_none && inherited}};
  std::cout << j.dump() << std::endl;
  return control_none && inherited ? 0 : 1;
}

}  // namespace c2c::vm
