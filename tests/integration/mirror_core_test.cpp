// The core's plans executed by the mirror on a real pinned map, with the map read back into the
// core: the loop the daemon runs (BpfObserved -> plan -> lease.cover -> apply -> BpfObserved).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/core.hpp"
#include "mirror/applier.hpp"
#include "mirror/policy_value.hpp"
#include "mirror/generation_store.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/pinned_maps.hpp"
#include "mirror_test_env.hpp"

namespace c2c::mirror {
namespace {

namespace fs = std::filesystem;

struct MirrorCore : ::testing::Test {
  std::string root;
  fs::path dir;
  std::unique_ptr<PinnedMaps> maps;
  std::unique_ptr<KernelPolicyMap> map;
  std::unique_ptr<Applier> applier;
  Core core;

  void SetUp() override {
    C2C_REQUIRE_BPFFS();
    root = testing::private_pin_root("core");
    dir = fs::temp_directory_path() / ("c2c-mirror-core-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    PinOptions o;
    o.pin_root = root;
    auto m = PinnedMaps::open(o);
    ASSERT_TRUE(m.ok()) << m.error();
    maps = std::move(m.value());
    map = std::make_unique<KernelPolicyMap>(maps->policy_fd(), maps->policy_max_entries());
    applier = std::make_unique<Applier>(*map);

    NodeInfo node;
    node.name = "node-a";
    node.cpus = CpuSet::range(0, 3);
    ASSERT_TRUE(core.apply(NodeInfoEvent{node}).ok());
    ASSERT_TRUE(core.apply(TimeAdvance{1'000'000'000}).ok());
    NodeSchedulingPolicy p;
    p.name = "workers";
    p.generation = 1;
    p.node_names = {"node-a"};
    p.command_regex = "^worker";
    p.priority = 10;
    ASSERT_TRUE(core.apply(NodePolicyUpsert{p}).ok());
    seen(100, 100, 5000, "main");
    for (uint32_t tid = 101; tid <= 105; ++tid) seen(tid, 100, 5000 + tid, "worker-" + std::to_string(tid));
    seen(200, 200, 7000, "other");
  }
  void TearDown() override {
    applier.reset();
    map.reset();
    maps.reset();
    if (!root.empty()) PinnedMaps::remove_pins(root);
    if (!dir.empty()) fs::remove_all(dir);
  }
  void seen(uint32_t tid, uint32_t tgid, uint64_t start, const std::string& comm) {
    Task t;
    t.key = {tid, start};
    t.tgid = tgid;
    t.comm = comm;
    t.cgroup = "/system.slice/app.service";
    t.cpuset = CpuSet::range(0, 3);
    ApplyResult r = core.apply(TaskSeen{t});
    ASSERT_TRUE(r.ok()) << r.field << ": " << r.message;
  }
  void observe() {
    auto actual = applier->read_actual();
    ASSERT_TRUE(actual.ok()) << actual.error();
    ApplyResult r = core.apply(BpfObserved{actual->entries});
    ASSERT_TRUE(r.ok()) << r.field << ": " << r.message;
  }
  // One daemon reconcile step; returns the plan it executed.
  Plan reconcile(GenerationLease& lease) {
    observe();
    Plan plan = core.plan();
    EXPECT_EQ(lease.cover(core.generation()), "") << "the generation written must be above the floor (INV-4)";
    ApplyReport rep = applier->apply(plan);
    EXPECT_TRUE(rep.ok()) << rep.error;
    for (const auto& s : rep.ops) EXPECT_TRUE(s.success()) << describe(s);
    observe();
    return plan;
  }
  void expect_map_is_desired() {
    auto actual = applier->read_actual();
    ASSERT_TRUE(actual.ok());
    ASSERT_EQ(actual->entries.size(), core.desired().size());
    for (const auto& e : actual->entries) {
      auto it = core.desired().find(e.tid);
      ASSERT_NE(it, core.desired().end()) << "stale tid " << e.tid;
      EXPECT_EQ(e.value, it->second.value) << "tid " << e.tid;
    }
    for (const auto& v : core.check()) ADD_FAILURE() << v.invariant << " tid " << v.tid << ": " << v.message;
  }
  bool in_map(uint32_t tid) {
    c2c_policy_value v;
    return map->lookup(tid, &v) == 0;
  }
};

TEST_F(MirrorCore, CorePlansConvergeOnTheRealMapThroughTaskExitReuseAndRestart) {
  auto lease = GenerationLease::open((dir / "generation").string(), 8);
  ASSERT_TRUE(lease.ok()) << lease.error();

  Plan first = reconcile(lease.value());
  EXPECT_EQ(first.ops.size(), 5u) << "the five worker threads";
  expect_map_is_desired();
  EXPECT_TRUE(core.plan().ops.empty()) << "converged";
  EXPECT_GE(load_generation((dir / "generation").string()).value(), core.generation()) << "INV-4 write-ahead";

  // A task exits; its tid is reused by another task (INV-2); an unexplained entry appears.
  ASSERT_TRUE(core.apply(TaskExited{{101, 5101}}).ok());
  ASSERT_TRUE(core.apply(TaskExited{{102, 5102}}).ok());
  seen(102, 100, 9999, "worker-new");
  c2c_policy_value stray = to_abi(core.desired().at(103).value);
  ASSERT_EQ(map->update(999, stray), 0);
  reconcile(lease.value());
  EXPECT_FALSE(in_map(101));
  EXPECT_FALSE(in_map(999)) << "unexplained entry pruned (INV-5)";
  c2c_policy_value v102;
  ASSERT_EQ(map->lookup(102, &v102), 0);
  EXPECT_EQ(v102.start_ticks, 9999u);
  expect_map_is_desired();

  // Restart: nothing is pruned until the desired state is loaded again (INV-7).
  const uint64_t before = core.generation();
  auto lease2 = GenerationLease::open((dir / "generation").string(), 8);  // the new process
  ASSERT_TRUE(lease2.ok()) << lease2.error();
  ASSERT_TRUE(core.apply(DaemonRestart{lease2->floor()}).ok());
  EXPECT_GT(core.generation(), before) << "INV-4 across the restart";
  ASSERT_EQ(map->update(998, stray), 0);
  Plan loading = reconcile(lease2.value());
  EXPECT_FALSE(loading.deferred_deletes.empty());
  EXPECT_TRUE(in_map(998)) << "deferred deletes are not executed while loading";
  for (uint32_t tid : {102u, 103u, 104u, 105u}) EXPECT_TRUE(in_map(tid)) << tid;

  seen(100, 100, 5000, "main");
  seen(102, 100, 9999, "worker-new");
  for (uint32_t tid = 103; tid <= 105; ++tid) seen(tid, 100, 5000 + tid, "worker-" + std::to_string(tid));
  ASSERT_TRUE(core.apply(SyncComplete{}).ok());
  reconcile(lease2.value());
  EXPECT_FALSE(in_map(998));
  expect_map_is_desired();
  EXPECT_TRUE(core.plan().ops.empty());
}

}  // namespace
}  // namespace c2c::mirror
