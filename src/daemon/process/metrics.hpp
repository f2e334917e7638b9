// Prometheus metrics (prometheus-cpp). The registry always exists (the engine updates it); the
// HTTP endpoint (Exposer) only when metrics.address is configured (127.0.0.1 by default policy).
#pragma once

#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "daemon/process/process_metrics.hpp"
#include "daemon/reconciler/reconciler_metrics.hpp"
#include "daemon/process/scheduler_latency.hpp"

namespace prometheus {
class Exposer;
}

namespace c2c::daemon {

class Metrics final : public ReconcilerMetrics {
 public:
  Metrics();
  ~Metrics() override;
  // Starts the HTTP endpoint; "" or the error.
  std::string expose(const std::string& address);

  void observe_apply(double seconds) override { apply_latency_.Observe(seconds); }
  void set_entries(double desired, double actual) {
    desired_.Set(desired);
    actual_.Set(actual);
  }
  void add_drift(double n) override { drift_.Increment(n); }
  void set_drift_now(double n) override { drift_now_.Set(n); }
  void violation(const std::string& inv) override { violations_->Add({{"invariant", inv}}).Increment(); }
  // The stats map's monotonic sums are exported as counters (promtool: a sum that only grows is a
  // counter named _total): each call advances the counter to the sum read; a smaller sum (the
  // stats map was recreated) leaves it, as a counter never goes down within one process.
  void set_identity_mismatches(double n) { advance_to(identity_mismatches_, n); }
  // The scheduler's own counters (stats map, summed over CPUs), by name.
  void set_scheduler_counter(const std::string& name, double n) { advance_to(scheduler_->Add({{"counter", name}}), n); }
  // 1 while the claim2core sched_ext scheduler is attached and the kernel's root scheduler
  // (sched::scheduler_enforcing), 0 otherwise: the maps are then kept current but not enforced.
  void set_scheduler_enforcing(bool on) { enforcing_.Set(on ? 1.0 : 0.0); }
  // The SCHED_FIFO priority the daemon's threads run at (realtime_priority.hpp), 0: time-shared.
  void set_realtime_priority(uint32_t p) { realtime_priority_.Set(static_cast<double>(p)); }
  // A wake-up of the loop that used up its SCHED_FIFO budget and finished time-shared.
  void realtime_demotion() { realtime_demotions_.Increment(); }
  void set_scheduler_latency(sched::LatencyBuckets h) { latency_->set(std::move(h)); }
  void rpc(const std::string& method, const std::string& code) {
    rpcs_->Add({{"method", method}, {"code", code}}).Increment();
  }
  void set_intents(const std::string& state, double n) { intents_->Add({{"state", state}}).Set(n); }
  void rescan() { rescans_.Increment(); }
  // A turn that renewed `n` boost leases (one batch of a renewal wave: spec/daemon.md, "Lease
  // renewals in batches").
  void lease_renewals(size_t n) {
    lease_renewal_batches_.Increment();
    lease_renewals_.Increment(static_cast<double>(n));
  }
  // A storm of task events began: the ring buffer is read on the clock until it ends
  // (task_event_pacing.hpp).
  void task_event_storm() { storms_.Increment(); }
  // How long the last periodic full pass held the loop: "readback" (the whole map, the full plan
  // and check) or "rescan" (the task snapshot); each is paced to at most 1 % of the loop
  // (full_pass_pacing.hpp), so this says how far apart they run.
  // The CPU counter adds every pass's CPU time (the loop thread's clock; on a busy node the wall
  // time also counts the waits for a CPU): what the passes cost between two scrapes (a benchmark's
  // window of task events subtracts it to see the events' own cost).
  void full_pass(const char* pass, double seconds, double cpu_seconds) override {
    full_pass_seconds_->Add({{"pass", pass}}).Set(seconds);
    full_pass_cpu_seconds_total_->Add({{"pass", pass}}).Increment(cpu_seconds);
  }
  // A read-back pass, by what it read: "written_keys" (the short pass, confirm_pass.hpp) or
  // "whole_map" (the full pass, or a short one that fell back to it).
  void readback(const char* read) override { readbacks_->Add({{"read", read}}).Increment(); }
  void persisted() { persists_.Increment(); }
  // A command batch that copied the state before its first change (its log record could not be
  // reserved: a full disk, a lease without headroom): the O(state) path, rare when healthy.
  void undo_copy() { undo_copies_.Increment(); }
  void watcher_dropped() { watchers_dropped_.Increment(); }
  void pin_restored() { pins_restored_.Increment(); }
  // The role socket (role_limits.hpp): a request or connection refused by a limit, by reason
  // (reason_name), and the connections it serves now.
  void role_refusal(const char* reason) { role_refusals_->Add({{"reason", reason}}).Increment(); }
  void set_role_connections(double n) { role_connections_.Set(n); }
  // A controller's decision (issue 46), by policy ("<kind>/<name>") and rule, and its level after it.
  void controller_decision(const std::string& policy, const char* rule, uint32_t level) {
    controller_decisions_->Add({{"policy", policy}, {"rule", rule}}).Increment();
    controller_level_->Add({{"policy", policy}}).Set(static_cast<double>(level));
  }
  prometheus::Registry& registry() { return *registry_; }
  // The exposition text of the registry (what /metrics serves), for tests.
  std::string text() const;

 private:
  static void advance_to(prometheus::Counter& c, double n);

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<ProcessCollector> process_ = std::make_shared<ProcessCollector>();
  std::shared_ptr<SchedulerLatencyCollector> latency_ = std::make_shared<SchedulerLatencyCollector>();
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Histogram& apply_latency_;
  prometheus::Gauge& desired_;
  prometheus::Gauge& actual_;
  prometheus::Counter& drift_;
  prometheus::Gauge& drift_now_;
  prometheus::Family<prometheus::Counter>* violations_;
  prometheus::Counter& identity_mismatches_;
  prometheus::Family<prometheus::Counter>* scheduler_;
  prometheus::Family<prometheus::Counter>* rpcs_;
  prometheus::Family<prometheus::Gauge>* intents_;
  prometheus::Counter& rescans_;
  prometheus::Counter& storms_;
  prometheus::Family<prometheus::Counter>* readbacks_;
  prometheus::Family<prometheus::Gauge>* full_pass_seconds_;
  prometheus::Family<prometheus::Counter>* full_pass_cpu_seconds_total_;
  prometheus::Counter& persists_;
  prometheus::Counter& undo_copies_;
  prometheus::Counter& watchers_dropped_;
  prometheus::Counter& pins_restored_;
  prometheus::Gauge& enforcing_;
  prometheus::Gauge& realtime_priority_;
  prometheus::Counter& realtime_demotions_;
  prometheus::Counter& lease_renewals_;
  prometheus::Counter& lease_renewal_batches_;
  prometheus::Family<prometheus::Counter>* role_refusals_;
  prometheus::Gauge& role_connections_;
  prometheus::Family<prometheus::Counter>* controller_decisions_;
  prometheus::Family<prometheus::Gauge>* controller_level_;
};

}  // namespace c2c::daemon
