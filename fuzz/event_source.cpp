#include "fuzz/event_source.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "boundary_hits.hpp"
#include "core/core.hpp"

namespace c2c::fuzz {
namespace {

constexpr Nanos kMs = 1'000'000;
constexpr Nanos kSec = 1'000 * kMs;

// Reads parameters from the front of the input; an exhausted input reads zeros, so every prefix
// of an input decodes to a prefix of its events (which keeps libFuzzer's mutations local).
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool bit() { return (u8() & 1u) != 0; }
  template <typename T, size_t N>
  const T& pick(const std::array<T, N>& options) {
    return options[u8() % N];
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

CpuSet cpus(const char* text) { return CpuSet::parse(text).value_or(CpuSet{}); }

// Cpusets inside and outside each other's envelopes (node 0-7 or 0-15).
const std::array<const char*, 8> kCpuLists = {"0-7", "0-3", "4-7", "2-5", "0-15", "8-15", "2", "0-1,6-7"};
// The top bytes (issue 45) name sets in the upper words of the 256-CPU mask, the last word's
// CPU 255 among them (on a node laid out over all four words; elsewhere they narrow to nothing).
const std::array<const char*, 4> kWideCpuLists = {"248-255", "120-135", "60-67,250-255", "0-255"};
std::optional<CpuSet> maybe_cpus(Bytes& b) {
  uint8_t v = b.u8();
  if (v % 3 == 0) return std::nullopt;  // unknown (the envelope falls back)
  if (v >= 240) return cpus(kWideCpuLists[v % kWideCpuLists.size()]);
  return cpus(kCpuLists[(v / 3) % kCpuLists.size()]);
}

// A policy or claim generation: small (0: the next one / invalid), or for the top bytes one at the
// bound (issue 45): 2^53 - 2, 2^53 - 1, 2^53 (the last; "the next one" after it is refused),
// 2^53 + 1 (refused).
int64_t generation(Bytes& b, unsigned small) {
  const uint8_t v = b.u8();
  if (v >= 250 && v <= 253) return kMaxGeneration - 252 + v;
  return v % small;
}

const std::array<uint32_t, 4> kTids = {100, 101, 102, 103};
const std::array<std::string, 3> kClaimUids = {"claim-a", "claim-b", "claim-c"};
const std::array<std::string, 2> kPodUids = {"pod-a", "pod-b"};
const std::array<std::string, 2> kDraNames = {"llm-decode", "llm-b"};
const std::array<std::string, 2> kNodePolicyNames = {"vllm", "slice-only"};
// "EngineCore\xff": a name that is not UTF-8 (names are bytes, core/names.hpp).
const std::array<std::string, 8> kComms = {"EngineCore",  "EngineCore_DP0", "python3", "NCCL-proxy",
                                           "decode_loop", "EngineCore\xff", "EngineCore_DP12", "pt_main_thread"};
const std::array<std::string, 7> kTaskCgroups = {"",
                                                 "/kubepods/pod-a/ctr",
                                                 "/kubepods/pod-a",
                                                 "/kubepods/pod-b/inner/ctr",
                                                 "/kubepods/pod-a0/ctr",  // not under pod-a
                                                 "/system.slice",
                                                 "/kubepods/pod-a/inner/ctr"};

NodeInfo node(Bytes& b) {
  NodeInfo n;
  n.name = b.bit() ? "node-b" : "node-a";
  if (b.bit()) n.labels["zone"] = "a";
  const uint8_t layout = b.u8();
  if ((layout & 0x0eu) == 0x0eu) {  // every word of the mask, up to CPU 255 (issue 45)
    n.cpus = cpus("0-255");
    n.numa_cpus = {{0, cpus("0-127")}, {1, cpus("128-255")}};
    n.pcie_root_cpus = {{"pci0", cpus("0-63")}, {"pci1", cpus("192-255")}};
  } else if ((layout & 1u) != 0) {
    n.cpus = cpus("0-15");
    n.numa_cpus = {{0, cpus("0-7")}, {1, cpus("8-15")}};
    n.pcie_root_cpus = {{"pci0", cpus("0-7")}, {"pci1", cpus("8-15")}};
  } else {
    n.cpus = cpus("0-7");
    n.numa_cpus = {{0, cpus("0-3")}, {1, cpus("4-7")}};
    n.pcie_root_cpus = {{"pci0", cpus("0-3")}, {"pci1", cpus("4-7")}};
  }
  // 0 is out of bounds: the core must refuse it and change nothing.
  n.default_max_boost = b.pick(std::array<Nanos, 5>{30 * kSec, kMs, 3600 * kSec, 2 * kSec, 0});
  return n;
}

Claim claim(Bytes& b) {
  Claim c;
  c.uid = b.pick(kClaimUids);
  c.generation = generation(b, 5);  // 0 is invalid
  c.node = b.pick(std::array<const char*, 3>{"node-a", "", "node-b"});
  const unsigned devices = b.u8() % 3;
  for (unsigned i = 0; i < devices; ++i) {
    AllocatedDevice d;
    d.request = b.pick(std::array<const char*, 2>{"gpu", "cpu"});
    d.driver = b.pick(std::array<const char*, 3>{"gpu.nvidia.com", "dra.cpu", "rdma.example.com"});
    d.pool = "pool-a";
    d.device = b.pick(std::array<const char*, 2>{"dev-0", "dev-1"});
    const uint8_t numa = b.u8() % 3;
    if (numa > 0) d.numa_nodes = {numa - 1};
    d.pcie_root = b.pick(std::array<const char*, 3>{"", "pci0", "pci1"});
    d.cpus = maybe_cpus(b);
    c.devices.push_back(std::move(d));
  }
  const uint8_t reserved = b.u8();
  for (size_t i = 0; i < kPodUids.size(); ++i)
    if (reserved & (1u << i)) c.reserved_for.push_back(kPodUids[i]);
  return c;
}

Pod pod(Bytes& b) {
  Pod p;
  const size_t i = b.u8() % kPodUids.size();
  p.uid = kPodUids[i];
  p.namespace_ = "default";
  p.name = "pod-" + std::to_string(i);
  switch (b.u8() % 3) {
    case 0: p.labels = {{"role", "decode"}}; break;
    case 1: p.labels = {{"role", "prefill"}}; break;
    default: break;
  }
  switch (b.u8() % 4) {
    case 0: p.claims = {{"gpu", "claim-a"}, {"cpu", "claim-b"}}; break;
    case 1: p.claims = {{"gpu", "claim-a"}}; break;
    case 2: p.claims = {{"gpu", "claim-c"}, {"cpu", "claim-b"}}; break;
    default: break;
  }
  // A pod's cgroup carries its UID (as kubelet names them), so two pods never share one; the nesting
  // cases (a pod inside another's cgroup, the "/kubepods/pod-a0" prefix trap) stay reachable. One
  // time in eight the cgroup is named after the *other* pod: binding a cgroup another pod holds
  // must be refused as Invalid with nothing changed (spec §5 pod_bound), which core and naive
  // model both check. Bit 0 of the same byte picks the nesting, so older corpus inputs keep
  // their meaning apart from that case.
  const uint8_t shape = b.u8();
  const std::string& owner = (shape & 0x0eu) == 0x0eu ? kPodUids[(i + 1) % kPodUids.size()] : p.uid;
  p.cgroup = "/kubepods/" + owner + ((shape & 1u) != 0 ? "/inner" : "");
  p.cpuset = maybe_cpus(b);
  return p;
}

// Half of the time the key of a live task (so renames and exits hit), else any (tid, start).
TaskKey task_key(Bytes& b, const Core& shadow) {
  const auto live = shadow.tasks();
  if (b.bit() && !live.empty()) return live[b.u8() % live.size()].key;
  return TaskKey{b.pick(kTids), 1u + b.u8() % 4u};
}

Task task(Bytes& b) {
  Task t;
  t.key.tid = b.pick(kTids);
  t.key.start = 1u + b.u8() % 4u;  // a new start for a known tid is TID reuse; an older one is stale
  switch (b.u8() % 3) {
    case 0: t.tgid = t.key.tid; break;
    case 1: t.tgid = 100; break;
    default: t.tgid = 102; break;
  }
  t.comm = b.pick(kComms);
  t.cgroup = b.pick(kTaskCgroups);
  t.role = b.bit() ? "decode" : "";
  t.cpuset = maybe_cpus(b);
  return t;
}

DraExecutionPolicy dra_policy(Bytes& b) {
  DraExecutionPolicy p;
  p.name = b.pick(kDraNames);
  p.generation = generation(b, 5);  // 0: the next one
  if (b.bit()) p.match_labels = {{"role", "decode"}};
  switch (b.u8() % 4) {
    case 0: p.resource_claims = {"gpu", "cpu"}; break;
    case 1: p.resource_claims = {"gpu"}; break;
    case 2: p.resource_claims = {"cpu"}; break;
    default: p.resource_claims = {"gpu", "missing"}; break;
  }
  const uint8_t topo = b.u8();
  p.respect_allocated_cpuset = (topo & 1u) != 0;
  p.prefer_same_numa = (topo & 2u) != 0;
  p.prefer_same_pcie_root = (topo & 4u) != 0;
  const uint8_t roles = b.u8();
  if (roles & 1u) p.task_roles.push_back({"decode", "decode", "", ExecClass::LatencyCritical});
  if (roles & 2u) p.task_roles.push_back({"nccl-progress", "", "^NCCL", ExecClass::CommunicationProgress});
  if (roles & 4u) p.task_roles.push_back({"engine", "", "EngineCore", ExecClass::Throughput});
  if (roles & 8u) p.task_roles.push_back({"shell", "", "^bash$", ExecClass::Background});
  if ((roles & 15u) == 0) p.task_roles.push_back({"broken", "", "(", ExecClass::Normal});  // invalid regex
  const uint8_t safety = b.u8();
  p.require_preview = (safety & 1u) != 0;
  p.fail_closed_on_stale_claim = (safety & 2u) == 0;
  p.max_boost = b.pick(std::array<Nanos, 5>{30 * kSec, kMs, 3600 * kSec, 2 * kSec, 500});  // 500 ns: invalid
  return p;
}

// One of each operator over the labels node_labels sets, and the invalid In without values.
const std::array<LabelRequirement, 5> kLabelRequirements = {
    LabelRequirement{"zone", LabelOperator::In, {"a", "b"}}, LabelRequirement{"zone", LabelOperator::NotIn, {"a"}},
    LabelRequirement{"gpu", LabelOperator::Exists, {}}, LabelRequirement{"gpu", LabelOperator::DoesNotExist, {}},
    LabelRequirement{"gpu", LabelOperator::In, {}}};

// The node's labels (node_labels): zone and gpu set, unset and changed; a bad value is invalid.
NodeLabels node_labels(Bytes& b) {
  NodeLabels e;
  switch (b.u8() % 4) {
    case 0: e.labels = {{"zone", "a"}}; break;
    case 1: e.labels = {{"zone", "b"}, {"gpu", "a100"}}; break;
    case 2: e.labels = {{"gpu", "h100"}}; break;
    default: e.labels = {{"zone", "a b"}}; break;  // invalid label value
  }
  return e;
}

NodeSchedulingPolicy node_policy(Bytes& b) {
  NodeSchedulingPolicy p;
  p.name = b.pick(kNodePolicyNames);
  p.generation = generation(b, 5);
  switch (b.u8() % 4) {
    case 0: p.node_names = {"node-a"}; break;
    case 1: p.node_names = {"node-b"}; break;
    case 2: p.node_selectors = {{"zone", "a"}}; break;
    default:  // a label selector (issue #14), or no node selector: invalid unless a DRA selector follows
      if (b.bit()) p.node_selector_expressions = {b.pick(kLabelRequirements)};
      break;
  }
  switch (b.u8() % 3) {
    case 0: p.dra_selectors = {{"gpu.nvidia.com", "", ""}}; break;
    case 1: p.dra_selectors = {{"dra.cpu", "pool-a", "dev-1"}}; break;
    default: break;
  }
  p.command_regex = b.pick(std::array<const char*, 6>{"^EngineCore(_DP[0-9]+)?$", "python", "^NCCL", "decode", ".*", "("});
  p.priority = b.pick(std::array<int32_t, 4>{0, 1, 5, -1});
  p.execution_time = b.pick(std::array<Nanos, 4>{0, 2 * kMs, 20'000, 5});
  return p;
}

int64_t current_generation(const Core& shadow, PolicyKind kind, const std::string& name) {
  if (kind == PolicyKind::Dra) {
    if (auto p = shadow.dra_policy(name)) return p->generation;
  } else if (auto p = shadow.node_policy(name)) {
    return p->generation;
  }
  return 1;
}

BpfObserved observed(Bytes& b, const Core& shadow) {
  BpfObserved o;
  const uint8_t mode = b.u8() % 6;
  if (mode == 0) return o;  // the map is empty (e.g. recreated)
  if (mode == 1) {          // what the core already believes
    for (const auto& [tid, v] : shadow.actual()) o.entries.push_back({tid, v});
    return o;
  }
  for (const auto& [tid, d] : shadow.desired()) o.entries.push_back({tid, d.value});
  if (mode == 2) return o;  // exactly the desired table
  if (mode == 5 || o.entries.empty()) {
    // A foreign entry nobody derived (bpftool, an older daemon): INV-5 wants it explained or pruned.
    RuntimeValue v;
    v.start = 1u + b.u8() % 4u;
    // Never from the future: an entry above the node generation can only come from a lost
    // generation file, which the core rightly reports (INV-4) and which is not a core bug.
    v.generation = b.u8() % (shadow.generation() + 1);
    v.exec_class = ExecClass::LatencyCritical;
    v.slice_ns = 2 * kMs;
    v.flags = kFlagBoost;
    v.boost_until = 30 * kSec;
    v.max_boost = 30 * kSec;
    v.tgid = 100;
    const uint32_t tid = b.bit() ? 999u : b.pick(kTids);
    bool present = false;
    for (const auto& e : o.entries) present = present || e.tid == tid;
    if (!present) o.entries.push_back({tid, v});
    return o;
  }
  // A desired entry that the kernel holds differently (every kernel state here is one a crashed
// mirror, bpftool or an older daemon could leave behind; the core must plan it away).
  ActualEntry& e = o.entries[b.u8() % o.entries.size()];
  switch (mode == 3 ? b.u8() % 4 : 4) {
    case 0: e.value.start += 1; break;                                  // written for another task
    case 1: e.value.generation = e.value.generation > 0 ? e.value.generation - 1 : 0; break;  // a stale write
    case 2: e.value.allowed = CpuSet::range(0, 255); e.value.flags |= kFlagAllowedCpus; break;  // widened
    case 3: e.value.boost_until = ~Nanos{0}; e.value.flags |= kFlagBoost; break;  // unbounded boost
    default: e.value.slice_ns += 1000; break;
  }
  return o;
}

Event next_event(Bytes& b, const Core& shadow) {
  switch (b.u8() % 24) {
    case 0: return NodeInfoEvent{node(b)};
    case 1: return ClaimAllocated{claim(b)};
    case 2: return node_labels(b);
    case 3: return ClaimUpdated{claim(b)};
    case 4: {
      ClaimDeallocated e;
      e.uid = b.pick(kClaimUids);
      e.generation = b.u8() % 4;
      return e;
    }
    case 5: return PodBound{pod(b)};
    case 6: return PodRemoved{b.pick(kPodUids)};
    case 7:
    case 8:
    case 9: return TaskSeen{task(b)};
    case 10: {
      TaskRenamed e;
      e.key = task_key(b, shadow);
      e.comm = b.pick(kComms);
      return e;
    }
    case 11: return TaskExited{task_key(b, shadow)};
    case 12: return DraPolicyUpsert{dra_policy(b)};
    case 13:
    case 14: return NodePolicyUpsert{node_policy(b)};
    case 15: {
      PolicyDelete e;
      e.kind = b.bit() ? PolicyKind::Dra : PolicyKind::Node;
      e.name = e.kind == PolicyKind::Dra ? b.pick(kDraNames) : b.pick(kNodePolicyNames);
      e.generation = b.u8() % 4;
      return e;
    }
    case 16: {
      PreviewAck e;
      e.kind = b.u8() % 4 == 0 ? PolicyKind::Node : PolicyKind::Dra;
      e.name = e.kind == PolicyKind::Dra ? b.pick(kDraNames) : b.pick(kNodePolicyNames);
      e.generation = b.bit() ? current_generation(shadow, e.kind, e.name) : b.u8() % 4;
      return e;
    }
    case 17:
    case 18: {
      const uint8_t step = b.u8() % 7;
      if (step == 6 && shadow.now() > 0) return TimeAdvance{shadow.now() - 1};  // time goes back: invalid
      const std::array<Nanos, 6> deltas = {kMs, kSec, 15 * kSec, 31 * kSec, 7200 * kSec, 0};
      TimeAdvance t{shadow.now() + deltas[step % deltas.size()]};
      // Bounded renewal steps (the daemon's): none at 1 s, one lease at 31 s (past a 30 s lease: run out).
      if (step == 1 || step == 3) t.max_renewals = static_cast<uint32_t>(step / 2);
      return t;
    }
    case 19: {
      const uint64_t g = shadow.generation();
      // The generation file is written ahead of use, so it never lags G (a lagging one is an
      // environment fault the core reports as INV-4: examples/violating/). The top bytes put it at
      // the bound (issue 45): 2^53 - 2 .. 2^53 (the last refused: no generation above it).
      const uint8_t v = b.u8();
      if (v >= 250 && v <= 252) return DaemonRestart{std::max<uint64_t>(g, kMaxGeneration - 252 + v)};
      const std::array<uint64_t, 3> persisted = {0, g, g + 3};
      return DaemonRestart{persisted[v % persisted.size()]};
    }
    case 20: return SyncComplete{};
    case 21: return observed(b, shadow);
    case 22: {  // a registered role (issue #14): often the live task's, sometimes a stale start
      static const std::array<std::string, 4> kRoles = {"decode", "prefill", "", "two words"};
      TaskRoleSet e;
      e.key = task_key(b, shadow);
      e.role = b.pick(kRoles);
      return e;
    }
    default: return BpfSynced{};
  }
}

}  // namespace

std::vector<Event> decode_events(const uint8_t* data, size_t size, size_t max_events, testing::BoundaryHits* hits) {
  Bytes b(data, size);
  Core shadow;
  std::vector<Event> events;
  while (!b.done() && events.size() < max_events) {
    events.push_back(next_event(b, shadow));
    if (hits) hits->before(events.back(), shadow);
    const ApplyResult r = shadow.apply(events.back());
    if (hits) hits->after(events.back(), r, shadow);
  }
  return events;
}

}  // namespace c2c::fuzz
