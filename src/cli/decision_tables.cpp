// The controllers' decisions in the CLI (decision_tables.hpp).
#include "cli/decision_tables.hpp"

#include <cstdio>
#include <sstream>

#include "cli/tables.hpp"

namespace c2c::cli {

namespace {

std::string shares(const reply::Decision& d) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f/%.2f", d.cpu_share_mean, d.cpu_share_max);
  return buf;
}

std::string signal(const reply::Decision& d) {
  if (d.has_signal) return format_ns(d.run_delay_p99_ns);
  return d.no_signal.empty() ? "-" : "none";
}

std::string tids(const reply::Decision& d) {
  std::string s;
  for (size_t i = 0; i < d.tids.size(); ++i) {
    if (i == 8) return s + ",... (" + std::to_string(d.tids.size()) + ")";  // a policy may act on thousands
    s += (i ? "," : "") + std::to_string(d.tids[i]);
  }
  return s.empty() ? "-" : s;
}

std::string pressure(const reply::Decision& d) {
  if (!d.cpu_pressure_pct) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", *d.cpu_pressure_pct);
  return buf;
}

std::string level(const reply::Decision& d) {
  return std::to_string(d.from_level) + " -> " + std::to_string(d.to_level);
}

}  // namespace

Listing decisions_listing(const reply::Decisions& r) {
  Listing l;
  l.empty_message = "No controller decisions.";
  for (const char* h : {"TIME", "POLICY", "TIDS", "LEVEL", "RUN DELAY P99", "CPU SHARE", "CPU PRESSURE", "RULE", "REASON"})
    l.add_column(h);
  l.add_column("THREADS RAN", true);
  l.add_column("NO SIGNAL", true);
  l.add_column("PRESSURE CGROUP", true);
  for (const auto& d : r.decisions) {
    const std::string policy = policy_kind_name(d.policy_kind) + "/" + d.policy;
    l.rows.push_back({"decision/" + policy + "/" + std::to_string(d.core_time_ns),
                      {rfc3339_utc(d.time_unix_ms), policy, tids(d), level(d), signal(d), shares(d), pressure(d), d.rule,
                       d.reason, std::to_string(d.threads_ran), d.no_signal.empty() ? "-" : d.no_signal,
                       d.pressure_cgroup.empty() ? "-" : d.pressure_cgroup},
                      d.json});
  }
  return l;
}

std::string explain_controller_lines(const reply::Explain& r) {
  if (!r.controller) return "";
  const auto& c = *r.controller;
  std::ostringstream o;
  o << "  controller: level " << c.level << " of " << c.max_level << " ("
    << (c.level == 0 ? "the static policy" : "raised") << ")\n";
  for (const auto& d : r.decisions)
    o << "  decision: " << rfc3339_utc(d.time_unix_ms) << " level " << level(d) << " " << d.rule
      << " (run delay p99 " << signal(d) << ", cpu share " << shares(d) << ", cpu pressure " << pressure(d)
      << "): " << d.reason
      << (d.no_signal.empty() ? "" : "; no signal: " + d.no_signal) << "\n";
  return o.str();
}

std::string explain_proposal_lines(const reply::Explain& r) {
  std::string s;
  for (const auto& p : r.proposals) s += "  proposed role: " + p.text + "\n";
  return s;
}

std::string preview_proposal_lines(const reply::Preview& r) {
  std::string s;
  for (const auto& p : r.proposals) s += "proposed role: tid " + std::to_string(p.tid) + " " + p.text + "\n";
  return s;
}

}  // namespace c2c::cli
