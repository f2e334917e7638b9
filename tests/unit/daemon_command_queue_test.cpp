// The gRPC -> loop hand-off: a burst of calls costs one eventfd write (one wake-up of the loop),
// and no command is ever left behind without a signal.
#include <gtest/gtest.h>
#include <poll.h>

#include <thread>

#include "daemon/command_queue.hpp"

namespace c2c::daemon {
namespace {

bool signalled(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(DaemonCommandQueue, ABurstIsOneWakeUpAndEveryPushAfterADrainSignalsAgain) {
  CommandQueue q;
  EXPECT_FALSE(signalled(q.event_fd()));
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(q.push(Command{}));
  EXPECT_EQ(q.wakeups(), 1u);
  EXPECT_TRUE(signalled(q.event_fd()));
  EXPECT_EQ(q.drain().size(), 16u);
  EXPECT_FALSE(signalled(q.event_fd()));
  ASSERT_TRUE(q.push(Command{}));
  EXPECT_EQ(q.wakeups(), 2u);
  EXPECT_TRUE(signalled(q.event_fd()));
  q.close();
  EXPECT_FALSE(q.push(Command{}));
  EXPECT_EQ(q.drain().size(), 1u);
}

TEST(DaemonCommandQueue, ConcurrentPushersNeverLeaveACommandWithoutASignal) {
  CommandQueue q;
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) q.push(Command{});
    });
  size_t got = 0;
  while (got < kThreads * kEach) {
    pollfd p{q.event_fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1) << "commands queued (" << q.size() << ") without a signal";
    got += q.drain().size();
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(q.size(), 0u);
  EXPECT_LE(q.wakeups(), static_cast<uint64_t>(kThreads * kEach));
}

}  // namespace
}  // namespace c2c::daemon
