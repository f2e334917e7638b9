#include "daemon/generation_guard.hpp"

#include <bpf/bpf.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "daemon/durable_state.hpp"
#include "mirror/kernel_map.hpp"

namespace c2c::daemon {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

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
  return static_cast<uint64_t>(std::max<int64_t>(g, 0));
}

uint64_t highest_in_map(const std::string& policy_pin) {
  int fd = bpf_obj_get(policy_pin.c_str());
  if (fd < 0) return 0;
  mirror::KernelPolicyMap map(fd, 0);
  uint64_t g = 0;
  uint32_t key = 0, next = 0;
  const uint32_t* prev = nullptr;
  while (map.next_key(prev, &next) == 0) {
    c2c_policy_value v{};
    if (map.lookup(next, &v) == 0) g = std::max<uint64_t>(g, v.generation);
    key = next;
    prev = &key;
  }
  ::close(fd);
  return g;
}

}  // namespace

uint64_t highest_recorded_generation(const std::string& state_path, const std::string& policy_pin) {
  return std::max(highest_in_state(state_path), highest_in_map(policy_pin));
}

std::optional<mirror::GenerationLease> open_node_lease(const std::string& state_dir, const std::string& policy_pin,
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
    uint64_t floor = highest_recorded_generation(state_path, policy_pin) + kRecoveryMargin;
    spdlog::warn("--recover-generation: {} is missing; starting above generation {} (the highest recorded in {} and "
                 "{}, plus {})",
                 gen_path, floor - kRecoveryMargin, state_path, policy_pin, kRecoveryMargin);
    if (auto e = mirror::store_generation(gen_path, floor); !e.empty()) {
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

}  // namespace c2c::daemon
