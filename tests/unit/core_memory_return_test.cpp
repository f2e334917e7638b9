// Issue #13: the core's memory is returned when tasks exit. The heap in use is read from glibc's
// mallinfo2() (every in-use chunk, headers included, and every mmapped block), as the memory
// benchmark does (bench/core_memory_bench.cpp); nothing else allocates between the readings.
#include <malloc.h>

#include "core_fixture.hpp"

namespace c2c::testing {
namespace {

double heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd);
}

void must(Core& core, const Event& e) {
  const ApplyResult r = core.apply(e);
  ASSERT_EQ(r.status, ApplyResult::Status::Applied) << event_kind(e) << ": " << r.field << " " << r.message;
}

// Thread groups of 16: half in the decode pod (a DRA role for one thread), half on the host, where
// the leader's comm gives its threads a TGID entry and one thread matches by its own comm (a
// conflict): every table and index of the core holds something while the tasks live.
std::vector<Task> population(uint32_t groups, uint32_t first_tid) {
  std::vector<Task> out;
  for (uint32_t g = 0; g < groups; ++g) {
    const uint32_t leader = first_tid + g * 16;
    const bool in_pod = g % 2 == 0;
    const std::string cgroup = in_pod ? kPodCgroup + "/cri-containerd-" + std::to_string(g) + ".scope"
                                      : "/system.slice/app-" + std::to_string(g) + ".service";
    out.push_back(task(leader, leader, leader, in_pod ? "python3" : "EngineCore", cgroup));
    for (uint32_t i = 1; i < 16; ++i) {
      const std::string comm = i == 1 ? (in_pod ? "decode" : "EngineCore_DP1") : "worker-" + std::to_string(i);
      out.push_back(task(leader + i, leader, leader + i, comm, cgroup, in_pod && i == 1 ? "decode" : ""));
    }
  }
  return out;
}

TEST(CoreMemoryReturn, TasksThatExitGiveTheirMemoryBack) {
  Core core;
  must(core, NodeInfoEvent{node_info()});
  must(core, ClaimAllocated{gpu_claim()});
  must(core, ClaimAllocated{cpu_claim(CpuSet::range(0, 3))});
  must(core, PodBound{decode_pod()});
  must(core, NodePolicyUpsert{engine_policy()});
  must(core, NodePolicyUpsert{comm_policy("engine-leader", 1, "^EngineCore$", 0)});
  must(core, DraPolicyUpsert{decode_policy()});
  // One group first: the regexes' lazily built matchers are the policies' memory, not the tasks'.
  for (const Task& t : population(1, 100)) must(core, TaskSeen{t});
  for (const Task& t : population(1, 100)) must(core, TaskExited{t.key});

  const double before = heap_in_use();
  const std::vector<Task> tasks = population(1250, 1000);  // 20,000 tasks
  const double model = heap_in_use() - before;              // the test's own copy, freed last
  for (const Task& t : tasks) must(core, TaskSeen{t});
  must(core, BpfSynced{});  // the entries are in the map: the actual table and removal reasons fill
  ASSERT_GT(core.desired_size(), 2000u);
  ASSERT_EQ(core.actual().size(), core.desired_size());
  ASSERT_FALSE(core.conflicts().empty());
  const double live = heap_in_use() - before - model;
  for (const Task& t : tasks) must(core, TaskExited{t.key});
  must(core, BpfSynced{});  // and gone from it
  ASSERT_EQ(core.desired_size(), 0u);
  ASSERT_EQ(core.actual().size(), 0u);
  const double retained = heap_in_use() - before - model;
  const double per_task = retained / static_cast<double>(tasks.size());
  // Before the fix the hash maps kept their arrays: ~20-30 bytes per task that had lived (and the
  // actual table and the removal reasons theirs, once the map had held the entries).
  EXPECT_LT(per_task, 2.0) << "the core still holds " << retained << " bytes of the " << live
                           << " its 20,000 tasks used";
}

}  // namespace
}  // namespace c2c::testing
