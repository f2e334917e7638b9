// A synthetic GPU node for the core benchmarks: pods with DRA claims, a DRA execution policy, a
// node policy, and N live tasks in thread groups, plus a generator of task events that keeps the
// live-task count at N. Everything is built through Core::apply(), exactly as the daemon would.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/core.hpp"

namespace c2c::bench {

inline constexpr const char* kNodeName = "bench-node";
inline constexpr const char* kNodePolicyRegex = "^EngineCore(_DP[0-9]+)?$";
inline constexpr uint32_t kThreadsPerGroup = 16;  // one leader and 15 threads
inline constexpr unsigned kPods = 8;

// What the daemon's ring-buffer record of a task event carries besides the event: the loop hands
// it to Core::prefetch_task ahead of the event (src/daemon/loop/engine.cpp).
struct RecordHint {
  uint32_t tid = 0;
  uint32_t tgid = 0;
  uint64_t cgroup_id = 0;
};

// What the task population looks like.
enum class Population : uint8_t {
  // The event benchmark's node: half the thread groups in pods (DRA roles match some threads),
  // half on the host; every 4th process is an EngineCore (node policy, TGID strategy for its
  // threads) and a few host threads match the node policy by their own comm.
  Mixed,
  // Every task on the host and matched by the node policy (leaders named EngineCore_DPk, half of
  // the threads too, the other half inheriting through their leader).
  AllNodeMatched,
  // Every task inside a pod and matched by a DRA task role (the catch-all role "worker").
  AllDraMatched,
};

struct Slot {
  uint32_t tid = 0;
  uint64_t start = 0;
  std::string comm;
  std::string role;
};

struct Group {
  std::string cgroup;
  uint64_t cgroup_id = 0;  // as the kernel's task records carry it (Task::cgroup_id)
  Slot leader;
  std::vector<Slot> threads;  // kThreadsPerGroup - 1
};

struct WorldOptions {
  size_t tasks = 1000;
  Population population = Population::Mixed;
  bool node_policy = true;
  bool dra_policy = true;
  bool policies_first = true;  // false: tasks first, policies upserted afterwards
  bool build_core = true;      // false: only the model of the tasks (the memory benchmark builds its own)
};

// The synthetic node and a model of its live tasks (the generator's view, independent of the core).
class World {
 public:
  explicit World(const WorldOptions& o);
  World(const World&) = delete;  // the generator holds pointers into `groups`
  World& operator=(const World&) = delete;

  Core core;
  std::vector<Group> groups;

  // The policies as upserted (tests of policy changes derive new generations from them).
  NodeSchedulingPolicy node_policy;
  DraExecutionPolicy dra_policy;

  size_t live_tasks() const { return groups.size() * kThreadsPerGroup; }

  // Appends `count` task events that keep the live-task count constant (and the desired table's
  // size about constant), in a fixed mix of four: a thread exits, a new thread appears in its
  // place, another thread is renamed (whether the node policy matches it flips), and a third
  // thread's TID is reused by a newer task whose exit was missed (INV-2).
  // `hints`, when given, gets each event's RecordHint.
  void next_events(size_t count, std::vector<Event>& out, std::vector<RecordHint>* hints = nullptr);
  // What the daemon's loop does after a turn's task events (Engine::reconcile): takes the ops they
  // made (take_plan_delta), as the mirror writes them, and acknowledges the write (BpfSynced), so
  // the core's reconcile marks stay as small as a turn and its actual table follows the desired
  // one. Returns the number of ops. Without it the marks of every event ever applied pile up in
  // sets no daemon keeps, and the actual table stays empty, which no daemon's is.
  size_t end_turn();

  // Builds the node (node info, claims, pods, policies); used by the constructor and by the
  // memory benchmark, which needs the node without tasks.
  static void setup_node(Core& core, const WorldOptions& o);
  static std::vector<Event> node_events(const WorldOptions& o);  // what setup_node applies
  static NodeSchedulingPolicy make_node_policy();
  static DraExecutionPolicy make_dra_policy(Population p);
  // Applies every task of the world (leaders first); returns the number of non-Applied results.
  size_t apply_tasks(Core& target) const;
  std::vector<Event> task_events() const;  // one task_seen per live task, leaders first

 private:
  WorldOptions opts_;
  uint32_t next_tid_ = 0;
  uint64_t next_start_ = 1'000'000;
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
  uint64_t phase_ = 0;
  Group* pending_group_ = nullptr;  // the exited thread's process and slot, refilled next
  Slot* pending_slot_ = nullptr;

  uint64_t rand();
  Slot& random_thread(Group** group);
  Task task_of(const Group& g, const Slot& s) const;
  void populate();
};

// Google Benchmark calls a benchmark function several times (to size its iteration count); the
// world last asked for is kept, so a 100k-task node is built once, not once per call, and
// benchmarks that ask for the same options share it (each establishes what it needs, e.g. the
// plan benchmark its drift). Asking for other options frees the previous world.
World& cached_world(const WorldOptions& o);

// CPU time of the calling thread, in seconds. The benchmarks time apply() with it rather than
// with a wall clock: the machine is shared (load often above the core count), and the goals are
// per core; time spent descheduled is not the core's cost.
double thread_cpu_seconds();

// Throws std::runtime_error naming the event if apply() did not return Applied: a benchmark that
// measures rejected or ignored inputs would measure the wrong thing.
void must_apply(Core& core, const Event& e);

}  // namespace c2c::bench
