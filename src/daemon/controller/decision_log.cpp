// The controllers' decisions (decision_log.hpp).
#include "daemon/controller/decision_log.hpp"

#include <algorithm>
#include <cstdio>

namespace c2c::daemon {

namespace {

std::string policy_ref(const ControllerDecisionRecord& r) { return std::string(to_string(r.kind)) + "/" + r.policy; }

std::string share(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

std::vector<node::Decision> DecisionLog::list(const std::string& policy, uint32_t tid, uint32_t limit) const {
  std::vector<node::Decision> out;
  for (const auto& d : kept_) {
    if (!policy.empty() && policy != d.record.policy && policy != policy_ref(d.record)) continue;
    if (tid != 0 && !std::binary_search(d.tids.begin(), d.tids.end(), tid)) continue;
    out.push_back(d);
  }
  if (limit != 0 && out.size() > limit) out.erase(out.begin(), out.end() - limit);
  return out;
}

LogRecord decision_record(const node::Decision& d) {
  const ControllerDecisionRecord& r = d.record;
  LogRecord rec;
  rec.info = r.from != r.to;
  rec.message = "controller decision";
  rec.fields = {{"POLICY", policy_ref(r)},
                {"RULE", to_string(r.rule)},
                {"FROM_LEVEL", std::to_string(r.from)},
                {"TO_LEVEL", std::to_string(r.to)}};
  if (r.signal) rec.fields.emplace_back("RUN_DELAY_P99_NS", std::to_string(*r.signal));
  if (!d.no_signal.empty()) rec.fields.emplace_back("NO_SIGNAL", d.no_signal);
  rec.fields.emplace_back("CPU_SHARE_MEAN", share(d.cpu_share_mean));
  rec.fields.emplace_back("CPU_SHARE_MAX", share(d.cpu_share_max));
  if (d.cpu_pressure_pct) rec.fields.emplace_back("CPU_PRESSURE_SOME_PCT", share(*d.cpu_pressure_pct));
  rec.fields.emplace_back("THREADS", std::to_string(d.tids.size()));
  rec.fields.emplace_back("THREADS_RAN", std::to_string(d.threads_ran));
  rec.fields.emplace_back("REASON", r.reason);
  return rec;
}

}  // namespace c2c::daemon
