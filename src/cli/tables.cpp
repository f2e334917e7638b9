#include "cli/tables.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <sstream>
#include <variant>

#include "cli/decision_tables.hpp"
#include "cli/structured_output.hpp"
#include "codec/json_reader.hpp"
#include "codec/policy_codec.hpp"
#include "core/names.hpp"

namespace c2c::cli {

void TextTable::add(std::vector<std::string> row) {
  for (auto& cell : row) cell = terminal_text(cell);
  rows_.push_back(std::move(row));
}

std::vector<size_t> TextTable::widths(const std::vector<size_t>& min_width) const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t i = 0; i < width.size() && i < min_width.size(); ++i) width[i] = min_width[i];
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], terminal_width(row[i]));
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  return width;
}

std::string TextTable::render(bool with_header, const std::vector<size_t>& min_width) const {
  const std::vector<size_t> width = widths(min_width);
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      l += cell;
      if (i + 1 < width.size()) l += std::string(width[i] - terminal_width(cell) + 2, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  if (with_header) line(header_);
  for (const auto& r : rows_) line(r);
  return out;
}

std::string intent_state_name(node::IntentState s) { return reply::state_name(s); }

std::string policy_kind_name(const std::optional<PolicyKind>& k) { return reply::kind_name(k); }

std::string format_ns(uint64_t ns) {
  if (ns == 0) return "0";
  struct Unit { uint64_t n; const char* s; };
  for (Unit u : {Unit{3'600'000'000'000ull, "h"}, Unit{60'000'000'000ull, "m"}, Unit{1'000'000'000ull, "s"},
                 Unit{1'000'000ull, "ms"}, Unit{1'000ull, "us"}})
    if (ns % u.n == 0) return std::to_string(ns / u.n) + u.s;
  return std::to_string(ns) + "ns";
}

std::string rfc3339_utc(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

template <class C>
std::string join(const C& items, const char* sep = ",") {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += sep;
    out += i;
  }
  return out;
}

std::string labels(const std::map<std::string, std::string>& m) {
  std::vector<std::string> kv;
  for (const auto& [k, v] : m) kv.push_back(k + "=" + v);
  std::sort(kv.begin(), kv.end());
  return join(kv);
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

std::string entry_summary(const reply::RuntimeEntry& e) {
  std::string s = e.execution_class + " slice " + format_ns(e.slice_ns);
  if (e.boost_until_ns != 0) s += " boost<=" + format_ns(e.max_boost_ns);
  if (!e.allowed_cpus.empty()) s += " cpus " + e.allowed_cpus;
  if (!e.preferred_cpus.empty()) s += " prefer " + e.preferred_cpus;
  s += " gen " + std::to_string(e.generation);
  return s;
}

std::string warnings_block(const std::vector<std::string>& w) {
  std::string out;
  for (const auto& m : w) out += "warning: " + terminal_text(m) + "\n";  // a warning may quote a name
  return out;
}

}  // namespace

namespace {

// Policies print as the manifests they came from (so `get policies -o yaml` can be applied again).
nlohmann::json policy_manifest(const AnyPolicy& p) {
  return std::visit([](const auto& v) { return codec::encode_policy(v); }, p);
}

std::string dra_options(const DraExecutionPolicy& d) {
  std::vector<std::string> o;
  if (d.respect_allocated_cpuset) o.push_back("respectAllocatedCpuset");
  if (d.prefer_same_numa) o.push_back("preferSameNuma");
  if (d.prefer_same_pcie_root) o.push_back("preferSamePcieRoot");
  if (d.fail_closed_on_stale_claim) o.push_back("failClosedOnStaleClaim");
  if (const std::string b = codec::format_duration(d.max_boost); !b.empty()) o.push_back("maxBoost " + b);
  if (!d.fallback.empty()) o.push_back("fallback " + d.fallback);
  return or_dash(join(o));
}

// pod UID -> "namespace/name" (wide columns).
std::string pod_name(const std::vector<reply::PodInfo>& pods, const std::string& uid) {
  if (uid.empty()) return "-";
  for (const auto& p : pods)
    if (p.uid == uid) return p.namespace_ + "/" + p.name;
  return "-";
}

}  // namespace

Listing policies_listing(const reply::Policies& r) {
  Listing l;
  l.empty_message = "No policies.";
  for (const char* h : {"KIND", "NAME", "GENERATION", "SELECTS", "DOES"}) l.add_column(h);
  l.add_column("OPTIONS", /*wide_only=*/true);
  const auto& not_selected = r.node_not_selected;  // issue #14: why this node is not selected
  for (const auto& p : r.policies) {
    if (const auto* n = std::get_if<NodeSchedulingPolicy>(&p)) {
      std::vector<std::string> where;
      if (!n->node_names.empty()) where.push_back("nodes " + join(n->node_names));
      if (!n->node_selectors.empty()) where.push_back("nodeSelectors " + labels(n->node_selectors));
      for (const auto& x : n->node_selector_expressions)
        where.push_back("nodeSelectors " + x.key + " " + to_string(x.op) +
                        (x.values.empty() ? "" : " (" + join(x.values) + ")"));
      for (const auto& d : n->dra_selectors)
        where.push_back("dra " + d.driver + (d.pool.empty() ? "" : "/" + d.pool) +
                        (d.device.empty() ? "" : "/" + d.device));
      if (!n->command_regex.empty()) where.push_back("comm =~ " + n->command_regex);
      if (!n->process_regex.empty()) where.push_back("title =~ " + n->process_regex);
      if (auto it = not_selected.find(n->name); it != not_selected.end())
        where.push_back("node not selected: " + it->second);
      l.rows.push_back({"NodeSchedulingPolicy/" + n->name,
                        {"NodeSchedulingPolicy", n->name, std::to_string(n->generation), join(where, "; "),
                         "priority " + std::to_string(n->priority) + ", slice " +
                             (n->execution_time ? format_ns(n->execution_time) : "class default") +
                             (n->boost_inherit_depth ? ", boost inherited to depth " + std::to_string(n->boost_inherit_depth) : ""),
                         "-"},
                        policy_manifest(p)});
    } else {
      const auto& d = std::get<DraExecutionPolicy>(p);
      std::vector<std::string> roles;
      for (const auto& role : d.task_roles)
        roles.push_back(role.name + ":" + to_string(role.exec_class) +
                        (role.boost_inherit_depth ? " (boost inherited to depth " + std::to_string(role.boost_inherit_depth) + ")" : ""));
      std::string does = join(roles);
      if (d.require_preview) does += ", requirePreview";
      l.rows.push_back({"DRAExecutionPolicy/" + d.name,
                        {"DRAExecutionPolicy", d.name, std::to_string(d.generation),
                         "pods " + or_dash(labels(d.match_labels)) + "; claims " + join(d.resource_claims), does,
                         dra_options(d)},
                        policy_manifest(p)});
    }
  }
  return l;
}

Listing intents_listing(const std::vector<reply::Intent>& r) {
  Listing l;
  l.empty_message = "No intents.";
  for (const char* h : {"KIND", "POLICY", "GENERATION", "NODE", "STATE", "TASKS", "ENTRIES", "REASON"}) l.add_column(h);
  l.add_column("UPDATED", true);
  l.add_column("WARNINGS", true);
  for (const auto& i : r)
    l.rows.push_back({"intent/" + policy_kind_name(i.kind) + "/" + i.policy,
                      {policy_kind_name(i.kind), i.policy, std::to_string(i.policy_generation), i.node,
                       intent_state_name(i.state), std::to_string(i.matched_tasks),
                       std::to_string(i.applied_entries), i.reason, rfc3339_utc(i.updated_unix_ms),
                       or_dash(join(i.warnings, "; "))},
                      i.json});
  return l;
}

Listing tasks_listing(const std::vector<reply::Task>& r, const std::vector<reply::PodInfo>& pods) {
  Listing l;
  l.empty_message = "No tasks.";
  for (const char* h : {"TID", "TGID", "COMM", "TITLE", "CGROUP", "POD", "POLICY", "CLASS", "WHY"}) l.add_column(h);
  l.add_column("START", true);
  l.add_column("POD NAME", true);
  for (const auto& k : r) {
    // Why: the rule that gave the thread its policy, and the policies it outranked.
    std::string why = "no policy matches";
    if (!k.policy.empty()) {
      why = k.strategy == "tgid" ? "inherited from its thread-group leader (tgid)" : "matches the thread (exact-tid)";
      if (!k.outranked.empty()) why += "; outranks " + join(k.outranked);
    }
    l.rows.push_back({"task/" + std::to_string(k.tid),
                      {std::to_string(k.tid), std::to_string(k.tgid), k.comm, or_dash(k.title),
                       or_dash(k.cgroup), or_dash(k.pod_uid),
                       k.policy.empty() ? "-" : k.policy + (k.role.empty() ? "" : " role " + k.role),
                       or_dash(k.execution_class), why, std::to_string(k.start), pod_name(pods, k.pod_uid)},
                      k.json});
  }
  return l;
}

// A binding's item carries its pod (from the same reply), so -o json loses nothing of it.
Listing bindings_listing(const reply::Bindings& r) {
  Listing l;
  l.empty_message = "No claim bindings.";
  for (const char* h : {"CLAIM", "GENERATION", "POD", "NODE", "DRIVER", "POOL", "DEVICE", "NUMA", "PCIE ROOT", "CPUS"})
    l.add_column(h);
  l.add_column("POD NAME", true);
  for (const auto& b : r.bindings) {
    std::vector<std::string> numa;
    for (int n : b.numa_nodes) numa.push_back(std::to_string(n));
    nlohmann::json item = b.json;
    for (const auto& p : r.pods)
      if (p.uid == b.pod_uid) item["pod"] = p.json;
    l.rows.push_back({"binding/" + b.claim_uid + (b.device.empty() ? "" : "/" + b.device),
                      {b.claim_uid, std::to_string(b.claim_generation), or_dash(b.pod_uid), b.node_name,
                       b.driver, b.pool, b.device, or_dash(join(numa)), or_dash(b.pcie_root),
                       or_dash(b.cpus), pod_name(r.pods, b.pod_uid)},
                      std::move(item)});
  }
  return l;
}

std::string render_policies(const reply::Policies& r) { return render_listing(policies_listing(r), GetFormat::Table); }
std::string render_intents(const std::vector<reply::Intent>& r) { return render_listing(intents_listing(r), GetFormat::Table); }
std::string render_tasks(const std::vector<reply::Task>& r) { return render_listing(tasks_listing(r), GetFormat::Table); }
std::string render_bindings(const reply::Bindings& r) { return render_listing(bindings_listing(r), GetFormat::Table); }

std::string render_status(const reply::Status& r) {
  std::ostringstream o;
  o << "node:               " << r.node << "\n"
    << "node generation:    " << r.node_generation << " (durable ceiling " << r.durable_generation
    << ", restart epoch " << r.restart_epoch << ")\n"
    << "state:              " << (r.loading ? "loading (initial sync not complete)" : "ready") << "\n"
    << "policies/claims:    " << r.policies << " policies, " << r.claims << " claims, " << r.tasks
    << " tasks\n"
    << "entries:            " << r.desired_entries << " desired, " << r.actual_entries << " in the pinned map, "
    << r.pending_ops << " pending\n"
    << "pin root:           " << or_dash(r.pin_root) << "\n";
  // Pins deleted or replaced under the daemon and pinned again (spec/daemon.md).
  if (r.pins_restored > 0 || !r.pin_repair.empty())
    o << "pins restored:      " << r.pins_restored << " (last: " << or_dash(r.pin_repair) << ")\n";
  o << "scheduler:          " << (r.scheduler_enforcing ? "enforcing" : "NOT enforcing")
    << (r.scheduler_state.empty() ? "" : " (sched_ext state: " + r.scheduler_state + ")") << "\n";
  if (!r.scheduler_message.empty()) o << "                    " << r.scheduler_message << "\n";
  if (!r.scheduler_exit_reason.empty()) o << "scheduler exit:     " << r.scheduler_exit_reason << "\n";
  if (!r.activity.empty()) o << "roles from activity: " << r.activity << "\n";
  o << "state digest:       " << or_dash(r.state_digest) << "\n";
  if (r.violations.empty()) {
    o << "invariants:         INV-1..INV-8 hold\n";
  } else {
    for (const auto& v : r.violations) o << "VIOLATION:          " << terminal_text(v) << "\n";
  }
  return o.str();
}

std::string render_explain(uint32_t tid, const reply::Explain& r) {
  if (!r.found || !r.lineage)  // a thread of a policy's process without an entry may still have a proposal
    return "tid " + std::to_string(tid) + ": no policy entry (no live lineage)\n" + explain_proposal_lines(r);
  const auto& l = *r.lineage;
  const std::string cgroup = or_dash(terminal_text(l.cgroup));  // names are bytes (core/names.hpp)
  std::ostringstream o;
  o << "tid " << l.tid << " (start " << l.start << ", tgid " << l.tgid << ", comm '" << terminal_text(l.comm)
    << "')\n";
  if (!l.title.empty())
    o << "  title:    " << terminal_text(l.title) << " (process title, /proc/" << l.tgid << "/cmdline argv[0])\n";
  if (l.entry) o << "  entry:    " << entry_summary(*l.entry) << "\n";
  if (r.inherited)  // the scheduler's count (issue 43 item 3)
    o << "  boost:    boost inherited from tid " << r.inherited->from_tid << " (depth " << r.inherited->depth
      << "; " << r.inherited->runs << " run" << (r.inherited->runs == 1 ? "" : "s") << " boosted as a wakee)\n";
  for (const auto& c : l.claims) o << "  claim:    " << c.uid << " generation " << c.generation << "\n";
  if (!l.pod_uid.empty()) o << "  pod:      " << l.pod_uid << "\n";
  o << "  cgroup:   " << cgroup << "\n"
    << "  policy:   " << policy_kind_name(l.policy_kind) << "/" << l.policy << " generation "
    << l.policy_generation << (l.role.empty() ? "" : ", role " + l.role) << "\n"
    << "  strategy: " << l.strategy << "\n"
    << "  lineage:  ";
  for (const auto& c : l.claims) o << "claim " << c.uid << "@" << c.generation << " -> ";
  if (!l.pod_uid.empty()) o << "pod " << l.pod_uid << " -> ";
  o << "cgroup " << cgroup << " -> task " << l.tid << " -> ";
  if (!l.role_source.empty()) o << l.role_source << " -> ";  // "registered role decode"
  o << policy_kind_name(l.policy_kind)
    << "/" << l.policy << "@" << l.policy_generation << " (" << l.strategy << ")\n";
  o << explain_controller_lines(r);  // the controller acting on it (decision_tables.hpp)
  o << explain_proposal_lines(r);    // the role proposed for it from activity (decision_tables.hpp)
  return o.str();
}

std::string render_preview(const reply::Preview& r) {
  std::ostringstream o;
  o << "Preview of " << or_dash(r.policy) << " at policy generation " << r.policy_generation
    << " (node generation " << r.node_generation << "; read-only, nothing was written)\n";
  if (r.matched.empty()) {
    o << "No task matches.\n";
  } else {
    TextTable t({"TID", "TGID", "START", "COMM", "TITLE", "STRATEGY", "INTENDED", "ACTUAL"});
    for (const auto& m : r.matched)
      t.add({std::to_string(m.tid), std::to_string(m.tgid), std::to_string(m.start), m.comm,
             or_dash(m.title), m.strategy,
             m.intended ? entry_summary(*m.intended) : "(loses a conflict)",
             m.actual ? entry_summary(*m.actual) : "(not in the map)"});
    o << t.render();
    for (const auto& m : r.matched)  // how a DRA task role reached the thread (issue #14)
      if (!m.role.empty())
        o << "role: tid " << m.tid << " " << m.role << " (" << (m.role_source.empty() ? "selector patterns" : m.role_source)
          << ")\n";
  }
  for (const auto& c : r.conflicts)
    o << "conflict: tid " << c.tid << ": " << c.winner << " wins over " << join(c.losers) << " (" << c.rule
      << ")\n";
  o << preview_proposal_lines(r);  // roles proposed for its threads from activity (decision_tables.hpp)
  o << warnings_block(r.warnings);
  if (r.acknowledged)
    o << "Acknowledged: " << r.policy << " may go live at generation " << r.policy_generation
      << " (requirePreview).\n";
  return o.str();
}

std::string render_upsert(const std::string& ref, const reply::Upsert& r) {
  std::ostringstream o;
  if (r.ignored) {
    // The daemon's message usually names the policy already.
    if (r.message.rfind(ref, 0) == 0) o << r.message << "\n";
    else o << ref << " unchanged: " << or_dash(r.message) << "\n";
  } else {
    o << ref << " applied at generation " << r.policy_generation << " (node generation " << r.node_generation
      << ")";
    if (r.intent) {
      const auto& i = *r.intent;
      o << ": intent " << intent_state_name(i.state) << ", " << i.matched_tasks << " tasks, "
        << i.applied_entries << " entries";
      if (!i.reason.empty()) o << " (" << i.reason << ")";
    }
    o << "\n";
  }
  o << warnings_block(r.warnings);
  return o.str();
}

std::string render_delete(const std::string& ref, const reply::Delete& r) {
  if (r.ignored) return ref + " not deleted: " + or_dash(r.message) + "\n";
  return ref + " deleted (node generation " + std::to_string(r.node_generation) + ")\n";
}

std::string render_change(const reply::Change& e) {
  std::ostringstream o;
  o << "generation " << e.node_generation << "  " << or_dash(e.event_kind);
  if (!e.changed_tids.empty()) {
    std::vector<std::string> tids;
    for (uint32_t t : e.changed_tids) tids.push_back(std::to_string(t));
    o << "  tids " << join(tids);
  }
  for (const auto& i : e.intents)
    o << "  " << policy_kind_name(i.kind) << "/" << i.policy << "@" << i.policy_generation << " "
      << intent_state_name(i.state);
  o << "\n";
  return o.str();
}

std::string render_intent_transitions(const reply::Change& e, std::map<std::string, node::IntentState>& last) {
  std::ostringstream o;
  for (const auto& i : e.intents) {
    const std::string ref = policy_kind_name(i.kind) + "/" + i.policy;
    auto it = last.find(ref);
    o << "  intent " << ref << "@" << i.policy_generation << ": "
      << (it == last.end() ? std::string("New") : intent_state_name(it->second)) << " -> " << intent_state_name(i.state);
    if (!i.reason.empty()) o << " (" << i.reason << ")";
    o << "\n";
    last[ref] = i.state;
  }
  return o.str();
}

}  // namespace c2c::cli
