// Roles from activity in the daemon (issue 46 item 4; src/daemon/controller/activity_windows.*):
// which processes are watched (the classifying policies' only), a window's proposals kept per
// policy, classify: off proposing nothing, a source that cannot load failing closed, preview under
// another classify, and classify: apply joining a critical-path thread to the controller's
// measured threads unless a registered role outranks it (CLS-2, CLS-3). A fake source stands for
// the BPF tracer; the CPU pressure of a window is checked with a fake cpu.pressure reader.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "daemon/controller/activity_windows.hpp"
#include "daemon/controller/signal_windows.hpp"

namespace c2c::daemon {
namespace {

constexpr Nanos kMs = 1'000'000, kS = 1'000'000'000;

struct FakeSource final : ActivitySource {
  struct Shared {
    std::vector<std::vector<uint32_t>> watched;  // every watch() call's tgids
    std::string refuse;                          // watch() fails with this
    host::ActivityReading now;                   // what read() returns
  };
  Shared* s;
  explicit FakeSource(Shared* shared) : s(shared) {}
  std::string watch(const std::vector<uint32_t>& tgids) override {
    s->watched.push_back(tgids);
    return s->refuse;
  }
  std::optional<host::ActivityReading> read(std::string*) override { return s->now; }
};

Task task(uint32_t tid, uint32_t tgid, const std::string& comm) {
  Task t;
  t.key = {tid, 1000 + tid};
  t.tgid = tgid;
  t.comm = comm;
  t.cgroup = "/w";
  return t;
}

// Process 300: leader `main` (no match), `busy` (the selector's thread), `waker` (wakes busy every
// step: no entry of its own, its process's policy decides). Process 400: no policy's.
Core classify_core(ClassifyMode mode) {
  Core core;
  NodeInfo n;
  n.name = "node-a";
  n.cpus = CpuSet::range(0, 3);
  EXPECT_TRUE(core.apply(NodeInfoEvent{n}).ok());
  NodeSchedulingPolicy p;
  p.name = "busy";
  p.generation = 1;
  p.node_names = {"node-a"};
  p.command_regex = "^busy$";
  p.classify = mode;
  ControllerSpec c;
  c.target_ns = 2 * kMs;
  c.boost = true;
  c.window = c.cooldown = kS;
  c.max_raised = 10 * kS;
  c.windows_without_signal = 2;
  p.controller = c;
  const ApplyResult r = core.apply(NodePolicyUpsert{p});
  EXPECT_TRUE(r.ok()) << r.field << ": " << r.message;
  for (const auto& t : {task(300, 300, "main"), task(301, 300, "busy"), task(302, 300, "waker"), task(400, 400, "other")})
    EXPECT_TRUE(core.apply(TaskSeen{t}).ok());
  return core;
}

// Cumulative counts after `steps` steps: 302 wakes 301 on each of its wakeups.
host::ActivityReading reading(uint64_t steps) {
  host::ActivityReading r;
  r.threads = {{300, 300, 0, 0, 0, 0}, {301, 300, steps * kMs, steps, steps, 0}, {302, 300, steps * kMs / 10, steps, 0, steps}};
  r.edges = {{302, 301, steps}};
  return r;
}

struct Gatherer {
  FakeSource::Shared shared;
  ActivityWindows a{std::make_unique<FakeSource>(&shared)};
};

TEST(ActivityWindows, TheClassifyingPoliciesProcessesAreWatchedAndAWindowsProposalsKept) {
  Core core = classify_core(ClassifyMode::Propose);
  Gatherer g;
  g.shared.now = reading(0);
  EXPECT_FALSE(g.a.gather(core, 5 * kS)) << "the first reading is a baseline";
  ASSERT_EQ(g.shared.watched.size(), 1u);
  EXPECT_EQ(g.shared.watched[0], std::vector<uint32_t>{300}) << "process 400 is no policy's";
  EXPECT_EQ(g.a.deadline(), std::optional<Nanos>{6 * kS}) << "the controller's window is the period";
  EXPECT_FALSE(g.a.gather(core, 5 * kS + kS / 2)) << "not before the period's end";
  g.shared.now = reading(100);
  EXPECT_TRUE(g.a.gather(core, 6 * kS));
  const PolicyProposals* pp = g.a.of_policy(PolicyKind::Node, "busy");
  ASSERT_NE(pp, nullptr);
  EXPECT_EQ(pp->window_ns, kS);
  ASSERT_EQ(pp->proposals.size(), 2u);
  auto waker = g.a.of_tid(302);
  ASSERT_TRUE(waker.has_value());
  EXPECT_EQ(waker->outcome, ProposalOutcome::Shown);
  EXPECT_EQ(waker->text,
            "proposed: critical-path (latency-critical), confidence 1.00: tid 302 wakes tid 301 on 100 of its 100 "
            "wakeups (100 %): critical path [NodeSchedulingPolicy/busy, classify: propose]");
  EXPECT_EQ(g.a.of_tid(301)->outcome, ProposalOutcome::OutrankedBySelector);
  const node::Proposal p = to_node_proposal(*waker, pp->window_ns);
  EXPECT_EQ(std::make_tuple(p.tid, p.confidence_permille, p.counterpart), std::make_tuple(302u, 1000u, 301u));
  EXPECT_EQ(p.execution_class, "latency-critical");
  EXPECT_EQ(p.outcome, "proposed");
  EXPECT_EQ(g.a.status(), "watching 1 processes of 1 policies, a window every 1000 ms");
  EXPECT_TRUE(g.a.joined().empty()) << "classify: propose joins nothing to the controller";

  // Preview: the same proposals under the previewed classify.
  EXPECT_TRUE(previewed_proposals(g.a, PolicyKind::Node, "busy", ClassifyMode::Off).empty());
  auto applied = previewed_proposals(g.a, PolicyKind::Node, "busy", ClassifyMode::Apply);
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[1].outcome, "applied");
  EXPECT_EQ(applied[1].classify, "apply");
  EXPECT_TRUE(previewed_proposals(g.a, PolicyKind::Node, "other", ClassifyMode::Apply).empty());
}

TEST(ActivityWindows, ClassifyOffWatchesNothingAndProposesNothing) {
  Core core = classify_core(ClassifyMode::Off);
  Gatherer g;
  g.shared.now = reading(0);
  EXPECT_FALSE(g.a.gather(core, 5 * kS));
  g.shared.now = reading(100);
  EXPECT_FALSE(g.a.gather(core, 6 * kS));
  ASSERT_FALSE(g.shared.watched.empty());
  EXPECT_TRUE(g.shared.watched.back().empty()) << "no process of a classify: off policy is watched";
  EXPECT_EQ(g.a.of_tid(302), std::nullopt);
  EXPECT_EQ(g.a.of_policy(PolicyKind::Node, "busy"), nullptr);
  EXPECT_EQ(g.a.deadline(), std::nullopt);
  EXPECT_EQ(g.a.status(), "idle: no policy with classify propose or apply has threads");
}

TEST(ActivityWindows, ASourceThatCannotWorkIsSaidAndFailsClosed) {
  Core core = classify_core(ClassifyMode::Propose);
  Gatherer g;
  g.shared.now = reading(0);
  g.a.gather(core, 5 * kS);
  g.shared.now = reading(100);
  ASSERT_TRUE(g.a.gather(core, 6 * kS));
  ASSERT_TRUE(g.a.of_tid(302).has_value());
  // The program stops working (e.g. its filter cannot be written): no proposals from then on.
  g.shared.refuse = "the wakeup-edges program cannot be used: no BTF";
  g.shared.now = reading(200);
  EXPECT_FALSE(g.a.gather(core, 7 * kS));
  EXPECT_EQ(g.a.unavailable(), "the wakeup-edges program cannot be used: no BTF");
  EXPECT_EQ(g.a.of_tid(302), std::nullopt) << "fail closed: the old proposals are gone too";
  EXPECT_EQ(g.a.deadline(), std::nullopt);
  EXPECT_FALSE(g.a.gather(core, 9 * kS));
  EXPECT_EQ(g.shared.watched.size(), 3u) << "not asked again";
  EXPECT_EQ(g.a.status(), "unavailable: the wakeup-edges program cannot be used: no BTF (no roles proposed from activity)");
}

std::vector<uint32_t> measured(Core& core, ActivityWindows& a) {
  SignalWindows w([](uint32_t, uint32_t) { return std::optional<host::SchedStat>(host::SchedStat{kMs, kMs, 1}); });
  EXPECT_TRUE(w.due(core, 6 * kS, a.joined()).empty());  // a baseline
  auto due = w.due(core, 7 * kS, a.joined());
  EXPECT_EQ(due.size(), 1u);
  return due.empty() ? std::vector<uint32_t>{} : due[0].tids;
}

TEST(ActivityWindows, ApplyJoinsTheCriticalPathToTheControllersThreadsUnlessARoleOutranksIt) {
  Core core = classify_core(ClassifyMode::Apply);
  Gatherer g;
  g.shared.now = reading(0);
  g.a.gather(core, 5 * kS);
  g.shared.now = reading(100);
  ASSERT_TRUE(g.a.gather(core, 6 * kS));
  EXPECT_EQ(g.a.of_tid(302)->outcome, ProposalOutcome::Applied);
  EXPECT_EQ(measured(core, g.a), (std::vector<uint32_t>{301, 302})) << "the selector's thread and the applied waker";

  // The waker registers a role: the role wins (CLS-2), the controller measures its own thread only.
  ASSERT_TRUE(core.apply(TaskRoleSet{{302, 1302}, "io"}).ok());
  g.shared.now = reading(200);
  ASSERT_TRUE(g.a.gather(core, 7 * kS));
  EXPECT_EQ(g.a.of_tid(302)->outcome, ProposalOutcome::OutrankedByRegisteredRole);
  EXPECT_EQ(measured(core, g.a), std::vector<uint32_t>{301});
}

TEST(SignalWindows, TheCgroupsCpuPressureOverTheWindowGoesWithIt) {
  Core core = classify_core(ClassifyMode::Propose);
  std::map<uint32_t, PressureSample> psi = {{301, {"/sys/fs/cgroup/w", 1'000'000}}};
  SignalWindows w([](uint32_t, uint32_t) { return std::optional<host::SchedStat>(host::SchedStat{kMs, kMs, 1}); },
                  [&](uint32_t, uint32_t tid) -> std::optional<PressureSample> {
                    auto it = psi.find(tid);
                    if (it == psi.end()) return std::nullopt;
                    return it->second;
                  });
  EXPECT_TRUE(w.due(core, 5 * kS).empty());
  psi[301].some_total_us += 250'000;  // 250 ms of the 1 s window stalled
  auto due = w.due(core, 6 * kS);
  ASSERT_EQ(due.size(), 1u);
  ASSERT_TRUE(due[0].cpu_pressure_pct.has_value());
  EXPECT_DOUBLE_EQ(*due[0].cpu_pressure_pct, 25.0);
  EXPECT_EQ(due[0].pressure_cgroup, "/sys/fs/cgroup/w");
  psi.clear();  // no PSI (a v1-only host, psi=0): no value, never 0 %
  due = w.due(core, 7 * kS);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_FALSE(due[0].cpu_pressure_pct.has_value());
}

}  // namespace
}  // namespace c2c::daemon
