// The transition function's entry point: validates an event, then hands it to its handler
// (event_handlers.hpp; one file per family of event kinds: apply_node_and_pods.cpp,
// apply_claims.cpp, apply_tasks.cpp, apply_policies.cpp, apply_daemon.cpp).
#include <variant>

#include "core/event_handlers.hpp"

namespace c2c {

// Events that change no policy, pod, claim or node state (DeriveMemo's keys and results).
static bool is_task_event(const Event& e) {
  return std::holds_alternative<TaskSeen>(e) || std::holds_alternative<TaskRenamed>(e) ||
         std::holds_alternative<TaskExited>(e) || std::holds_alternative<TaskRoleSet>(e) ||
         std::holds_alternative<TimeAdvance>(e) || std::holds_alternative<BpfSynced>(e) ||
         std::holds_alternative<BpfObserved>(e) || std::holds_alternative<SyncComplete>(e) ||
         std::holds_alternative<ControllerWindow>(e);
}

ApplyResult CoreImpl::apply(const Event& e) {
  // Stateless validation first (the same function the trace decoder runs on every line), so that
  // no handler can mutate anything before its input was checked.
  // The patterns it compiles are the ones the handler stores (one RE2 compile per pattern).
  CompiledPatterns compiled;
  if (auto err = validate(e, &compiled)) return EventHandlers::invalid(*err);
  // INV-4's bound holds for the node generation too (spec/state-machine.md, "Bounds"): at 2^53
  // there is no next generation, so nothing may change the desired table any more. Only the map's
  // own accounts (read back, synced, loading done) still apply; they never move G. A restart's
  // handler refuses it, naming its own field.
  if (generation >= static_cast<uint64_t>(kMaxGeneration) && !std::holds_alternative<BpfObserved>(e) &&
      !std::holds_alternative<BpfSynced>(e) && !std::holds_alternative<SyncComplete>(e) &&
      !std::holds_alternative<DaemonRestart>(e))
    return EventHandlers::invalid("generation", "the node generation is at 2^53, the bound (INV-4): no event may change "
                                                "the desired table any more (this node's generations are exhausted)");
  // The memo's keys are the policies', pods' and node's states, which only task events leave alone.
  if (!is_task_event(e)) memo.clear();
  return std::visit(EventHandlers{*this, &compiled}, e);
}

}  // namespace c2c
