// The loop's SCHED_FIFO budget per wake-up (src/daemon/loop/realtime_budget.hpp): a wake-up that spends
// more CPU than its budget finishes time-shared and returns to SCHED_FIFO before the next wait
// (CAP_SYS_NICE, which the daemon keeps); a short one stays SCHED_FIFO; turns that did not
// sleep share one budget. CPU timers are checked at the scheduler tick (4 ms at HZ=250), so the
// budgets and the work below are tens of milliseconds apart.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <thread>

#include "daemon/loop/realtime_budget.hpp"
#include "daemon/loop/realtime_priority.hpp"
#include "daemon_fifo_probe.hpp"

namespace c2c::daemon {
namespace {

uint64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

void spin_cpu_ms(unsigned ms) {
  const uint64_t until = thread_cpu_ns() + ms * 1'000'000ull;
  while (thread_cpu_ns() < until) {
  }
}

struct Seen {
  std::string setup, back;
  int during = -1, after = -1;
  uint64_t demotions = 0;
};

// In a thread of its own at SCHED_FIFO 2: `work` between a wake-up and the next wait.
template <typename Work>
Seen run_turn(uint64_t budget_ns, Work work) {
  Seen s;
  std::thread([&] {
    RealtimeOutcome rt = enter_realtime(2);
    if (!rt.refused.empty()) {
      s.setup = rt.refused;
      return;
    }
    RealtimeBudget b(2, budget_ns);
    s.setup = b.error();
    work(b);
    s.during = ::sched_getscheduler(0);
    s.back = b.before_wait(true);
    s.after = ::sched_getscheduler(0);
    s.demotions = b.demotions();
  }).join();
  return s;
}

TEST(RealtimeBudget, ATurnPastItsBudgetFinishesTimeSharedAndComesBack) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  Seen s = run_turn(5'000'000, [](RealtimeBudget& b) {
    b.woke(true);
    spin_cpu_ms(40);
  });
  ASSERT_EQ(s.setup, "");
  EXPECT_EQ(s.during, SCHED_OTHER) << "40 ms of CPU on a 5 ms budget and still SCHED_FIFO";
  EXPECT_EQ(s.back, "");
  EXPECT_EQ(s.after, SCHED_FIFO) << "not back to SCHED_FIFO before the wait";
  EXPECT_EQ(s.demotions, 1u);
}

TEST(RealtimeBudget, AShortTurnStaysFifo) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  Seen s = run_turn(50'000'000, [](RealtimeBudget& b) {
    b.woke(true);
    spin_cpu_ms(2);
  });
  ASSERT_EQ(s.setup, "");
  EXPECT_EQ(s.during, SCHED_FIFO);
  EXPECT_EQ(s.after, SCHED_FIFO);
  EXPECT_EQ(s.demotions, 0u);
}

TEST(RealtimeBudget, TurnsThatDidNotSleepShareOneBudget) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  // 30 ms each, 60 ms together, on a 45 ms budget: only the sum is past it.
  Seen s = run_turn(45'000'000, [](RealtimeBudget& b) {
    b.woke(true);
    spin_cpu_ms(30);
    b.before_wait(false);  // a turn that polled without sleeping (a backlog)
    b.woke(false);
    spin_cpu_ms(30);
  });
  ASSERT_EQ(s.setup, "");
  EXPECT_EQ(s.during, SCHED_OTHER) << "a backlog read without sleeping got a new budget per turn";
  EXPECT_EQ(s.after, SCHED_FIFO);
}

TEST(RealtimeBudget, ABacklogStaysTimeSharedUntilTheLoopSleeps) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  int between = -1;
  Seen s = run_turn(5'000'000, [&](RealtimeBudget& b) {
    b.woke(true);
    spin_cpu_ms(40);  // past the budget: time-shared
    b.before_wait(false);  // the next turn reads on without sleeping
    b.woke(false);
    between = ::sched_getscheduler(0);
    spin_cpu_ms(20);
  });
  ASSERT_EQ(s.setup, "");
  EXPECT_EQ(between, SCHED_OTHER) << "back at SCHED_FIFO for a backlog, with no budget left to stop it";
  EXPECT_EQ(s.during, SCHED_OTHER);
  EXPECT_EQ(s.after, SCHED_FIFO) << "not back before a wait that sleeps";
}

TEST(RealtimeBudget, AWakeUpAfterASleepHasAFullBudget) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  Seen s = run_turn(45'000'000, [](RealtimeBudget& b) {
    b.woke(true);
    spin_cpu_ms(30);
    b.woke(true);
    spin_cpu_ms(30);
  });
  ASSERT_EQ(s.setup, "");
  EXPECT_EQ(s.during, SCHED_FIFO) << "two short wake-ups, each within its budget";
}

// Short wake-ups (a task event each) share one arm of the timer: none arms it again while at
// least half the budget is left, and each runs SCHED_FIFO.
TEST(RealtimeBudget, ShortWakeUpsShareOneArmOfTheTimer) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  uint64_t arms = 0;
  Seen s = run_turn(45'000'000, [&](RealtimeBudget& b) {
    for (int i = 0; i < 20; ++i) {
      if (i > 0) b.before_wait(true);
      b.woke(true);
      spin_cpu_ms(1);
    }
    arms = b.arms();
  });
  ASSERT_EQ(s.setup, "");
  EXPECT_EQ(arms, 1u) << "20 ms of 20 wake-ups, less than half of 45 ms";
  EXPECT_EQ(s.during, SCHED_FIFO);
  EXPECT_EQ(s.demotions, 0u);
}

// Once half the budget may be spent, the next wake-up arms a whole one again.
TEST(RealtimeBudget, AWakeUpArmsTheTimerAgainOnceHalfTheBudgetMayBeSpent) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  uint64_t arms = 0;
  Seen s = run_turn(45'000'000, [&](RealtimeBudget& b) {
    b.woke(true);
    spin_cpu_ms(25);
    b.before_wait(true);
    b.woke(true);
    arms = b.arms();
    spin_cpu_ms(30);
  });
  ASSERT_EQ(s.setup, "");
  EXPECT_EQ(arms, 2u);
  EXPECT_EQ(s.during, SCHED_FIFO) << "30 ms of a whole 45 ms budget";
}

// A timer that fires in the tail of a wait (the tick after the thread last ran) demotes the
// sleeping thread; the next wake-up takes SCHED_FIFO back before its work, counts the demotion
// and arms a whole budget. The signal is sent by hand here (the timer's own signal).
TEST(RealtimeBudget, AWakeUpAfterADemotionInTheWaitRunsFifoAgain) {
  if (auto why = fifo_refused_here(); !why.empty()) GTEST_SKIP() << why;
  int woke_as = -1;
  uint64_t demoted = 0, arms = 0;
  Seen s = run_turn(45'000'000, [&](RealtimeBudget& b) {
    b.woke(true);
    b.before_wait(true);
    ::pthread_kill(::pthread_self(), SIGRTMIN);  // the handler demotes the thread
    b.woke(true);
    woke_as = ::sched_getscheduler(0);
    demoted = b.demotions();
    arms = b.arms();
  });
  ASSERT_EQ(s.setup, "");
  EXPECT_EQ(woke_as, SCHED_FIFO);
  EXPECT_EQ(demoted, 1u);
  EXPECT_EQ(arms, 2u) << "a whole budget again";
}

}  // namespace
}  // namespace c2c::daemon
