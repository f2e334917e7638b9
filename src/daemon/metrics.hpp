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

namespace prometheus {
class Exposer;
}

namespace c2c::daemon {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  // Starts the HTTP endpoint; "" or the error.
  std::string expose(const std::string& address);

  void observe_apply(double seconds) { apply_latency_.Observe(seconds); }
  void set_entries(double desired, double actual) {
    desired_.Set(desired);
    actual_.Set(actual);
  }
  void add_drift(double n) { drift_.Increment(n); }
  void set_drift_now(double n) { drift_now_.Set(n); }
  void violation(const std::string& inv) { violations_->Add({{"invariant", inv}}).Increment(); }
  void set_identity_mismatches(double n) { identity_mismatches_.Set(n); }
  // The scheduler's own counters (stats map, summed over CPUs), by name.
  void set_scheduler_counter(const std::string& name, double n) { scheduler_->Add({{"counter", name}}).Set(n); }
  void rpc(const std::string& method, const std::string& code) {
    rpcs_->Add({{"method", method}, {"code", code}}).Increment();
  }
  void set_intents(const std::string& state, double n) { intents_->Add({{"state", state}}).Set(n); }
  void rescan() { rescans_.Increment(); }
  void persisted() { persists_.Increment(); }
  void watcher_dropped() { watchers_dropped_.Increment(); }
  void pin_restored() { pins_restored_.Increment(); }
  prometheus::Registry& registry() { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Histogram& apply_latency_;
  prometheus::Gauge& desired_;
  prometheus::Gauge& actual_;
  prometheus::Counter& drift_;
  prometheus::Gauge& drift_now_;
  prometheus::Family<prometheus::Counter>* violations_;
  prometheus::Gauge& identity_mismatches_;
  prometheus::Family<prometheus::Gauge>* scheduler_;
  prometheus::Family<prometheus::Counter>* rpcs_;
  prometheus::Family<prometheus::Gauge>* intents_;
  prometheus::Counter& rescans_;
  prometheus::Counter& persists_;
  prometheus::Counter& watchers_dropped_;
  prometheus::Counter& pins_restored_;
};

}  // namespace c2c::daemon
