// The roles proposed from activity as the node shows them (issue 46 item 4, spec/state-machine.md
// §11; src/daemon/node_state/role_proposal_view.*): which policy's classify decides a proposal, and
// that the policy's explicit selector and a registered role win over it.
#include <gtest/gtest.h>

#include "core/core.hpp"
#include "daemon/node_state/role_proposal_view.hpp"

namespace c2c::daemon {
namespace {

Task task(uint32_t tid, uint32_t tgid, const std::string& comm) {
  Task t;
  t.key = {tid, 1000 + tid};
  t.tgid = tgid;
  t.comm = comm;
  t.cgroup = "/system.slice/x";
  return t;
}

struct Fixture {
  Core core;
  explicit Fixture(ClassifyMode mode) {
    NodeInfo n;
    n.name = "node-a";
    n.cpus = CpuSet::range(0, 3);
    EXPECT_TRUE(core.apply(NodeInfoEvent{n}).ok());
    NodeSchedulingPolicy p;
    p.name = "busy";
    p.generation = 1;
    p.node_names = {"node-a"};
    p.command_regex = "^busy$";
    p.priority = 1;
    p.classify = mode;
    if (mode == ClassifyMode::Apply) {
      ControllerSpec c;
      c.target_ns = 2'000'000;
      c.slice = ControllerSlice{4'000'000, 1'000'000, 1'000'000};
      c.window = c.cooldown = 1'000'000'000;
      c.max_raised = 10'000'000'000;
      c.windows_without_signal = 3;
      p.controller = c;
    }
    auto r = core.apply(NodePolicyUpsert{p});
    EXPECT_TRUE(r.ok()) << r.field << ": " << r.message;
    // Process 100: the busy loop (the selector's), its I/O thread and a spinner; process 200: no policy's.
    for (const auto& t : {task(100, 100, "busy"), task(101, 100, "io"), task(102, 100, "spin"), task(200, 200, "other")})
      EXPECT_TRUE(core.apply(TaskSeen{t}).ok());
  }
  static ActivityWindow window() {
    ActivityWindow w;
    w.window_ns = 1'000'000'000;
    w.threads = {{100, 100, 300'000'000, 43, 42, 0},
                 {101, 100, 5'000'000, 42, 2, 40},
                 {102, 100, 950'000'000, 10, 0, 0},
                 {200, 200, 990'000'000, 10, 0, 0}};
    w.edges = {{101, 100, 40}};
    return w;
  }
};

TEST(RoleProposalView, ASelectorWinsAndTheRestIsProposedUnderItsProcesssPolicy) {
  Fixture f(ClassifyMode::Propose);
  const auto v = view_proposals(f.core, Fixture::window());
  ASSERT_EQ(v.size(), 3u);  // 200 is no policy's thread
  EXPECT_EQ(v[0].proposal.tid, 100u);
  EXPECT_EQ(v[0].outcome, ProposalOutcome::OutrankedBySelector);
  EXPECT_EQ(v[1].proposal.tid, 101u);
  EXPECT_EQ(v[1].proposal.role, ProposedRole::CriticalPath);
  EXPECT_EQ(v[1].outcome, ProposalOutcome::Shown);
  EXPECT_EQ(v[1].policy, "busy");
  EXPECT_EQ(v[1].text,
            "proposed: critical-path (latency-critical), confidence 0.95: tid 101 wakes tid 100 on 40 of its 42 "
            "wakeups (95 %): critical path [NodeSchedulingPolicy/busy, classify: propose]");
  EXPECT_EQ(v[2].proposal.tid, 102u);
  EXPECT_EQ(v[2].proposal.role, ProposedRole::BackgroundLike);
  EXPECT_EQ(v[2].outcome, ProposalOutcome::Shown);
}

TEST(RoleProposalView, ARegisteredRoleWinsAndApplyIsSaid) {
  Fixture f(ClassifyMode::Apply);
  ASSERT_TRUE(f.core.apply(TaskRoleSet{{102, 1102}, "batch"}).ok());
  const auto v = view_proposals(f.core, Fixture::window());
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1].outcome, ProposalOutcome::Applied);
  EXPECT_EQ(v[2].outcome, ProposalOutcome::OutrankedByRegisteredRole);
}

TEST(RoleProposalView, OffProposesNothing) {
  Fixture f(ClassifyMode::Off);
  EXPECT_TRUE(view_proposals(f.core, Fixture::window()).empty());
}

}  // namespace
}  // namespace c2c::daemon
