// The daemon's side of the controller (issue 46; spec/daemon.md, "The controller"): windows
// measured from schedstat counters (a fake reader here), the signal given to the core, no signal
// when every thread reads 0 0 0 (fail closed), and the decisions kept and logged with their fields.
#include <gtest/gtest.h>

#include <map>

#include "daemon/controller/decision_log.hpp"
#include "daemon/controller/signal_windows.hpp"

namespace c2c::daemon {
namespace {

constexpr Nanos kMs = 1'000'000, kS = 1'000'000'000;

struct FakeCounters {
  std::map<uint32_t, host::SchedStat> by_tid;
  SignalWindows::Reader reader() {
    return [this](uint32_t, uint32_t tid) -> std::optional<host::SchedStat> {
      auto it = by_tid.find(tid);
      if (it == by_tid.end()) return std::nullopt;
      return it->second;
    };
  }
};

Core controlled_core() {
  Core core;
  NodeInfo n;
  n.name = "node-a";
  n.cpus = CpuSet::range(0, 3);
  EXPECT_TRUE(core.apply(NodeInfoEvent{n}).ok());
  NodeSchedulingPolicy p;
  p.name = "w";
  p.generation = 1;
  p.node_names = {"node-a"};  // a node policy must select nodes
  p.command_regex = "^worker$";
  ControllerSpec c;
  c.target_ns = 2 * kMs;
  c.boost = true;
  c.window = kS;
  c.cooldown = kS;
  c.max_raised = 10 * kS;
  c.windows_without_signal = 2;
  p.controller = c;
  const ApplyResult upserted = core.apply(NodePolicyUpsert{p});
  EXPECT_TRUE(upserted.ok()) << upserted.field << ": " << upserted.message;
  for (uint32_t tid : {10u, 11u, 12u}) {
    Task t;
    t.key = {tid, tid * 10ull};
    // 12: a process of its own (a thread of process 10 would inherit its leader's match).
    t.tgid = tid == 12 ? 12 : 10;
    t.comm = tid == 12 ? "other" : "worker";
    t.cgroup = "/w";
    EXPECT_TRUE(core.apply(TaskSeen{t}).ok());
  }
  return core;
}

TEST(SignalWindows, AWindowGivesTheThreadsRunDelayP99AndCpuShare) {
  Core core = controlled_core();
  FakeCounters fake;
  fake.by_tid = {{10, {100 * kMs, 10 * kMs, 100}}, {11, {0, 0, 5}}, {12, {1, 1, 1}}};
  SignalWindows w(fake.reader());
  // The first read is the baseline: no window yet, and the next window's end is known.
  EXPECT_TRUE(w.due(core, 5 * kS).empty());
  EXPECT_EQ(w.deadline(), std::optional<Nanos>{6 * kS});
  EXPECT_TRUE(w.due(core, 5 * kS + kS / 2).empty()) << "not before the window's end";
  // Tid 10: 500 ms on CPU, 40 ms waiting over 10 runs (4 ms a run); tid 11: 1 run, 1 ms waiting.
  fake.by_tid[10] = {600 * kMs, 50 * kMs, 110};
  fake.by_tid[11] = {0, 1 * kMs, 6};
  fake.by_tid[12] = {900 * kMs, 900 * kMs, 900};  // another policy's thread: never measured
  auto due = w.due(core, 6 * kS);
  ASSERT_EQ(due.size(), 1u);
  const WindowSignals& s = due[0];
  EXPECT_EQ(s.event.kind, PolicyKind::Node);
  EXPECT_EQ(s.event.policy, "w");
  EXPECT_EQ(s.event.signal, std::optional<Nanos>{4 * kMs}) << "p99 (nearest rank) of {1 ms, 4 ms}";
  EXPECT_EQ(s.tids, (std::vector<uint32_t>{10, 11}));
  EXPECT_EQ(s.threads_ran, 2u);
  EXPECT_DOUBLE_EQ(s.cpu_share_max, 0.5);
  EXPECT_DOUBLE_EQ(s.cpu_share_mean, 0.25);
  EXPECT_TRUE(s.no_signal.empty());
  // The core decides from it: 4 ms > 2 ms raises.
  ASSERT_TRUE(core.apply(TimeAdvance{6 * kS}).ok());
  const ApplyResult r = core.apply(s.event);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].rule, ControllerRule::Raise);
}

