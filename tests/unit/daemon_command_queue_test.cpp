// The gRPC -> loop hand-off: a burst of calls costs one eventfd write (one wake-up of the loop),
// and no command is ever left behind without a signal.
#include <gtest/gtest.h>
#include <poll.h>

#include <thread>

#include "daemon/loop/command_queue.hpp"

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

// Issue 42: a flood of role commands cannot starve gRPC commands. A drain takes every gRPC
// command queued and at most kRoleCommandsPerTurn role commands (each lane in order), and
// signals again while role commands are left.
TEST(DaemonCommandQueue, RoleCommandsCannotStarveApiCommands) {
  CommandQueue q;
  // (request_bytes tags each command: no Engine is needed to tell them apart)
  auto tagged = [](Lane lane, int id) {
    Command c;
    c.lane = lane;
    c.request_bytes = static_cast<size_t>(id);
    return c;
  };
  std::vector<int> seen;
  const int roles = static_cast<int>(kRoleCommandsPerTurn) * 2 + 5;
  for (int i = 0; i < roles; ++i) ASSERT_TRUE(q.push(tagged(Lane::Role, 1000 + i)));
  ASSERT_TRUE(q.push(tagged(Lane::Api, 1)));
  ASSERT_TRUE(q.push(tagged(Lane::Api, 2)));
  auto run = [&](std::vector<Command> batch) {
    for (auto& c : batch) seen.push_back(static_cast<int>(c.request_bytes));
    return batch.size();
  };
  EXPECT_EQ(run(q.drain()), kRoleCommandsPerTurn + 2);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0], 1) << "the gRPC commands come first in the batch";
  EXPECT_EQ(seen[1], 2);
  EXPECT_EQ(seen[2], 1000) << "role commands in order";
  EXPECT_TRUE(signalled(q.event_fd())) << "role commands are left: the loop must come back";
  ASSERT_TRUE(q.push(tagged(Lane::Api, 3)));
  seen.clear();
  EXPECT_EQ(run(q.drain()), kRoleCommandsPerTurn + 1);
  EXPECT_EQ(seen[0], 3) << "a gRPC command pushed behind a role backlog runs in the next turn, first";
  EXPECT_EQ(seen[1], 1000 + static_cast<int>(kRoleCommandsPerTurn));
  EXPECT_TRUE(signalled(q.event_fd()));
  EXPECT_EQ(run(q.drain()), 5u);
  EXPECT_FALSE(signalled(q.event_fd()));
  EXPECT_EQ(q.size(), 0u);
}

}  // namespace
}  // namespace c2c::daemon
