#include "trace/replay.hpp"

#include <set>
#include <sstream>

#include "core/names.hpp"
#include "trace/render.hpp"

namespace c2c::trace {

using nlohmann::json;

ReplayOutcome replay(const std::vector<codec::TraceEvent>& events, bool check_every_step, bool stop_at_first) {
  ReplayOutcome out;
  auto record = [&](size_t step, const codec::TraceEvent& te, const std::vector<Violation>& vs) {
    for (const auto& v : vs) out.violations.push_back({step, te.line, event_kind(te.event), v});
  };
  for (size_t i = 0; i < events.size(); ++i) {
    const codec::TraceEvent& te = events[i];
    const StepContext before = out.core.step_context(te.event);
    ApplyResult r = out.core.apply(te.event);
    out.steps = i + 1;
    if (r.status == ApplyResult::Status::Invalid) {
      out.invalid = codec::ParseError{te.line, r.field, r.message};
      break;
    }
    if (r.status == ApplyResult::Status::Ignored) out.ignored.push_back({te.line, event_kind(te.event), r.message});
    for (const auto& w : r.warnings) out.warnings.push_back({te.line, event_kind(te.event), w});
    for (const auto& d : r.decisions) out.decisions.push_back({te.line, event_kind(te.event), d});
    // Every step: the incremental check (the keys the event touched), so a replay is linear in
    // its length; the last step also gets the full check().
    if (check_every_step || i + 1 == events.size()) record(i + 1, te, out.core.check_step(before, r));
    if (i + 1 == events.size()) record(i + 1, te, out.core.check());
    if (stop_at_first && !out.violations.empty()) break;
  }
  return out;
}

json to_json(const ReplayOutcome& r) {
  json desired = json::array();
  for (const auto& l : r.core.desired_table()) desired.push_back(to_json(l));
  json conflicts = json::array();
  for (const auto& c : r.core.conflicts()) conflicts.push_back(to_json(c));
  json verdicts = json::object();
  for (const char* id : kInvariantIds) verdicts[id] = "holds";
  json violations = json::array();
  for (const auto& v : r.violations) {
    verdicts[v.violation.invariant] = "violated";
    json j = to_json(v.violation);
    j["step"] = v.step;
    j["line"] = v.line;
    j["event"] = v.event_kind;
    violations.push_back(j);
  }
  auto notes = [](const std::vector<StepNote>& ns) {
    json a = json::array();
    for (const auto& n : ns) a.push_back({{"line", n.line}, {"event", n.event_kind}, {"message", n.message}});
    return a;
  };
  json j{{"steps", r.steps},
         {"generation", r.core.generation()},
         {"restartEpoch", r.core.restart_epoch()},
         {"loading", r.core.loading()},
         {"nowNs", r.core.now()},
         {"desired", desired},
         {"plan", to_json(r.core.plan())},
         {"conflicts", conflicts},
         {"verdicts", verdicts},
         {"violations", violations},
         {"ignored", notes(r.ignored)},
         {"warnings", notes(r.warnings)}};
  // Only traces with controllers have decisions: the other replays' output stays as it was.
  if (!r.decisions.empty()) {
    json a = json::array();
    for (const auto& d : r.decisions) {
      json x{{"line", d.line},
             {"event", d.event_kind},
             {"policy", std::string(to_string(d.decision.kind)) + "/" + d.decision.policy},
             {"atNs", d.decision.at},
             {"from", d.decision.from},
             {"to", d.decision.to},
             {"rule", to_string(d.decision.rule)},
             {"reason", d.decision.reason}};
      if (d.decision.signal) x["signalNs"] = *d.decision.signal;
      a.push_back(x);
    }
    j["decisions"] = a;
  }
  if (r.invalid) j["invalid"] = {{"line", r.invalid->line}, {"field", r.invalid->field}, {"message", r.invalid->message}};
  return j;
}

std::string to_table(const ReplayOutcome& r) {
  std::ostringstream o;
  // Names are bytes and texts may quote them: on a terminal neither may act (core/names.hpp).
  auto shown = [](const std::string& s) { return terminal_text(s); };
  o << "steps " << r.steps << "  generation " << r.core.generation() << "  restart epoch " << r.core.restart_epoch()
    << (r.core.loading() ? "  (loading)" : "") << "\n\n";
  o << "DESIRED TABLE (" << r.core.desired_size() << " entries)\n";
  for (const auto& l : r.core.desired_table()) {
    o << "  tid " << l.task.tid << " (start " << l.task.start << ", tgid " << l.tgid << ", comm '" << shown(l.comm)
      << "')  " << to_string(l.value.exec_class) << " slice " << l.value.slice_ns / 1000 << "us";
    if (l.value.flags & kFlagBoost) o << " boost-until " << l.value.boost_until;
    if (l.value.flags & kFlagAllowedCpus) o << " cpus " << l.value.allowed.to_string();
    if (l.value.flags & kFlagPreferredCpus) o << " prefer " << l.value.preferred.to_string();
    o << "  gen " << l.value.generation << "\n    lineage: ";
    for (const auto& c : l.claims) o << "claim " << c.uid << "@" << c.generation << " -> ";
    if (!l.pod_uid.empty()) o << "pod " << l.pod_uid << " -> ";
    if (!l.cgroup.empty()) o << "cgroup " << shown(l.cgroup) << " -> ";
    o << "task " << l.task.tid << " -> ";
    if (!l.role_source.empty()) o << l.role_source << " -> ";  // "registered role decode"
    o << to_string(l.policy_kind) << "/" << l.policy << "@" << l.policy_generation;
    if (!l.role.empty()) o << " role " << l.role;
    o << " (" << to_string(l.strategy) << ")\n";
  }
  const Plan p = r.core.plan();
  o << "\nRECONCILE PLAN (" << p.ops.size() << " ops";
  if (!p.deferred_deletes.empty()) o << ", " << p.deferred_deletes.size() << " deletes deferred while loading";
  o << ")\n";
  for (const auto& op : p.ops) o << "  " << to_string(op.kind) << " tid " << op.tid << ": " << shown(op.reason) << "\n";
  auto conflicts = r.core.conflicts();
  if (!conflicts.empty()) {
    o << "\nCONFLICTS\n";
    for (const auto& c : conflicts) {
      o << "  tid " << c.task.tid << ": " << c.winner << " wins over";
      for (const auto& l : c.losers) o << " " << l;
      o << " (" << c.rule << ")\n";
    }
  }
  o << "\nINVARIANTS\n";
  std::set<std::string> broken;
  for (const auto& v : r.violations) broken.insert(v.violation.invariant);
  for (const char* id : kInvariantIds) o << "  " << id << "  " << (broken.count(id) ? "VIOLATED" : "holds") << "\n";
  for (const auto& v : r.violations)
    o << "  step " << v.step << " (line " << v.line << ", " << v.event_kind << "): " << v.violation.invariant << ": "
      << shown(v.violation.message) << "\n";
  if (!r.decisions.empty()) {
    o << "\nCONTROLLER DECISIONS\n";
    for (const auto& d : r.decisions)
      o << "  line " << d.line << " (" << d.event_kind << ") " << to_string(d.decision.kind) << "/"
        << shown(d.decision.policy) << " at " << d.decision.at << ": " << d.decision.from << " -> " << d.decision.to
        << " [" << to_string(d.decision.rule) << "] " << shown(d.decision.reason) << "\n";
  }
  if (!r.ignored.empty()) {
    o << "\nIGNORED INPUTS\n";
    for (const auto& n : r.ignored) o << "  line " << n.line << " (" << n.event_kind << "): " << shown(n.message) << "\n";
  }
  if (r.invalid) o << "\nINVALID INPUT\n  " << r.invalid->to_string() << "\n";
  return o.str();
}

}  // namespace c2c::trace
