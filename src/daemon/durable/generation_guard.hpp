// Opening the node generation lease at startup (INV-4, spec/daemon.md "Startup"). A missing
// generation file is a first start only when there is no state.json either; next to an existing
// state.json it means the file was lost, and starting at generation 1 would reuse generations
// this node already wrote and reported. That is refused unless the operator asks for recovery
// (--recover-generation): the new floor is then the highest generation found in the pinned policy
// map and in state.json plus kRecoveryMargin, stored before the lease opens.
//
// Every generation read here obeys the core's bound (2^53, spec/state-machine.md "Bounds"): a map
// entry beyond it is foreign (the core's restart does not count it either, and the plan removes
// it), and a recovered floor that would leave no generation at or below the bound is refused
// before anything is stored, so that a refused recovery never makes the node unstartable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mirror/generation_store.hpp"
#include "mirror/map_io.hpp"

namespace c2c::daemon {

// Generations reported to clients without an entry in the map leave no trace on disk; the
// margin puts the recovered floor above those of a last lease window (1024) many times over.
inline constexpr uint64_t kRecoveryMargin = 1ull << 20;

struct RecordedGeneration {
  uint64_t highest = 0;          // the highest generation at or below 2^53
  size_t beyond_bound = 0;       // map entries above 2^53, not counted (foreign, INV-5)
  uint64_t highest_beyond = 0;   // the largest of those, for the log
};

// The highest generation recorded in state.json's text (policies, tombstones, claims, previews,
// intents; a damaged file counts 0: the start stops on it later, naming the field).
uint64_t highest_in_state(const std::string& state_path);
// The highest generation of the policy map's entries, within the bound.
RecordedGeneration highest_in_map(mirror::PolicyMapIo& map);

// The floor --recover-generation stores: max(state, map) + kRecoveryMargin; nullopt with *err
// when the next generation above it would pass 2^53 (INV-4: nothing is stored then).
std::optional<uint64_t> recovered_floor(uint64_t highest_state, const RecordedGeneration& map, std::string* err);

// nullopt with *err when the lease cannot be opened or the start is refused. `policy_map`: the
// pinned policy map, if there is one (only read when recovering).
std::optional<mirror::GenerationLease> open_node_lease(const std::string& state_dir, mirror::PolicyMapIo* policy_map,
                                                       bool recover, std::string* err);
// The same, with the map opened from its pin (absent pin: no map).
std::optional<mirror::GenerationLease> open_node_lease(const std::string& state_dir, const std::string& policy_pin,
                                                       bool recover, std::string* err);

}  // namespace c2c::daemon
