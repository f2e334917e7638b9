// Why an intent has fewer entries than the tasks its policy matches, in words (spec/daemon.md,
// "Intents"), from the core's own accounts: its current conflicts (Core::conflicts, what preview
// and `get tasks` show as outranked) and its stale-claim warnings (Core::stale_claims, what
// preview warns). Cheap enough for every read-back pass: one pass over the conflicts for all
// policies, not one preview per policy. Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/core.hpp"

namespace c2c::daemon {

// For every policy that loses a task: "lost the conflict to <Kind>/<name> (<rule>) on tid 12, 13"
// (one part per winner, "; "-joined), keyed by "<Kind>/<name>" of the loser.
std::map<std::string, std::string> lost_conflicts(const std::vector<Conflict>& conflicts);

// The stale claims (their warnings without the "<Kind>/<name>: " prefix), then the lost
// conflicts, "; "-joined; "" when there is nothing to say ("matches no task on this node" is the
// intent's own default when it has no entry at all).
std::string intent_diagnosis(const std::string& policy_key, const std::vector<std::string>& stale_warnings,
                             const std::map<std::string, std::string>& lost);

}  // namespace c2c::daemon
