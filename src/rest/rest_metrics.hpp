// claim2core-rest's Prometheus metrics (prometheus-cpp, as claim2cored's src/daemon/process/metrics.*),
// served as text at GET /metrics with the node_scheduling_intent.read permission: the refusal
// counts tell someone probing the limits which of them they hit, so they are not public.
//
//   claim2core_rest_refusals_total{reason}  requests or connections refused before the daemon
//                                           was called, by reason (refusal_reasons(), request_decoder.hpp;
//                                           every reason present at 0 from the start)
//   claim2core_rest_connections             connections being served now
//   claim2core_rest_limit{limit}            the configured limits (spec/daemon.md, "REST gateway")
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

namespace c2c::rest {

class RestMetrics {
 public:
  RestMetrics();
  void refused(const std::string& reason);
  void connection_opened() { connections_.Increment(); }
  void connection_closed() { connections_.Decrement(); }
  void set_limit(const std::string& name, double value) { limits_->Add({{"limit", name}}).Set(value); }
  // The Prometheus text exposition format (version 0.0.4).
  std::string text() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* refusals_;
  prometheus::Gauge& connections_;
  prometheus::Family<prometheus::Gauge>* limits_;
};

}  // namespace c2c::rest
