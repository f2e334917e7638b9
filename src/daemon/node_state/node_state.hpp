// The node's state (spec/daemon.md, "The loop"; issue 44): the core, the durable state (the
// inputs a restart rebuilds from), the intents and the facts they are settled from, the
// generation lease that covers every generation the node may write or report (INV-4). Owned by
// the engine's loop thread; the reconciler (reconciler/) writes the map from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/core.hpp"
#include "daemon/durable/durable_state.hpp"
#include "daemon/node_state/intents.hpp"
#include "daemon/node_state/intent_settling.hpp"
#include "mirror/generation_store.hpp"

namespace c2c::daemon {

struct NodeState {
  std::string node_name;
  Core core;
  DurableState durable;
  IntentTable intents;
  IntentFacts facts;
  std::optional<mirror::GenerationLease> lease;
  std::string lease_error;  // the lease's last error, logged once ("" when it could be extended)

  // The intents from the facts; `report`: an apply's, for its failed ops (intent_settling.hpp).
  void settle_intents(const mirror::ApplyReport* report, const std::string& owed_error, int64_t now_ms) {
    daemon::settle_intents(intents, durable, facts.facts(core, report), owed_error, now_ms);
  }
  void refresh_intents(int64_t now_ms) { daemon::refresh_intents(intents, core, durable, node_name, now_ms); }
  // The node generation clients may be told: never above the durable ceiling, so no restart
  // can reuse a generation anybody saw (INV-4), even while the lease cannot be extended.
  uint64_t reported_generation() const { return std::min(core.generation(), lease->durable()); }
};

}  // namespace c2c::daemon
