// The wakeup-edge tracer (bpf/wakeup_edges.bpf.c, src/host/wakeup_edges.*) on real threads: two
// threads ping-pong through a condition variable (each wakes the other every round) while a third
// spins and wakes nobody. Needs root (BPF); skips with the reason otherwise.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "host/wakeup_edges.hpp"

namespace {

using c2c::host::ActivityFilter;
using c2c::host::WakeupEdgeTracer;

uint32_t my_tid() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

const c2c::ThreadActivity* thread_of(const std::vector<c2c::ThreadActivity>& ts, uint32_t tid) {
  for (const auto& t : ts)
    if (t.tid == tid) return &t;
  return nullptr;
}

uint64_t edge(const std::vector<c2c::WakeEdge>& es, uint32_t waker, uint32_t wakee) {
  for (const auto& e : es)
    if (e.waker == waker && e.wakee == wakee) return e.count;
  return 0;
}

TEST(WakeupEdges, PingPongThreadsWakeEachOtherAndTheSpinnerWakesNobody) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (CAP_BPF, CAP_PERFMON) to load BPF programs";
  std::string err;
  auto tracer = WakeupEdgeTracer::open(&err, ActivityFilter{{static_cast<uint32_t>(::getpid())}, {}, {}});
  ASSERT_NE(tracer, nullptr) << err;

  std::atomic<bool> stop_spin{false};
  std::atomic<uint32_t> spin_tid{0}, ping_tid{0}, pong_tid{0};
  std::thread spinner([&] {
    spin_tid = my_tid();
    volatile uint64_t x = 0;
    while (!stop_spin.load(std::memory_order_relaxed)) x = x + 1;
  });

  // Ping-pong: `turn` says whose move it is; each move hands the turn over and notifies. Bounded
  // by rounds and by time (the machine is shared and loaded).
  constexpr int kRounds = 400;
  std::mutex m;
  std::condition_variable cv;
  int turn = 0, moves = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto player = [&](int me, std::atomic<uint32_t>& tid) {
    tid = my_tid();
    std::unique_lock lk(m);
    while (moves < 2 * kRounds && std::chrono::steady_clock::now() < deadline) {
      if (!cv.wait_until(lk, deadline, [&] { return turn == me || moves >= 2 * kRounds; })) break;
      if (moves >= 2 * kRounds) break;
      turn = 1 - me;
      ++moves;
      cv.notify_all();
    }
    cv.notify_all();
  };
  std::thread ping(player, 0, std::ref(ping_tid)), pong(player, 1, std::ref(pong_tid));
  ping.join();
  pong.join();
  // The spinner spins on alone for a while: this thread's sleep ends in a timer interrupt, likely
  // on the spinner's CPU, which is nobody's wake (not an edge out of the spinner). Read while the
  // spinner still spins: its exit wakes the joiner (the futex of clear_child_tid).
  for (int i = 0; i < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto r = tracer->read(&err);
  stop_spin = true;
  spinner.join();
  ASSERT_TRUE(err.empty()) << err;
  ASSERT_GE(moves, 100) << "the ping-pong made too few moves to judge";

  const auto* spin = thread_of(r.threads, spin_tid);
  const auto* a = thread_of(r.threads, ping_tid);
  const auto* b = thread_of(r.threads, pong_tid);
  ASSERT_NE(spin, nullptr);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::printf("moves %d; ping->pong %llu, pong->ping %llu; run ns: spinner %llu ping %llu pong %llu\n", moves,
              static_cast<unsigned long long>(edge(r.edges, ping_tid, pong_tid)),
              static_cast<unsigned long long>(edge(r.edges, pong_tid, ping_tid)),
              static_cast<unsigned long long>(spin->run_ns), static_cast<unsigned long long>(a->run_ns),
              static_cast<unsigned long long>(b->run_ns));
  // A move is not always a wakeup (the other player may not have slept yet), so at least a
  // quarter of each side's moves.
  EXPECT_GE(edge(r.edges, ping_tid, pong_tid), static_cast<uint64_t>(moves / 8)) << "moves " << moves;
  EXPECT_GE(edge(r.edges, pong_tid, ping_tid), static_cast<uint64_t>(moves / 8)) << "moves " << moves;
  EXPECT_GE(a->wakeups, edge(r.edges, pong_tid, ping_tid));
  EXPECT_GE(b->wakes_given, edge(r.edges, pong_tid, ping_tid));
  // The spinner: no edge out of it, no wake given, and it ran longer than either player.
  for (const auto& e : r.edges) EXPECT_NE(e.waker, spin_tid.load()) << "spinner woke " << e.wakee;
  EXPECT_EQ(spin->wakes_given, 0u);
  EXPECT_GT(spin->run_ns, a->run_ns);
  EXPECT_GT(spin->run_ns, b->run_ns);
  EXPECT_GT(spin->runs, 0u);
  EXPECT_EQ(r.dropped_threads, 0u);
  EXPECT_EQ(r.dropped_edges, 0u);
  for (const auto& t : r.threads) EXPECT_EQ(t.tgid, static_cast<uint32_t>(::getpid()));
}

TEST(WakeupEdges, AnEmptyFilterIsRefusedNamingIt) {
  std::string err;
  EXPECT_EQ(WakeupEdgeTracer::open(&err, ActivityFilter{}), nullptr);
  EXPECT_NE(err.find("filter"), std::string::npos) << err;
}

}  // namespace
