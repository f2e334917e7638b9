// Opening the node generation lease at startup (INV-4, spec/daemon.md "Startup"). A missing
// generation file is a first start only when there is no state.json either; next to an existing
// state.json it means the file was lost, and starting at generation 1 would reuse generations
// this node already wrote and reported. That is refused unless the operator asks for recovery
// (--recover-generation): the new floor is then the highest generation found in the pinned policy
// map and in state.json plus kRecoveryMargin, stored before the lease opens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mirror/generation_store.hpp"

namespace c2c::daemon {

// Generations reported to clients without an entry in the map leave no trace on disk; the
// margin puts the recovered floor above those of a last lease window (1024) many times over.
inline constexpr uint64_t kRecoveryMargin = 1ull << 20;

// The highest generation recorded anywhere in state.json's text (policies, tombstones, claims,
// previews, intents) and in the pinned policy map at `policy_pin` (absent: 0).
uint64_t highest_recorded_generation(const std::string& state_path, const std::string& policy_pin);

// nullopt with *err when the lease cannot be opened or the start is refused.
std::optional<mirror::GenerationLease> open_node_lease(const std::string& state_dir, const std::string& policy_pin,
                                                       bool recover, std::string* err);

}  // namespace c2c::daemon
