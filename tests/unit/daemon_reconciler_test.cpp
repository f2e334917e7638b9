// The reconciler as a unit (src/daemon/reconciler/reconciler.hpp, issue 44): the node state's
// plan written to the mirror's fake map (the seam the engine gives it the pinned map through),
// on a clock the test moves. A write makes an intent SENT and only a read-back APPLIED; a failed
// write waits in the retry queue for the timer (no sleep) and is written when due; drift (a key
// holding an older value, a key nobody wrote) is found by the read-back, re-observed and
// repaired (INV-5); a read-back in slices goes over the whole map. Built into daemon_durable_tests
// (no gRPC, no prometheus-cpp), so tests/mutants/mutate.py daemon_durable seeds bugs in the reconciler.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "daemon/durable/generation_guard.hpp"
#include "daemon/reconciler/reconciler.hpp"
#include "mirror_fake_map.hpp"

namespace c2c::daemon {
namespace {

namespace fs = std::filesystem;
constexpr const char* kNode = "node-r";

// The metrics the reconciler reports, counted.
struct CountedMetrics final : ReconcilerMetrics {
  size_t applies = 0, written_keys_reads = 0, whole_map_reads = 0, violations = 0;
  double drift = 0, drift_now = 0;
  void observe_apply(double) override { ++applies; }
  void readback(const char* read) override { ++(std::string(read) == "written_keys" ? written_keys_reads : whole_map_reads); }
  void add_drift(double n) override { drift += n; }
  void set_drift_now(double n) override { drift_now = n; }
  void full_pass(const char*, double, double) override {}
  void violation(const std::string&) override { ++violations; }
};

class ReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("c2c-reconciler-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::string err;
    node_.node_name = kNode;
    node_.lease = open_node_lease(dir_.string(), &map_, false, &err);
    ASSERT_TRUE(node_.lease) << err;
    ASSERT_TRUE(node_.core.apply(DaemonRestart{node_.lease->floor()}).ok());
    ASSERT_EQ(node_.lease->cover(node_.core.generation()), "");
    NodeInfo n;
    n.name = kNode;
    n.cpus = CpuSet::range(0, 3);
    n.numa_cpus = {{0, CpuSet::range(0, 3)}};
    ASSERT_TRUE(node_.core.apply(NodeInfoEvent{n}).ok());
    node_.core.apply(BpfObserved{{}});
    node_.core.apply(SyncComplete{});
    reconciler_ = std::make_unique<Reconciler>(
        node_, map_, cfg_, metrics_, heap_trim_,
        ReconcilerClock{[this] { return now_; }, [] { return uint64_t{0}; }, [this] { return int64_t(now_ / 1'000'000); }});
    reconciler_->readback_pass().next_ns = now_ + cfg_.readback_interval_ns;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // engine_api.cpp's upsert, without the durable batch: the core, the durable copy, the intent.
  void upsert(Nanos slice) {
    NodeSchedulingPolicy p;
    p.name = "p";
    p.node_names = {kNode};
    p.command_regex = "^alpha$";
    p.priority = 1;
    p.execution_time = slice;
    auto r = node_.core.apply(NodePolicyUpsert{p});
    ASSERT_EQ(r.status, ApplyResult::Status::Applied) << r.message;
    node_.facts.touched(r.changed_tids);
    auto stored = node_.core.node_policy("p");
    apply_change(node_.durable, PutPolicy{*stored});
    node_.intents.accepted(PolicyKind::Node, "p", stored->generation, kNode, {}, 1);
  }
  void task(uint32_t tid) {
    Task t;
    t.key = TaskKey{tid, 1000 + tid};
    t.tgid = tid;
    t.comm = "alpha";
    t.cgroup = "/system.slice/r.service";
    node_.facts.touched(node_.core.apply(TaskSeen{t}).changed_tids);
  }
  IntentState state() const { return node_.intents.find(PolicyKind::Node, "p")->state; }
  // The short read-back the loop runs once a write left an intent SENT (100 ms later).
  bool confirm() {
    reconciler_->schedule_confirm();
    now_ += 200'000'000;
    return reconciler_->read_back_if_due(now_, false);
  }

  fs::path dir_;
  mirror::testing::FakePolicyMap map_{64};
  DaemonConfig cfg_;
  CountedMetrics metrics_;
  HeapTrim heap_trim_;
  NodeState node_;
  uint64_t now_ = 10'000'000'000ull;
  std::unique_ptr<Reconciler> reconciler_;
};

TEST_F(ReconcilerTest, AWriteMakesTheIntentSentAndOnlyTheReadBackApplied) {
  upsert(2'000'000);
  task(7);
  task(8);
  reconciler_->reconcile();
  ASSERT_EQ(map_.entries.size(), 2u);
  EXPECT_EQ(map_.entries.at(7).slice_ns, 2'000'000u);
  EXPECT_EQ(state(), IntentState::Sent) << "written, not read back yet";
  EXPECT_FALSE(confirm()) << "the map holds what was written: no drift";
  EXPECT_EQ(state(), IntentState::Applied);
  EXPECT_EQ(metrics_.written_keys_reads, 1u) << "the short pass read the two written keys, not the whole map";
  EXPECT_EQ(metrics_.whole_map_reads, 0u);
  EXPECT_EQ(reconciler_->pending_ops(), 0u);
}

TEST_F(ReconcilerTest, AFailedWriteWaitsForTheTimerAndIsWrittenWhenDue) {
  upsert(2'000'000);
  task(7);
  int failures = 1;
  map_.fault = [&](char op, uint32_t) { return op == 'u' && failures-- > 0 ? ENOSPC : 0; };
  reconciler_->reconcile();
  EXPECT_TRUE(map_.entries.empty());
  EXPECT_EQ(state(), IntentState::Failed);
  EXPECT_EQ(reconciler_->pending_ops(), 1u);
  EXPECT_LE(reconciler_->next_wakeup(), now_ + 1'000'000'000ull) << "the retry wakes the loop (backoff <= 1 s)";
  now_ += 1'000'000'000ull;
  EXPECT_TRUE(reconciler_->retry_due(now_));
  reconciler_->reconcile();
  ASSERT_EQ(map_.entries.count(7), 1u);
  EXPECT_EQ(reconciler_->pending_ops(), 0u);
  EXPECT_EQ(state(), IntentState::Sent);
  confirm();
  EXPECT_EQ(state(), IntentState::Applied);
}

TEST_F(ReconcilerTest, AnOlderValueIsDriftThatTheReadBackRepairs) {
  upsert(2'000'000);
  task(7);
  reconciler_->reconcile();
  confirm();
  ASSERT_EQ(state(), IntentState::Applied);
  map_.entries.at(7).slice_ns = 3'000'000;  // the key is there, with another value (INV-5)
  EXPECT_TRUE(reconciler_->readback(true)) << "present is not equal";
  EXPECT_EQ(metrics_.drift, 1.0);
  EXPECT_NE(state(), IntentState::Applied) << "the drifted entry loses its confirmation at once";
  reconciler_->reconcile();  // the loop's repair in the same turn
  EXPECT_EQ(map_.entries.at(7).slice_ns, 2'000'000u);
  EXPECT_FALSE(confirm());
  EXPECT_EQ(state(), IntentState::Applied);
}

TEST_F(ReconcilerTest, TheFullPassInSlicesFindsAKeyNobodyWrote) {
  upsert(2'000'000);
  for (uint32_t tid = 1; tid <= 20; ++tid) task(tid);
  reconciler_->reconcile();
  ASSERT_EQ(map_.entries.size(), 20u);
  map_.entries[99] = map_.entries.at(1);  // another writer's key
  now_ = reconciler_->readback_pass().next_ns;
  bool drift = false;
  for (int turn = 0; turn < 100 && !drift; ++turn) {
    drift = reconciler_->read_back_if_due(now_, false);
    now_ += 1'000'000;
  }
  EXPECT_TRUE(drift) << "the walk of the whole map meets key 99";
  reconciler_->reconcile();
  EXPECT_EQ(map_.entries.count(99), 0u) << "repaired: the key the node does not want is deleted";
  EXPECT_EQ(map_.entries.size(), 20u);
}

}  // namespace
}  // namespace c2c::daemon
