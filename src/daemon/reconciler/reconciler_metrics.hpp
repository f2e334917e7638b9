// What the reconciler reports (claim2core_apply_*, _readback_*, _drift_*, _full_pass_*,
// _invariant_violations_*: spec/daemon.md, "Metrics"). The daemon's Metrics implements it; the
// reconciler's unit tests count with their own, so the reconciler builds without prometheus-cpp
// (and tests/mutants/mutate.py daemon_durable seeds bugs in it cheaply).
#pragma once

#include <string>

namespace c2c::daemon {

class ReconcilerMetrics {
 public:
  virtual ~ReconcilerMetrics() = default;
  virtual void observe_apply(double seconds) = 0;
  virtual void readback(const char* read) = 0;  // "written_keys" or "whole_map"
  virtual void add_drift(double n) = 0;
  virtual void set_drift_now(double n) = 0;
  virtual void full_pass(const char* pass, double seconds, double cpu_seconds) = 0;
  virtual void violation(const std::string& inv) = 0;
};

}  // namespace c2c::daemon
