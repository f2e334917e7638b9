#include "daemon/process/metrics.hpp"

#include <prometheus/exposer.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "c2c_version.hpp"
#include "daemon/role_socket/role_limits.hpp"

namespace c2c::daemon {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

std::shared_ptr<prometheus::Registry> make_registry() { return std::make_shared<prometheus::Registry>(); }

}  // namespace

Metrics::Metrics()
    : registry_(make_registry()),
      apply_latency_(BuildHistogram()
                         .Name("claim2core_apply_seconds")
                         .Help("Time to execute one reconcile plan against the pinned policy map")
                         .Register(*registry_)
                         .Add({}, prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                                         0.01, 0.025, 0.05, 0.1, 0.5})),
      desired_(BuildGauge().Name("claim2core_desired_entries").Help("Entries of the desired table").Register(*registry_).Add({})),
      actual_(BuildGauge().Name("claim2core_actual_entries").Help("Entries in the pinned policy map (last known)").Register(*registry_).Add({})),
      drift_(BuildCounter()
                 .Name("claim2core_reconcile_drift_total")
                 .Help("Map entries found differing from what the daemon last wrote, at read-back (INV-5)")
                 .Register(*registry_)
                 .Add({})),
      drift_now_(BuildGauge()
                     .Name("claim2core_reconcile_drift")
                     .Help("Entries that differed at the last read-back of the map")
                     .Register(*registry_)
                     .Add({})),
      violations_(&BuildCounter()
                       .Name("claim2core_invariant_violations_total")
                       .Help("Invariant violations found by the core's checks, by invariant id")
                       .Register(*registry_)),
      identity_mismatches_(BuildCounter()
                               .Name("claim2core_identity_mismatches_total")
                               .Help("Scheduler lookups whose (tid, start) did not match the entry (stats map, INV-2)")
                               .Register(*registry_)
                               .Add({})),
      scheduler_(&BuildCounter()
                      .Name("claim2core_scheduler_events_total")
                      .Help("The sched_ext scheduler's counters (stats map, all CPUs): boost_expired, "
                            "boost_budget_exhausted (INV-8), starvation_rescues, cpumask_rejections (INV-6), "
                            "migrations; boost_inherited (runs boosted as a boosted thread's wakee), "
                            "inherit_budget_refused (inherited boosts refused for the CPU's budget, INV-8); "
                            "oracle_cpu_outside, oracle_stale_identity, oracle_past_lease (must stay 0)")
                      .Register(*registry_)),
      rpcs_(&BuildCounter().Name("claim2core_rpcs_total").Help("RPCs by method and status code").Register(*registry_)),
      intents_(&BuildGauge().Name("claim2core_intents").Help("Intents by state").Register(*registry_)),
      rescans_(BuildCounter().Name("claim2core_task_rescans_total").Help("Full task rescans").Register(*registry_).Add({})),
      storms_(BuildCounter()
                  .Name("claim2core_task_event_storms_total")
                  .Help("Storms of task events: the ring buffer read every task_event_poll_interval, without wake-ups")
                  .Register(*registry_)
                  .Add({})),
      readbacks_(&BuildCounter()
                      .Name("claim2core_readback_passes_total")
                      .Help("Read-back passes of the policy map, by what they read: written_keys (the short pass "
                            "after a write) or whole_map")
                      .Register(*registry_)),
      full_pass_seconds_(&BuildGauge()
                              .Name("claim2core_full_pass_seconds")
                              .Help("How long the last periodic full pass held the daemon's loop, by pass: readback "
                                    "(the whole policy map, the full plan and invariant check) or rescan (the task "
                                    "snapshot); each runs at most 1 % of the time")
                              .Register(*registry_)),
      full_pass_cpu_seconds_total_(&BuildCounter()
                                        .Name("claim2core_full_pass_cpu_seconds_total")
                                        .Help("CPU time of the daemon's loop in the periodic full passes, summed, by "
                                              "pass (readback, rescan)")
                                        .Register(*registry_)),
      persists_(BuildCounter()
                    .Name("claim2core_state_persists_total")
                    .Help("Durable state writes (one per batch of commands)")
                    .Register(*registry_)
                    .Add({})),
      undo_copies_(BuildCounter()
                       .Name("claim2core_batch_undo_copies_total")
                       .Help("Command batches that copied the state first (their log record could not be reserved)")
                       .Register(*registry_)
                       .Add({})),
      watchers_dropped_(BuildCounter()
                            .Name("claim2core_watchers_dropped_total")
                            .Help("Watch streams ended because the client fell behind")
                            .Register(*registry_)
                            .Add({})),
      pins_restored_(BuildCounter()
                         .Name("claim2core_pins_restored_total")
                         .Help("Pinned maps found deleted or replaced under the daemon and pinned again")
                         .Register(*registry_)
                         .Add({})),
      enforcing_(BuildGauge()
                     .Name("claim2core_scheduler_enforcing")
                     .Help("1 while the claim2core sched_ext scheduler is attached and the kernel's root scheduler "
                           "(/sys/kernel/sched_ext/state enabled, root/ops claim2core), else 0: maps kept, not enforced")
                     .Register(*registry_)
                     .Add({})),
      realtime_priority_(BuildGauge()
                             .Name("claim2core_realtime_priority")
                             .Help("The SCHED_FIFO priority the daemon's loop and gRPC threads run at (config realtime_priority); "
                                   "0: time-shared, also when the kernel refused the configured priority")
                             .Register(*registry_)
                             .Add({})),
      realtime_demotions_(BuildCounter()
                              .Name("claim2core_realtime_demotions_total")
                              .Help("Wake-ups of the daemon's loop that used up their 2 ms of CPU at SCHED_FIFO and "
                                    "finished time-shared (bulk work: a policy matching many threads, a full pass)")
                              .Register(*registry_)
                              .Add({})),
      lease_renewals_(BuildCounter()
                          .Name("claim2core_lease_renewals_total")
                          .Help("Boost leases renewed at half-life (each renewal rewrites the entry's lease in the map)")
                          .Register(*registry_)
                          .Add({})),
      lease_renewal_batches_(BuildCounter()
                                 .Name("claim2core_lease_renewal_batches_total")
                                 .Help("Loop turns that renewed boost leases: a wave of leases due together is renewed "
                                       "at most 512 per turn")
                                 .Register(*registry_)
                                 .Add({})),
      role_refusals_(&BuildCounter()
                          .Name("claim2core_role_refusals_total")
                          .Help("Role-socket connections and requests refused by a limit (config role_limits), by "
                                "reason: connections, connections_per_uid, idle_timeout, rate, peer_exited (the "
                                "connecting process exited), line_too_long, unread_replies")
                          .Register(*registry_)),
      role_connections_(BuildGauge()
                            .Name("claim2core_role_connections")
                            .Help("Connections the role socket serves now")
                            .Register(*registry_)
                            .Add({})),
      controller_decisions_(&BuildCounter()
                                 .Name("claim2core_controller_decisions_total")
                                 .Help("Decisions of the policies' controllers (issue 46), by policy and rule: raise, "
                                       "lower, expired, no-signal (level changes); at-max, cooldown, in-band, "
                                       "at-static, silent (holds, one per window)")
                                 .Register(*registry_)),
      controller_level_(&BuildGauge()
                             .Name("claim2core_controller_level")
                             .Help("The current level of a policy's controller (0: the static policy)")
                             .Register(*registry_)) {
  for (RoleRefusal r : kRoleRefusals) role_refusals_->Add({{"reason", reason_name(r)}});
  for (const char* inv : {"INV-1", "INV-2", "INV-3", "INV-4", "INV-5", "INV-6", "INV-7", "INV-8"})
    violations_->Add({{"invariant", inv}});
  // The Prometheus build_info convention: constant 1, the version in a label.
  BuildGauge()
      .Name("claim2core_build_info")
      .Help("claim2cored's version (value always 1)")
      .Register(*registry_)
      .Add({{"version", kVersionString}})
      .Set(1);
}

void Metrics::advance_to(prometheus::Counter& c, double n) {
  if (n > c.Value()) c.Increment(n - c.Value());
}

std::string Metrics::text() const {
  std::ostringstream out;
  auto families = registry_->Collect();
  for (auto& f : process_->Collect()) families.push_back(std::move(f));
  for (auto& f : latency_->Collect()) families.push_back(std::move(f));
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

Metrics::~Metrics() = default;

std::string Metrics::expose(const std::string& address) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address);
    exposer_->RegisterCollectable(registry_);
    exposer_->RegisterCollectable(process_);
    exposer_->RegisterCollectable(latency_);
    return "";
  } catch (const std::exception& e) {
    return std::string("metrics endpoint ") + address + ": " + e.what();
  }
}

}  // namespace c2c::daemon
