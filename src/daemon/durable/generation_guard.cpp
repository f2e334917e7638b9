#include "daemon/durable/generation_guard.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/model.hpp"
#include "daemon/durable/durable_state.hpp"
#include "kernel/map_check.hpp"
#include "kernel/pins.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/pinned_maps.hpp"

namespace c2c::daemon {
namespace {

constexpr uint64_t kBound = static_cast<uint64_t>(kMaxGeneration);

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

uint64_t highest_in_state(const std::string& state_path) {
  DurableState s;
  FieldError e;
  if (!load_state(state_path, &s, &e)) return 0;  // a damaged file stops the start later, naming the field
  int64_t g = 0;
  for (const auto& p : s.policies) g = std::max(g, std::visit([](const auto& x) { return x.generation; }, p));
  for (const auto& t : s.policy_tombstones) g = std::max(g, t.deleted_generation);
  for (const auto& [id, a] : s.preview_acks) g = std::max(g, a);
  for (const auto& c : s.claims) g = std::max(g, c.generation);
  for (const auto& t : s.claim_tombstones) g = std::max(g, t.generation);
  for (const auto& i : s.intents) g = std::max(g, i.generation);
  // The decoder bounds each of them already (2^53); the clamp keeps the promise local.
  return std::min(static_cast<uint64_t>(std::max<int64_t>(g, 0)), kBound);
}

RecordedGeneration highest_in_map(mirror::PolicyMapIo& map) {
  RecordedGeneration r;
  uint32_t key = 0, next = 0;
  const uint32_t* prev = nullptr;
  while (map.next_key(prev, &next) == 0) {
    c2c_policy_value v{};
    if (map.lookup(next, &v) == 0) {
      // As the core's restart: an entry beyond the bound is foreign and carries nothing forward.
      if (v.generation > kBound) {
        ++r.beyond_bound;
        r.highest_beyond = std::max<uint64_t>(r.highest_beyond, v.generation);
      } else {
        r.highest = std::max<uint64_t>(r.highest, v.generation);
      }
    }
    key = next;
    prev = &key;
  }
  return r;
}

std::optional<uint64_t> recovered_floor(uint64_t highest_state, const RecordedGeneration& map, std::string* err) {
  const uint64_t highest = std::max(highest_state, map.highest);
  // The restart's generation is floor + 1 and must stay at or below the bound.
  if (highest >= kBound - kRecoveryMargin) {
    *err = "--recover-generation: the highest recorded generation " + std::to_string(highest) + " plus the margin " +
           std::to_string(kRecoveryMargin) + " leaves no generation at or below 2^53 (INV-4: generations never go "
           "back and never pass the bound): this node's generations are exhausted; nothing was stored";
    return std::nullopt;
  }
  return highest + kRecoveryMargin;
}

std::optional<mirror::GenerationLease> open_node_lease(const std::string& state_dir, mirror::PolicyMapIo* policy_map,
                                                       bool recover, std::string* err) {
  const std::string gen_path = state_dir + "/generation";
  const std::string state_path = state_dir + "/state.json";
  if (!exists(gen_path) && exists(state_path)) {
    if (!recover) {
      *err = "generation file " + gen_path + " is missing but " + state_path +
             " exists: this node ran before, at generations this process cannot know; refusing to start "
             "at generation 1 (INV-4: generations never go back). Restore the file, or start once with "
             "--recover-generation (spec/daemon.md)";
      return std::nullopt;
    }
    const RecordedGeneration in_map = policy_map ? highest_in_map(*policy_map) : RecordedGeneration{};
    if (in_map.beyond_bound)
      spdlog::warn("--recover-generation: {} policy map entries beyond 2^53 (up to {}) are not counted (foreign: the "
                   "core's restart ignores them too and the plan removes them, INV-5)",
                   in_map.beyond_bound, in_map.highest_beyond);
    const auto floor = recovered_floor(highest_in_state(state_path), in_map, err);
    if (!floor) return std::nullopt;
    spdlog::warn("--recover-generation: {} is missing; starting above generation {} (the highest recorded in {} and "
                 "the pinned policy map, plus {})",
                 gen_path, *floor - kRecoveryMargin, state_path, kRecoveryMargin);
    if (auto e = mirror::store_generation(gen_path, *floor); !e.empty()) {
      *err = "--recover-generation: " + e;
      return std::nullopt;
    }
  } else if (recover) {
    spdlog::info("--recover-generation: {} is present (or this is a first start): nothing to recover", gen_path);
  }
  auto lease = mirror::GenerationLease::open(gen_path);
  if (!lease) {
    *err = lease.error();
    return std::nullopt;
  }
  return std::move(lease.value());
}

std::optional<mirror::GenerationLease> open_node_lease(const std::string& state_dir, const std::string& policy_pin,
                                                       bool recover, std::string* err) {
  // No pin (a first start, or the maps were lost with a reboot) is a map with nothing recorded.
  const kernel::OpenedPin pin = recover ? kernel::open_pin(policy_pin) : kernel::OpenedPin{};
  if (pin.fd) {
    // Read with this build's value size: a pin of another layout is refused, not read past its end.
    const kernel::MapLayout layout = mirror::policy_map_layout(std::nullopt);
    if (std::string why = kernel::check_map(pin.fd.get(), layout, policy_pin); !why.empty()) {
      *err = "--recover-generation: " + why + "; nothing was stored";
      return std::nullopt;
    }
  }
  std::optional<mirror::KernelPolicyMap> map;
  if (pin.fd) map.emplace(pin.fd.get(), 0);
  return open_node_lease(state_dir, map ? &*map : nullptr, recover, err);
}

}  // namespace c2c::daemon