TEST(SignalWindows, EveryThreadReadingZerosIsNoSignalNotAZeroDelay) {
  Core core = controlled_core();
  FakeCounters fake;
  fake.by_tid = {{10, {0, 0, 0}}, {11, {0, 0, 0}}};
  SignalWindows w(fake.reader());
  EXPECT_TRUE(w.due(core, kS).empty());
  auto due = w.due(core, 2 * kS);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_FALSE(due[0].event.signal) << "0 0 0 everywhere: a kernel without CONFIG_SCHED_INFO (CTL-5)";
  EXPECT_NE(due[0].no_signal.find("0 0 0"), std::string::npos);
  EXPECT_TRUE(w.schedstat_zero());
  // A thread that did not run in the window gives no delay either; threads that are gone, none.
  fake.by_tid = {{10, {5, 0, 1}}, {11, {5, 0, 1}}};
  due = w.due(core, 3 * kS);
  fake.by_tid.clear();
  due = w.due(core, 4 * kS);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_FALSE(due[0].event.signal);
  EXPECT_EQ(due[0].no_signal, "no thread to measure");
}

TEST(SignalWindows, AReusedTidIsNotCountedAsTheSameThread) {
  Core core = controlled_core();
  FakeCounters fake;
  fake.by_tid = {{10, {0, 0, 1}}, {11, {0, 0, 1}}};
  SignalWindows w(fake.reader());
  w.due(core, kS);
  // Tid 11 exits and a new thread reuses it (another start): its counters start again.
  Task t;
  t.key = {11, 999};
  t.tgid = 10;
  t.comm = "worker";
  t.cgroup = "/w";
  ASSERT_TRUE(core.apply(TaskExited{{11, 110}}).ok());
  ASSERT_TRUE(core.apply(TaskSeen{t}).ok());
  fake.by_tid = {{10, {1, 3 * kMs, 2}}, {11, {0, 900 * kMs, 3}}};
  auto due = w.due(core, 2 * kS);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].event.signal, std::optional<Nanos>{3 * kMs}) << "only tid 10's window (3 ms over 1 run)";
}

TEST(DecisionLog, KeepsTheNewestAndFiltersByPolicyAndThread) {
  DecisionLog log;
  for (uint32_t i = 0; i < DecisionLog::kKept + 5; ++i) {
    node::Decision d;
    d.record.kind = PolicyKind::Node;
    d.record.policy = i % 2 ? "a" : "b";
    d.record.at = i;
    d.tids = {i % 3, 100};
    log.add(d);
  }
  auto all = log.list("", 0, 0);
  ASSERT_EQ(all.size(), DecisionLog::kKept);
  EXPECT_EQ(all.front().record.at, 5u) << "the oldest went first";
  auto a = log.list("NodeSchedulingPolicy/a", 0, 3);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a.back().record.at, DecisionLog::kKept + 3) << "the newest of policy a (odd i; the last i, kKept + 4, is b's)";
  EXPECT_EQ(log.list("a", 0, 0).size(), DecisionLog::kKept / 2);
  for (const auto& d : log.list("", 2, 0)) EXPECT_EQ(d.tids.front(), 2u);
  EXPECT_TRUE(log.list("", 7, 0).empty());
}

TEST(DecisionLog, ARecordCarriesTheDecisionsFields) {
  node::Decision d;
  d.record = {PolicyKind::Node, "w", 6 * kS, 0, 1, 4 * kMs, ControllerRule::Raise, "level 0 -> 1: runDelayP99 4ms > target 2ms"};
  d.tids = {10, 11};
  d.threads_ran = 2;
  d.cpu_share_mean = 0.25;
  d.cpu_share_max = 0.5;
  d.cpu_pressure_pct = 37.5;
  LogRecord r = decision_record(d);
  EXPECT_TRUE(r.info) << "a level change is info";
  EXPECT_EQ(logfmt(r),
            "controller decision policy=NodeSchedulingPolicy/w rule=raise from_level=0 to_level=1 "
            "run_delay_p99_ns=4000000 cpu_share_mean=0.250 cpu_share_max=0.500 cpu_pressure_some_pct=37.500 threads=2 "
            "threads_ran=2 "
            "reason=\"level 0 -> 1: runDelayP99 4ms > target 2ms\"");
  d.record.to = 0;
  d.record.from = 0;
  d.record.rule = ControllerRule::Silent;
  d.record.signal.reset();
  d.no_signal = "no measured thread ran in the window";
  r = decision_record(d);
  EXPECT_FALSE(r.info) << "a hold is debug (one per window)";
  EXPECT_NE(logfmt(r).find("no_signal=\"no measured thread ran in the window\""), std::string::npos);
}

}  // namespace
}  // namespace c2c::daemon
