#include "boundary_hits.hpp"

#include <type_traits>
#include <variant>

namespace c2c::testing {
namespace {

const char* const kNames[] = {"generation 2^53-1",       "generation 2^53",         "generation 2^53+1",
                              "node generation at 2^53", "restart refused at the bound",
                              "narrowed CPUs in word 0", "narrowed CPUs in word 1", "narrowed CPUs in word 2",
                              "narrowed CPUs in word 3", "narrowed CPU 255",
                              "pod rebound with tasks in its old cgroup"};

std::vector<uint64_t> generations_of(const Event& e) {
  std::vector<uint64_t> out;
  auto add = [&](int64_t g) { out.push_back(static_cast<uint64_t>(g)); };
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, ClaimAllocated> || std::is_same_v<T, ClaimUpdated>) {
          add(ev.claim.generation);
        } else if constexpr (std::is_same_v<T, ClaimDeallocated> || std::is_same_v<T, PolicyDelete> ||
                             std::is_same_v<T, PreviewAck>) {
          add(ev.generation);
        } else if constexpr (std::is_same_v<T, DraPolicyUpsert> || std::is_same_v<T, NodePolicyUpsert>) {
          add(ev.policy.generation);
        } else if constexpr (std::is_same_v<T, DaemonRestart>) {
          out.push_back(ev.persisted_generation);
        } else if constexpr (std::is_same_v<T, BpfObserved>) {
          for (const auto& a : ev.entries) out.push_back(a.value.generation);
        }
      },
      e);
  return out;
}

bool under(const std::string& path, const std::string& dir) {
  return !dir.empty() && path.compare(0, dir.size(), dir) == 0 && (path.size() == dir.size() || path[dir.size()] == '/');
}

}  // namespace

void BoundaryHits::before(const Event& e, const Core& core) {
  old_pod_.reset();
  if (const auto* pb = std::get_if<PodBound>(&e)) old_pod_ = core.pod(pb->pod.uid);
}

void BoundaryHits::after(const Event& e, const ApplyResult& r, const Core& core) {
  constexpr uint64_t kBound = static_cast<uint64_t>(kMaxGeneration);
  std::vector<uint64_t> gens = generations_of(e);
  gens.push_back(core.generation());
  for (uint64_t g : gens) {
    if (g == kBound - 1) ++hits_["generation 2^53-1"];
    if (g == kBound) ++hits_["generation 2^53"];
    if (g == kBound + 1) ++hits_["generation 2^53+1"];
  }
  if (core.generation() == kBound) ++hits_["node generation at 2^53"];
  if (const auto* dr = std::get_if<DaemonRestart>(&e);
      dr && r.status == ApplyResult::Status::Invalid && dr->persisted_generation <= kBound)
    ++hits_["restart refused at the bound"];
  for (const auto& [tid, en] : core.desired()) {
    if (en.value.allowed == core.node().cpus) continue;
    const auto& w = en.value.allowed.words();
    for (unsigned i = 0; i < w.size(); ++i)
      if (w[i] != 0) ++hits_["narrowed CPUs in word " + std::to_string(i)];
    if (en.value.allowed.test(kMaxCpus - 1)) ++hits_["narrowed CPU 255"];
  }
  if (const auto* pb = std::get_if<PodBound>(&e);
      pb && r.status == ApplyResult::Status::Applied && old_pod_ && old_pod_->cgroup != pb->pod.cgroup) {
    for (const auto& t : core.tasks())
      if (under(t.cgroup, old_pod_->cgroup)) {
        ++hits_["pod rebound with tasks in its old cgroup"];
        break;
      }
  }
}

std::map<std::string, size_t> BoundaryHits::counts() const {
  std::map<std::string, size_t> out;
  for (const char* n : kNames) {
    auto it = hits_.find(n);
    out[n] = it == hits_.end() ? 0 : it->second;
  }
  return out;
}

std::vector<std::string> BoundaryHits::missed() const {
  std::vector<std::string> out;
  for (const auto& [name, n] : counts())
    if (n == 0) out.push_back(name);
  return out;
}

std::string BoundaryHits::to_string() const {
  std::string s = "boundaries hit:";
  for (const auto& [name, n] : counts()) s += " " + name + " " + std::to_string(n) + ",";
  s.pop_back();
  return s;
}

}  // namespace c2c::testing
