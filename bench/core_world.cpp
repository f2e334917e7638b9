#include "core_world.hpp"

#include <time.h>

#include <array>
#include <memory>
#include <stdexcept>

namespace c2c::bench {
namespace {

// Thread names seen on an LLM serving node (vLLM engine, PyTorch, CUDA, NCCL, ZeroMQ helpers).
constexpr std::array<const char*, 8> kPalette = {"pt_autograd_0", "cuda-EvtHandlr", "ZMQbg/IO/0", "tokenizer",
                                                 "uvicorn",       "python3",        "cuda00001400006", "gc_thread"};

std::string pod_uid(unsigned p) { return "bench-pod-0000-" + std::to_string(p); }
std::string pod_cgroup(unsigned p) {
  return "/kubepods.slice/kubepods-podbench_pod_0000_" + std::to_string(p) + ".slice";
}
std::string gpu_claim(unsigned p) { return "claim-gpu-" + std::to_string(p); }
std::string cpu_claim(unsigned p) { return "claim-cpu-" + std::to_string(p); }

// Cheap and deterministic, so that every run replays the same stream.
uint64_t xorshift(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

// Renames flip one thread per process between a matching and a non-matching name; half of those
// threads match at the start, so the desired table keeps its size while the stream runs.
constexpr size_t kRenamedSlot = 4;

bool node_match(const std::string& comm) { return comm.rfind("EngineCore", 0) == 0; }

}  // namespace

World& cached_world(const WorldOptions& o) {
  const std::string key = std::to_string(o.tasks) + "/" + std::to_string(static_cast<int>(o.population)) + "/" +
                          std::to_string(o.node_policy) + std::to_string(o.dra_policy) +
                          std::to_string(o.policies_first) + std::to_string(o.build_core);
  static std::string cached_key;
  static std::unique_ptr<World> cached;
  if (!cached || cached_key != key) {
    cached.reset();  // free the old node before building the next
    cached = std::make_unique<World>(o);
    cached_key = key;
  }
  return *cached;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void must_apply(Core& core, const Event& e) {
  ApplyResult r = core.apply(e);
  if (r.status != ApplyResult::Status::Applied)
    throw std::runtime_error(std::string("bench setup: ") + event_kind(e) + " was not applied: " + r.field + " " +
                             r.message);
}

NodeSchedulingPolicy World::make_node_policy() {
  NodeSchedulingPolicy p;
  p.name = "engine-core";
  p.node_names = {kNodeName};
  p.command_regex = kNodePolicyRegex;
  p.priority = 1;
  return p;
}

DraExecutionPolicy World::make_dra_policy(Population pop) {
  DraExecutionPolicy p;
  p.name = "llm-decode";
  p.match_labels = {{"llm-d.ai/role", "decode"}};
  p.resource_claims = {"gpu", "cpu"};
  p.prefer_same_numa = true;
  p.prefer_same_pcie_root = true;
  p.task_roles.push_back({"decode", "decode", "", ExecClass::LatencyCritical});
  if (pop == Population::AllDraMatched) {
    // One catch-all role, so that a change of its class rewrites every entry.
    p.task_roles.push_back({"worker", "", ".", ExecClass::Throughput});
  } else {
    p.task_roles.push_back({"nccl-progress", "", "^NCCL", ExecClass::CommunicationProgress});
  }
  return p;
}

void World::setup_node(Core& core, const WorldOptions& o) {
  for (const Event& e : node_events(o)) must_apply(core, e);
}

std::vector<Event> World::node_events(const WorldOptions& o) {
  std::vector<Event> out;
  NodeInfo n;
  n.name = kNodeName;
  n.labels = {{"nvidia.com/gpu.present", "true"}};
  n.cpus = CpuSet::range(0, 63);
  n.numa_cpus = {{0, CpuSet::range(0, 31)}, {1, CpuSet::range(32, 63)}};
  n.pcie_root_cpus = {{"pci0000:00", CpuSet::range(0, 31)}, {"pci0000:80", CpuSet::range(32, 63)}};
  out.emplace_back(NodeInfoEvent{n});

  for (unsigned p = 0; p < kPods; ++p) {
    const int numa = static_cast<int>(p / (kPods / 2));
    Claim gpu;
    gpu.uid = gpu_claim(p);
    gpu.generation = 1;
    gpu.node = kNodeName;
    AllocatedDevice d;
    d.request = "gpu";
    d.driver = "gpu.nvidia.com";
    d.pool = kNodeName;
    d.device = "gpu-" + std::to_string(p);
    d.numa_nodes = {numa};
    d.pcie_root = numa == 0 ? "pci0000:00" : "pci0000:80";
    gpu.devices = {d};
    gpu.reserved_for = {pod_uid(p)};
    out.emplace_back(ClaimAllocated{gpu});

    Claim cpu;
    cpu.uid = cpu_claim(p);
    cpu.generation = 1;
    cpu.node = kNodeName;
    AllocatedDevice c;
    c.request = "cpu";
    c.driver = "dra.cpu";
    c.pool = kNodeName;
    c.device = "cpudev" + std::to_string(p);
    c.numa_nodes = {numa};
    c.cpus = CpuSet::range(8 * p, 8 * p + 5);  // a subset of the pod's cpuset
    cpu.devices = {c};
    cpu.reserved_for = {pod_uid(p)};
    out.emplace_back(ClaimAllocated{cpu});

    Pod pod;
    pod.uid = pod_uid(p);
    pod.namespace_ = "llm";
    pod.name = "decode-" + std::to_string(p);
    pod.labels = {{"llm-d.ai/role", "decode"}};
    pod.claims = {{"gpu", gpu.uid}, {"cpu", cpu.uid}};
    pod.cgroup = pod_cgroup(p);
    pod.cpuset = CpuSet::range(8 * p, 8 * p + 7);
    out.emplace_back(PodBound{pod});
  }
  if (o.policies_first) {
    if (o.node_policy) out.emplace_back(NodePolicyUpsert{make_node_policy()});
    if (o.dra_policy) out.emplace_back(DraPolicyUpsert{make_dra_policy(o.population)});
  }
  return out;
}

World::World(const WorldOptions& o) : opts_(o) {
  node_policy = make_node_policy();
  dra_policy = make_dra_policy(o.population);
  populate();
  if (!o.build_core) return;
  setup_node(core, o);
  if (size_t bad = apply_tasks(core)) throw std::runtime_error("bench setup: " + std::to_string(bad) + " tasks not applied");
  if (!o.policies_first) {
    if (o.node_policy) {
      ApplyResult r = core.apply(NodePolicyUpsert{node_policy});
      if (!r.ok()) throw std::runtime_error("bench setup: node policy: " + r.message);
    }
    if (o.dra_policy) {
      ApplyResult r = core.apply(DraPolicyUpsert{dra_policy});
      if (!r.ok()) throw std::runtime_error("bench setup: DRA policy: " + r.message);
    }
  }
  // Read back the generations the core gave the policies, so that later changes build on them.
  if (o.node_policy) node_policy = *core.node_policy(node_policy.name);
  if (o.dra_policy) dra_policy = *core.dra_policy(dra_policy.name);
}

void World::populate() {
  const size_t n_groups = std::max<size_t>(1, (opts_.tasks + kThreadsPerGroup / 2) / kThreadsPerGroup);
  groups.resize(n_groups);
  for (size_t g = 0; g < n_groups; ++g) {
    Group& grp = groups[g];
    bool in_pod = false;
    switch (opts_.population) {
      case Population::Mixed: in_pod = g % 2 == 0; break;
      case Population::AllNodeMatched: in_pod = false; break;
      case Population::AllDraMatched: in_pod = true; break;
    }
    const unsigned pod = static_cast<unsigned>((g / 2) % kPods);
    grp.cgroup = in_pod ? pod_cgroup(pod) + "/cri-containerd-" + std::to_string(g) + ".scope"
                        : "/system.slice/app-" + std::to_string(g) + ".service";
    grp.cgroup_id = 0x100000 + g;  // a kernfs id: unique per cgroup directory
    const std::string engine = "EngineCore_DP" + std::to_string(g % 8);

    grp.leader.tid = ++next_tid_;
    grp.leader.start = next_start_++;
    if (opts_.population == Population::AllNodeMatched || (opts_.population == Population::Mixed && g % 4 == 0))
      grp.leader.comm = engine;
    else
      grp.leader.comm = "python3";

    grp.threads.resize(kThreadsPerGroup - 1);
    for (uint32_t i = 1; i < kThreadsPerGroup; ++i) {
      Slot& s = grp.threads[i - 1];
      s.tid = ++next_tid_;
      s.start = next_start_++;
      s.comm = kPalette[(g + i) % kPalette.size()];
      if (opts_.population == Population::AllNodeMatched) {
        if (i % 2 == 1) s.comm = engine;  // the other half inherits through the leader (TGID)
      } else if (opts_.population == Population::Mixed) {
        if (i == 1 && in_pod) {
          s.comm = "decode_loop";
          s.role = "decode";
        } else if (i == 2 || i == 3) {
          s.comm = "NCCL-proxy";
        } else if (i == 4) {
          s.comm = "EngineCore_DP0";
        } else if (i == kRenamedSlot + 1) {
          s.comm = g % 2 == 0 ? "EngineCore_DP1" : "worker";
        }
      }
    }
  }
}

Task World::task_of(const Group& g, const Slot& s) const {
  Task t;
  t.key = {s.tid, s.start};
  t.tgid = g.leader.tid;
  t.comm = s.comm;
  t.cgroup = g.cgroup;
  t.cgroup_id = g.cgroup_id;
  t.role = s.role;
  return t;
}

size_t World::apply_tasks(Core& target) const {
  size_t bad = 0;
  for (const Event& e : task_events())
    if (target.apply(e).status != ApplyResult::Status::Applied) ++bad;
  return bad;
}

std::vector<Event> World::task_events() const {
  std::vector<Event> out;
  out.reserve(live_tasks());
  for (const Group& g : groups) {
    out.emplace_back(TaskSeen{task_of(g, g.leader)});
    for (const Slot& s : g.threads) out.emplace_back(TaskSeen{task_of(g, s)});
  }
  return out;
}

size_t World::end_turn() {
  const size_t ops = core.take_plan_delta().ops.size();
  core.apply(BpfSynced{});  // Ignored when the turn changed no entry
  return ops;
}

uint64_t World::rand() { return xorshift(rng_); }

Slot& World::random_thread(Group** group) {
  Group& g = groups[rand() % groups.size()];
  *group = &g;
  return g.threads[rand() % g.threads.size()];
}

void World::next_events(size_t count, std::vector<Event>& out, std::vector<RecordHint>* hints) {
  for (size_t i = 0; i < count; ++i, ++phase_) {
    Group* g = nullptr;
    const Slot* slot = nullptr;
    switch (phase_ % 4) {
      case 0: {  // a thread exits ...
        Slot& s = random_thread(&g);
        out.emplace_back(TaskExited{{s.tid, s.start}});
        slot = &s;
        pending_group_ = g;
        pending_slot_ = &s;
        break;
      }
      case 1: {  // ... and a new thread (new TID) takes its place in the same process
        Slot& s = *pending_slot_;
        s.tid = ++next_tid_;
        s.start = next_start_++;
        out.emplace_back(TaskSeen{task_of(*pending_group_, s)});
        g = pending_group_;
        slot = &s;
        break;
      }
      case 2: {  // a thread renames itself; whether the node policy matches it flips
        g = &groups[rand() % groups.size()];
        Slot& s = g->threads[kRenamedSlot];
        s.comm = node_match(s.comm) ? "worker" : "EngineCore_DP1";
        out.emplace_back(TaskRenamed{{s.tid, s.start}, s.comm});
        slot = &s;
        break;
      }
      default: {  // the TID is reused by a newer task before the old one's exit was seen (INV-2)
        Slot& s = random_thread(&g);
        s.start = next_start_++;
        out.emplace_back(TaskSeen{task_of(*g, s)});
        slot = &s;
        break;
      }
    }
    if (hints) hints->push_back({slot->tid, g->leader.tid, g->cgroup_id});
  }
}

}  // namespace c2c::bench
