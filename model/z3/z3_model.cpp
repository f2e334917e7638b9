// The transition relation and the invariants (model/README.md, "Z3"). Each event is written as
// "next-state expressions computed from the pre-state" and then equated field by field with the
// post-state, so every field an event does not mention keeps its value (the frame).
#include "z3_model.hpp"

#include <deque>
#include <sstream>
#include <stdexcept>

namespace c2c::z3m {

namespace {

const char* const kEntryFields[] = {"p", "s", "g", "al", "bo", "u", "m"};

std::vector<Field> make_fields() {
  std::vector<Field> f = {
      {"G", Sort::Int, "node generation"},
      {"epoch", Sort::Int, "restart epoch"},
      {"rg", Sort::Int, "generation right after the last restart"},
      {"loading", Sort::Bool, "after a restart, before SyncComplete"},
      {"observed", Sort::Bool, "the core's view A was refreshed from the map since the restart"},
      {"now", Sort::Int, "CLOCK_BOOTTIME ns (an input)"},
      {"pl", Sort::Bool, "w's policy exists"},
      {"pg", Sort::Int, "policy generation"},
      {"phw", Sort::Int, "policy high-water mark (tombstones included)"},
      {"prev", Sort::Int, "previewed policy generation (-1: none)"},
      {"preq", Sort::Bool, "policy requires a preview"},
      {"pnode", Sort::Bool, "node-level policy (no pod or claim in the lineage)"},
      {"pboost", Sort::Bool, "policy boosts w's class"},
      {"pmax", Sort::Int, "policy maxBoostDuration ns"},
      {"tl", Sort::Bool, "task running as TID w is observed"},
      {"ts", Sort::Int, "its start (clock ticks)"},
      {"tep", Sort::Int, "epoch of the task's observation"},
      {"tenv", Sort::Cpus, "its cpuset envelope"},
      {"tenvk", Sort::Bool, "the envelope is known"},
      {"tb", Sort::Bool, "the task is in a bound pod that lists w's claim"},
      {"pep", Sort::Int, "epoch of the pod's observation"},
      {"cl", Sort::Bool, "w's claim is allocated"},
      {"cg", Sort::Int, "claim generation"},
      {"chw", Sort::Int, "claim high-water mark (tombstones included)"},
      {"cep", Sort::Int, "epoch of the claim's observation"},
      {"ccpu", Sort::Cpus, "CPUs the claim allocated"},
      {"ccpuk", Sort::Bool, "the claim allocated CPUs"},
  };
  // Entries: D (desired), A (core's view of the map), B (the map), P (applier snapshot).
  for (const char* e : {"d", "a", "b", "p"}) {
    for (const char* x : kEntryFields) {
      std::string n = std::string(e) + "_" + x;
      Sort s = Sort::Int;
      if (std::string(x) == "p" || std::string(x) == "bo") s = Sort::Bool;
      if (std::string(x) == "al") s = Sort::Cpus;
      static std::deque<std::string> names;  // Field holds const char*: a deque never moves them
      names.push_back(n);
      f.push_back({names.back().c_str(), s, "entry field"});
    }
  }
  f.push_back({"d_cg", Sort::Int, "D lineage: claim generation"});
  f.push_back({"d_pg", Sort::Int, "D lineage: policy generation"});
  f.push_back({"d_ep", Sort::Int, "D lineage: restart epoch"});
  f.push_back({"d_chg", Sort::Int, "ghost: generation of the last change of D[w], removal included"});
  f.push_back({"b_max", Sort::Int, "ghost: highest generation of any op applied to B[w]"});
  f.push_back({"p_has", Sort::Bool, "the applier holds a snapshot of w"});
  f.push_back({"p_chg", Sort::Int, "D[w]'s change generation when snapshotted"});
  return f;
}

z3::sort sort_of(z3::context& c, Sort s) {
  switch (s) {
    case Sort::Bool: return c.bool_sort();
    case Sort::Int: return c.int_sort();
    case Sort::Cpus: return c.bv_sort(cpu_bits());
  }
  throw std::logic_error("sort");
}

using z3::ite;

// An entry's value fields (what equality of kernel-map values compares).
const char* const kValueFields[] = {"s", "g", "al", "bo", "u", "m"};

z3::expr entry_eq(const State& x, const char* ex, const State& y, const char* ey) {
  auto f = [](const char* e, const char* n) { return std::string(e) + "_" + n; };
  z3::expr vals = x.v.begin()->second.ctx().bool_val(true);
  for (const char* n : kValueFields) vals = vals && x[f(ex, n)] == y[f(ey, n)];
  return x[f(ex, "p")] == y[f(ey, "p")] && z3::implies(x[f(ex, "p")], vals);
}

// Copies entry `from` of state `src` into entry `to` of `dst` (next-state expressions).
void copy_entry(State& dst, const char* to, const State& src, const char* from) {
  for (const char* n : kEntryFields) dst[std::string(to) + "_" + n] = src[std::string(from) + "_" + n];
}

// Next-state where `accepted` selects between the event's effects and "nothing changes".
State merge(const z3::expr& accepted, const State& eff, const State& s) {
  State n = s;
  for (auto& [k, e] : n.v) e = ite(accepted, eff[k], s[k]);
  return n;
}

z3::expr subset(const z3::expr& a, const z3::expr& b) { return (a & ~b) == a.ctx().bv_val(0, cpu_bits()); }

// Re-derives D[w] after the observations in `s1` changed (src/core/derive.cpp), when `hit`;
// bumps G once when D[w] or (per `other`) another key changed.
State rederive(const State& s1, const z3::expr& hit, const z3::expr& other, const Options& o,
               bool start_compare = true) {
  z3::context& c = s1["G"].ctx();
  const z3::expr zero = c.bv_val(0, cpu_bits());
  const z3::expr& tenv = s1["tenv"];
  const z3::expr& ccpu = s1["ccpu"];
  const z3::expr tenvk = s1["tenvk"], ccpuk = s1["ccpuk"], pnode = s1["pnode"];

  // Allowed CPUs: the envelope, narrowed to the claim's CPUs for DRA policies (INV-6).
  z3::expr dra_allowed = o.mutant == Mutant::SkipCpusetIntersection
                             ? ite(ccpuk, ccpu, ite(tenvk, tenv, zero))
                             : ite(ccpuk, ite(tenvk, tenv & ccpu, ccpu), ite(tenvk, tenv, zero));
  z3::expr allowed = ite(pnode, ite(tenvk, tenv, zero), dra_allowed);
  z3::expr has_allowed = ite(pnode, tenvk, tenvk || ccpuk);

  z3::expr elig = s1["tl"] && s1["pl"] && (!s1["preq"] || s1["prev"] == s1["pg"]) &&
                  (pnode || (s1["tb"] && s1["cl"])) && !(has_allowed && allowed == zero);

  // A boost lease, once granted, runs to its deadline; an unchanged boost of the same task keeps
  // it (a task that reuses the TID starts a new lease).
  z3::expr keep = s1["d_p"] && s1["d_bo"] && s1["d_s"] == s1["ts"] && s1["d_m"] == s1["pmax"] && s1["d_u"] > s1["now"];
  z3::expr n_s = s1["ts"];
  z3::expr n_bo = s1["pboost"];
  z3::expr n_m = ite(s1["pboost"], s1["pmax"], c.int_val(0));
  z3::expr n_u = ite(s1["pboost"], ite(keep, s1["d_u"], s1["now"] + s1["pmax"]), c.int_val(0));
  z3::expr n_cg = ite(pnode, c.int_val(0), s1["cg"]);

  z3::expr same = s1["d_p"] && s1["d_al"] == allowed && s1["d_bo"] == n_bo && s1["d_u"] == n_u &&
                  s1["d_m"] == n_m && s1["d_cg"] == n_cg && s1["d_pg"] == s1["pg"] && s1["d_ep"] == s1["epoch"];
  if (start_compare) same = same && s1["d_s"] == n_s;

  z3::expr changed = hit && ((elig && !same) || (!elig && s1["d_p"]));
  State n = s1;
  n["G"] = s1["G"] + ite(changed || other, c.int_val(1), c.int_val(0));
  const z3::expr& g = n["G"];
  n["d_p"] = ite(changed, elig, s1["d_p"]);
  n["d_s"] = ite(changed && elig, n_s, s1["d_s"]);
  n["d_g"] = ite(changed && elig, g, s1["d_g"]);
  n["d_al"] = ite(changed && elig, allowed, s1["d_al"]);
  n["d_bo"] = ite(changed && elig, n_bo, s1["d_bo"]);
  n["d_u"] = ite(changed && elig, n_u, s1["d_u"]);
  n["d_m"] = ite(changed && elig, n_m, s1["d_m"]);
  n["d_cg"] = ite(changed && elig, n_cg, s1["d_cg"]);
  n["d_pg"] = ite(changed && elig, s1["pg"], s1["d_pg"]);
  n["d_ep"] = ite(changed && elig, s1["epoch"], s1["d_ep"]);
  n["d_chg"] = ite(changed, g, s1["d_chg"]);
  return n;
}

// DaemonRestart's effects on state `s` (src/core/apply_daemon.cpp): observed state cleared, durable
// state kept, G := max(persisted or G, highest actual) + 1, epoch + 1, loading.
State restart(const State& s, const Params& p, const Options& o) {
  z3::context& c = s["G"].ctx();
  State n = s;
  z3::expr base = ite(p["persisted"] == 0, s["G"], p["persisted"]);
  n["G"] = o.mutant == Mutant::ReuseGenerationOnRestart ? base : z3::max(base, p["hiA"]) + 1;
  n["epoch"] = s["epoch"] + 1;
  n["rg"] = n["G"];
  n["loading"] = c.bool_val(true);
  n["observed"] = c.bool_val(false);
  n["tl"] = c.bool_val(false);
  n["tb"] = c.bool_val(false);
  n["cl"] = c.bool_val(false);
  if (o.mutant != Mutant::ResurrectOnRestart) {
    n["d_p"] = c.bool_val(false);
    n["d_chg"] = n["G"];
  }
  n["p_has"] = c.bool_val(false);  // the applier's snapshot dies with the process
  return n;
}

// Guards on restart parameters: hiA is the highest generation in the core's view of the map.
z3::expr restart_assumptions(const State& s, const Params& p, const Options& o) {
  z3::expr a = p["hiA"] >= 0 && p["hiA"] <= s["G"] && z3::implies(s["a_p"], p["hiA"] >= s["a_g"]) &&
               p["persisted"] >= 0;
  if (o.assume_persisted) a = a && (p["persisted"] == 0 || p["persisted"] >= s["G"]);
  return a;
}

}  // namespace

namespace {
unsigned g_cpu_bits = 8;
}
unsigned cpu_bits() { return g_cpu_bits; }
void set_cpu_bits(unsigned bits) {
  if (bits == 0 || bits > kFullCpuBits) throw std::invalid_argument("cpu bits must be in 1..256");
  g_cpu_bits = bits;
}

const std::vector<Field>& fields() {
  static const std::vector<Field> f = make_fields();
  return f;
}

const z3::expr& State::operator[](const std::string& f) const {
  auto it = v.find(f);
  if (it == v.end()) throw std::out_of_range("z3m::State: no field " + f);
  return it->second;
}
z3::expr& State::operator[](const std::string& f) {
  auto it = v.find(f);
  if (it == v.end()) throw std::out_of_range("z3m::State: no field " + f);
  return it->second;
}

State fresh_state(z3::context& c, const std::string& prefix) {
  State s;
  for (const Field& f : fields()) s.v.emplace(f.name, c.constant((prefix + f.name).c_str(), sort_of(c, f.sort)));
  return s;
}

z3::expr same_state(const State& a, const State& b) {
  z3::expr e = a.v.begin()->second.ctx().bool_val(true);
  for (const auto& [k, x] : a.v) e = e && x == b[k];
  return e;
}

const z3::expr& Params::operator[](const std::string& f) const {
  auto it = v.find(f);
  if (it == v.end()) throw std::out_of_range("z3m::Params: no field " + f);
  return it->second;
}

Params fresh_params(z3::context& c, const std::string& prefix) {
  Params p;
  auto add = [&](const char* n, const z3::sort& s) { p.v.emplace(n, c.constant((prefix + n).c_str(), s)); };
  add("hit", c.bool_sort());      // the event re-derives w
  add("other", c.bool_sort());    // the event changed some other key (G bumps)
  add("g", c.int_sort());         // a claim or policy generation
  add("start", c.int_sort());     // a task start
  add("cpus", c.bv_sort(cpu_bits()));
  add("cpusk", c.bool_sort());
  add("inpod", c.bool_sort());    // a pod binding / the task's cgroup lies in w's pod
  add("t", c.int_sort());         // TimeAdvance.now
  add("defer", c.bool_sort());    // a bounded TimeAdvance leaves w's due lease for a later step
  add("preq", c.bool_sort());
  add("pnode", c.bool_sort());
  add("pboost", c.bool_sort());
  add("pmax", c.int_sort());
  add("persisted", c.int_sort()); // DaemonRestart.persisted_generation
  add("hiA", c.int_sort());       // highest generation in the core's view of the map
  return p;
}

const std::vector<Event>& all_events() {
  static const std::vector<Event> e = {
      Event::ClaimUpsert,  Event::ClaimDealloc, Event::PodBound,     Event::PodRemoved,     Event::TaskSeen,
      Event::TaskExited,   Event::PolicyUpsert, Event::PolicyDelete, Event::PreviewAck,     Event::TimeAdvance,
      Event::DaemonRestart, Event::SyncComplete, Event::BpfObserved, Event::BpfSynced,     Event::MirrorSnapshot,
      Event::MirrorWrite,  Event::CrashMidApply};
  return e;
}

const char* to_string(Event e) {
  switch (e) {
    case Event::ClaimUpsert: return "claim_upsert";
    case Event::ClaimDealloc: return "claim_deallocated";
    case Event::PodBound: return "pod_bound";
    case Event::PodRemoved: return "pod_removed";
    case Event::TaskSeen: return "task_seen";
    case Event::TaskExited: return "task_exited";
    case Event::PolicyUpsert: return "policy_upsert";
    case Event::PolicyDelete: return "policy_delete";
    case Event::PreviewAck: return "preview_ack";
    case Event::TimeAdvance: return "time_advance";
    case Event::DaemonRestart: return "daemon_restart";
    case Event::SyncComplete: return "sync_complete";
    case Event::BpfObserved: return "bpf_observed";
    case Event::BpfSynced: return "bpf_synced";
    case Event::MirrorSnapshot: return "mirror_snapshot";
    case Event::MirrorWrite: return "mirror_write";
    case Event::CrashMidApply: return "crash_mid_apply";
  }
  return "?";
}

std::optional<Event> event_from_string(const std::string& s) {
  for (Event e : all_events())
    if (s == to_string(e)) return e;
  return std::nullopt;
}

const std::vector<Mutant>& all_mutants() {
  static const std::vector<Mutant> m = {
      Mutant::AcceptOlderGeneration, Mutant::SkipCpusetIntersection, Mutant::NeverExpireBoost,
      Mutant::ReuseGenerationOnRestart, Mutant::ForgetDeallocCleanup, Mutant::DropStartCompare,
      Mutant::ResurrectOnRestart, Mutant::BlindWrite, Mutant::PruneWhileLoading, Mutant::SkipPrune,
      Mutant::DeferRunOutLease};
  return m;
}

const char* to_string(Mutant m) {
  switch (m) {
    case Mutant::None: return "none";
    case Mutant::AcceptOlderGeneration: return "accept-older-generation";
    case Mutant::SkipCpusetIntersection: return "skip-cpuset-intersection";
    case Mutant::NeverExpireBoost: return "never-expire-boost";
    case Mutant::ReuseGenerationOnRestart: return "reuse-generation-on-restart";
    case Mutant::ForgetDeallocCleanup: return "forget-dealloc-cleanup";
    case Mutant::DropStartCompare: return "drop-start-compare";
    case Mutant::ResurrectOnRestart: return "resurrect-on-restart";
    case Mutant::BlindWrite: return "blind-write";
    case Mutant::PruneWhileLoading: return "prune-while-loading";
    case Mutant::SkipPrune: return "skip-prune";
    case Mutant::DeferRunOutLease: return "defer-run-out-lease";
  }
  return "?";
}

std::optional<Mutant> mutant_from_string(const std::string& s) {
  if (s == "none") return Mutant::None;
  for (Mutant m : all_mutants())
    if (s == to_string(m)) return m;
  return std::nullopt;
}

z3::expr transition(Event e, const State& s, const Params& p, const State& n, const Options& o) {
  Step st = step(e, s, p, o);
  return st.guard && same_state(n, st.next);
}

Step step(Event e, const State& s, const Params& p, const Options& o) {
  z3::context& c = s["G"].ctx();
  const z3::expr T = c.bool_val(true), F = c.bool_val(false);
  const z3::expr& hit = p["hit"];
  z3::expr guard = T;      // environment assumptions on the parameters
  z3::expr accepted = T;   // the core applies the event (else: Ignored/Invalid, nothing changes)
  State eff = s;

  // An event that does not re-derive w may still change other keys: only G moves at w.
  auto elsewhere = [&](const z3::expr& acc) {
    State x = s;
    x["G"] = s["G"] + ite(acc && p["other"], c.int_val(1), c.int_val(0));
    return x;
  };

  switch (e) {
    case Event::ClaimUpsert: {
      guard = p["g"] >= 1;
      z3::expr newer = o.mutant == Mutant::AcceptOlderGeneration ? T : p["g"] > s["chw"];
      State s1 = s;
      s1["cl"] = T;
      s1["cg"] = p["g"];
      s1["chw"] = p["g"];
      s1["cep"] = s["epoch"];
      s1["ccpu"] = p["cpus"];
      s1["ccpuk"] = p["cpusk"];
      State hit_eff = rederive(s1, T, p["other"], o);
      accepted = ite(hit, newer, T);
      eff = merge(hit, hit_eff, elsewhere(T));
      break;
    }
    case Event::ClaimDealloc: {
      guard = p["g"] >= 0;
      // Not allocated: only the tombstone moves (no re-derivation).
      State tomb = s;
      tomb["chw"] = z3::max(s["chw"], p["g"]);
      State s1 = s;
      s1["cl"] = F;
      s1["chw"] = z3::max(z3::max(s["chw"], p["g"]), s["cg"]);
      State live_eff = o.mutant == Mutant::ForgetDeallocCleanup ? elsewhere(T) : rederive(s1, T, p["other"], o);
      if (o.mutant == Mutant::ForgetDeallocCleanup) {
        live_eff["cl"] = F;
        live_eff["chw"] = s1["chw"];
      }
      z3::expr live_ok = s["cl"] && (p["g"] == 0 || p["g"] >= s["cg"]);
      accepted = ite(hit, live_ok || (!s["cl"] && p["g"] > s["chw"]), T);
      eff = merge(hit, merge(s["cl"], live_eff, tomb), elsewhere(T));
      break;
    }
    case Event::PodBound: {
      State s1 = s;
      s1["tb"] = s["tl"] && p["inpod"];
      s1["pep"] = s["epoch"];
      eff = merge(hit, rederive(s1, T, p["other"], o), elsewhere(T));
      break;
    }
    case Event::PodRemoved: {
      State s1 = s;
      s1["tb"] = F;
      eff = merge(hit, rederive(s1, T, p["other"], o), elsewhere(T));
      break;
    }
    case Event::TaskSeen: {
      guard = p["start"] >= 1;
      z3::expr unchanged = s["tl"] && p["start"] == s["ts"] && p["cpus"] == s["tenv"] &&
                           p["cpusk"] == s["tenvk"] && s["tep"] == s["epoch"] && s["tb"] == p["inpod"];
      z3::expr older = s["tl"] && p["start"] < s["ts"];
      State s1 = s;
      s1["tl"] = T;
      s1["ts"] = p["start"];
      s1["tep"] = s["epoch"];
      s1["tenv"] = p["cpus"];
      s1["tenvk"] = p["cpusk"];
      s1["tb"] = p["inpod"];
      s1["pep"] = ite(p["inpod"], s["epoch"], s["pep"]);
      bool compare = o.mutant != Mutant::DropStartCompare;
      accepted = ite(hit, !unchanged && !older, T);
      eff = merge(hit, rederive(s1, T, p["other"], o, compare), elsewhere(T));
      break;
    }
    case Event::TaskExited: {
      State s1 = s;
      s1["tl"] = F;
      s1["tb"] = F;
      accepted = ite(hit, s["tl"] && p["start"] == s["ts"], T);
      eff = merge(hit, rederive(s1, T, p["other"], o), elsewhere(T));
      break;
    }
    case Event::PolicyUpsert: {
      // hit: the event is about w's policy (its reach includes w by construction).
      guard = p["g"] >= 0 && p["pmax"] >= c.int_val(kMinBoostNs) && p["pmax"] <= c.int_val(kMaxBoostNs);
      z3::expr g = ite(p["g"] == 0, s["phw"] + 1, p["g"]);
      z3::expr newer = o.mutant == Mutant::AcceptOlderGeneration ? p["g"] >= 1 || p["g"] == 0
                                                                 : p["g"] == 0 || p["g"] > s["phw"];
      State s1 = s;
      s1["pl"] = T;
      s1["pg"] = g;
      s1["phw"] = g;
      s1["prev"] = ite(s["pl"], s["prev"], c.int_val(-1));
      s1["preq"] = p["preq"];
      s1["pnode"] = ite(s["pl"], s["pnode"], p["pnode"]);
      s1["pboost"] = p["pboost"];
      s1["pmax"] = p["pmax"];
      accepted = ite(hit, newer, T);
      eff = merge(hit, rederive(s1, T, p["other"], o), elsewhere(T));
      break;
    }
    case Event::PolicyDelete: {
      guard = p["g"] >= 0;
      State s1 = s;
      s1["pl"] = F;
      s1["phw"] = z3::max(z3::max(s["phw"], s["pg"]), p["g"]);
      accepted = ite(hit, s["pl"] && (p["g"] == 0 || p["g"] >= s["pg"]), T);
      eff = merge(hit, rederive(s1, T, p["other"], o), elsewhere(T));
      break;
    }
    case Event::PreviewAck: {
      State s1 = s;
      s1["prev"] = p["g"];
      accepted = ite(hit, s["pl"] && p["g"] == s["pg"] && s["prev"] != p["g"], T);
      eff = merge(hit, rederive(s1, s["preq"], p["other"], o), elsewhere(T));
      break;
    }
    case Event::TimeAdvance: {
      // Leases are renewed at half-life, and only for live entries (INV-8). A bounded step
      // (TimeAdvance.max_renewals) may leave a due lease for a later step, which lease depends on
      // the other keys (so the model leaves it free: "defer"), but never one that has run out.
      accepted = p["t"] > s["now"];
      z3::expr may_defer = o.mutant == Mutant::DeferRunOutLease ? p["defer"] : p["defer"] && s["d_u"] > p["t"];
      z3::expr due = o.mutant == Mutant::NeverExpireBoost
                         ? F
                         : s["d_p"] && s["d_bo"] && s["d_u"] - s["d_m"] / 2 <= p["t"] && !may_defer;
      eff["now"] = p["t"];
      eff["G"] = s["G"] + ite(due || p["other"], c.int_val(1), c.int_val(0));
      eff["d_u"] = ite(due, p["t"] + s["d_m"], s["d_u"]);
      eff["d_g"] = ite(due, eff["G"], s["d_g"]);
      eff["d_chg"] = ite(due, eff["G"], s["d_chg"]);
      break;
    }
    case Event::DaemonRestart: {
      guard = restart_assumptions(s, p, o);
      eff = restart(s, p, o);
      break;
    }
    case Event::SyncComplete: {
      // Daemon protocol: the map is read (BpfObserved) before the initial listing completes.
      guard = s["observed"];
      accepted = s["loading"];
      eff["loading"] = F;
      break;
    }
    case Event::BpfObserved: {
      copy_entry(eff, "a", s, "b");
      eff["observed"] = T;
      break;
    }
    case Event::BpfSynced: {
      // plan(D, A) at w, executed by the mirror on the map and recorded as the new A.
      z3::expr upd = s["d_p"] && !entry_eq(s, "d", s, "a");
      z3::expr may_prune = o.mutant == Mutant::PruneWhileLoading ? T : !s["loading"];
      z3::expr del = !s["d_p"] && s["a_p"] && may_prune;
      if (o.mutant == Mutant::SkipPrune) del = F;
      State x = s;
      copy_entry(x, "a", s, "d");
      State y = s;
      y["a_p"] = F;
      State a1 = merge(upd, x, merge(del, y, s));
      eff = a1;
      z3::expr op = upd || del;
      for (const char* f : kEntryFields) eff[std::string("b_") + f] = ite(op, a1[std::string("a_") + f], s[std::string("b_") + f]);
      eff["b_max"] = ite(op, z3::max(s["b_max"], s["d_chg"]), s["b_max"]);
      break;
    }
    case Event::MirrorSnapshot: {
      copy_entry(eff, "p", s, "d");
      eff["p_has"] = T;
      eff["p_chg"] = s["d_chg"];
      break;
    }
    case Event::MirrorWrite:
    case Event::CrashMidApply: {
      // Under the lock: compare-and-swap on D[w]'s change generation; deletes wait for loading.
      z3::expr cas = o.mutant == Mutant::BlindWrite ? T : s["d_chg"] == s["p_chg"];
      z3::expr write = s["p_has"] && cas && (s["p_p"] || !s["loading"]);
      State w1 = s;
      copy_entry(w1, "b", s, "p");
      w1["b_max"] = z3::max(s["b_max"], s["p_chg"]);
      if (e == Event::MirrorWrite) copy_entry(w1, "a", s, "p");
      w1["p_has"] = F;
      State w = merge(write, w1, s);
      w["p_has"] = F;
      if (e == Event::MirrorWrite) {
        eff = w;
      } else {
        guard = restart_assumptions(s, p, o);
        eff = restart(w, p, o);
      }
      break;
    }
  }
  return Step{guard, merge(accepted, eff, s)};
}

z3::expr type_ok(const State& s) {
  z3::context& c = s["G"].ctx();
  z3::expr e = c.bool_val(true);
  for (const Field& f : fields())
    if (f.sort == Sort::Int && std::string(f.name) != "prev") e = e && s[f.name] >= 0;
  e = e && s["prev"] >= -1;
  e = e && s["pmax"] >= c.int_val(kMinBoostNs) && s["pmax"] <= c.int_val(kMaxBoostNs);
  return e;
}

z3::expr initial(const State& s) {
  z3::context& c = s["G"].ctx();
  z3::expr e = c.bool_val(true);
  for (const Field& f : fields()) {
    const z3::expr& x = s[f.name];
    if (std::string(f.name) == "observed") continue;
    if (f.sort == Sort::Bool) e = e && !x;
    else if (f.sort == Sort::Int && std::string(f.name) != "prev" && std::string(f.name) != "pmax") e = e && x == 0;
  }
  // A fresh node: the (empty) map has been read.
  return e && s["observed"] && s["prev"] == -1;
}

const std::vector<Invariant>& invariants() {
  static const std::vector<Invariant> v = {
      {"INV-1", "a desired entry derives from w's live claim at its current generation, through a bound pod"},
      {"INV-2", "a desired entry is for the live task with exactly this start"},
      {"INV-3", "generations never go back: high-water marks, lineage, and the kernel map's last op"},
      {"INV-4", "the node generation is monotonic; every change carries a new one"},
      {"INV-5", "once loaded, the core's view equals the map (every kernel entry is explained or pending)"},
      {"INV-6", "allowed CPUs stay within the task's envelope and the claim's CPUs"},
      {"INV-7", "entries are derived after the last restart; nothing is pruned while loading"},
      {"INV-8", "a boost is a live lease no longer than maxBoostDuration"},
  };
  return v;
}

z3::expr inv_state(const std::string& id, const State& s) {
  z3::context& c = s["G"].ctx();
  const z3::expr& dp = s["d_p"];
  if (id == "INV-1")
    return z3::implies(dp && !s["pnode"], s["cl"] && s["tb"] && s["d_cg"] == s["cg"]);
  if (id == "INV-2") return z3::implies(dp, s["tl"] && s["d_s"] == s["ts"]);
  if (id == "INV-3")
    return z3::implies(s["cl"], s["cg"] == s["chw"]) && z3::implies(s["pl"], s["pg"] == s["phw"]) &&
           z3::implies(dp, s["pl"] && s["d_pg"] == s["pg"] && (!s["preq"] || s["prev"] == s["pg"])) &&
           z3::implies(s["b_p"], s["b_g"] == s["b_max"]) && s["b_max"] <= s["d_chg"] &&
           z3::implies(s["p_has"], s["p_chg"] <= s["d_chg"]) &&
           z3::implies(s["p_has"] && s["p_p"], s["p_g"] == s["p_chg"]);
  if (id == "INV-4")
    return z3::implies(dp, s["d_g"] > 0 && s["d_g"] == s["d_chg"]) && s["d_chg"] <= s["G"] &&
           z3::implies(s["a_p"], s["a_g"] <= s["G"]) && z3::implies(s["b_p"], s["b_g"] <= s["G"]) &&
           s["b_max"] <= s["G"] && s["rg"] <= s["G"];
  if (id == "INV-5")
    return z3::implies(s["observed"], entry_eq(s, "a", s, "b")) && z3::implies(!s["loading"], s["observed"]);
  if (id == "INV-6") {
    z3::expr in_env = z3::implies(s["tenvk"], subset(s["d_al"], s["tenv"]));
    z3::expr in_claim = z3::implies(!s["pnode"] && s["ccpuk"], subset(s["d_al"], s["ccpu"]));
    return z3::implies(dp, in_env && in_claim);
  }
  if (id == "INV-7")
    return z3::implies(dp, s["d_ep"] == s["epoch"] && s["d_g"] > s["rg"]) &&
           z3::implies(s["tl"], s["tep"] == s["epoch"]) && z3::implies(s["cl"], s["cep"] == s["epoch"]) &&
           z3::implies(s["tb"], s["pep"] == s["epoch"] && s["tl"]);
  if (id == "INV-8")
    return z3::implies(dp && s["d_bo"], s["now"] < s["d_u"] && s["d_u"] <= s["now"] + s["d_m"] &&
                                            s["d_m"] >= c.int_val(kMinBoostNs) && s["d_m"] <= c.int_val(kMaxBoostNs)) &&
           z3::implies(dp && !s["d_bo"], s["d_u"] == 0 && s["d_m"] == 0);
  throw std::invalid_argument("unknown invariant " + id);
}

z3::expr inv_step(const std::string& id, const State& s, const State& n, std::optional<Event> e) {
  z3::context& c = s["G"].ctx();
  if (id == "INV-5" && e == Event::BpfSynced)  // the plan leaves A = D (deletes wait while loading)
    return z3::implies(!n["loading"] || n["d_p"], entry_eq(n, "a", n, "d"));
  if (id == "INV-3")
    return n["chw"] >= s["chw"] && n["phw"] >= s["phw"] &&
           z3::implies(s["d_p"] && n["d_p"] && !s["pnode"], n["d_cg"] >= s["d_cg"]) &&
           z3::implies(s["d_p"] && n["d_p"], n["d_pg"] >= s["d_pg"]);
  if (id == "INV-4")
    return n["G"] >= s["G"] && z3::implies(n["epoch"] != s["epoch"], n["G"] > s["G"]) &&
           z3::implies(!entry_eq(s, "d", n, "d") && n["d_p"], n["d_g"] == n["G"] && n["G"] > s["G"]);
  if (id == "INV-7")  // nothing leaves the kernel map while loading
    return z3::implies(s["loading"] && n["loading"] && s["b_p"], n["b_p"]);
  return c.bool_val(true);
}

z3::expr all_inv_state(const State& s) {
  z3::expr e = s["G"].ctx().bool_val(true);
  for (const auto& i : invariants()) e = e && inv_state(i.id, s);
  return e;
}

namespace {

std::string value_text(const z3::model& m, const z3::expr& x, Sort sort) {
  z3::expr v = m.eval(x, true);
  if (sort == Sort::Bool) return v.is_true() ? "T" : "F";
  if (sort == Sort::Int) return v.to_string();
  // A CPU set: list the set bits (a model value is a numeral).
  std::string num = v.get_decimal_string(0);
  // Convert the decimal numeral to bits by repeated division (at most 256 bits).
  std::string out;
  std::vector<unsigned> bits;
  std::vector<int> digits;
  for (char ch : num) digits.push_back(ch - '0');
  unsigned bit = 0;
  auto is_zero = [&] {
    for (int d : digits)
      if (d) return false;
    return true;
  };
  while (!is_zero() && bit < cpu_bits()) {
    int rem = 0;
    for (int& d : digits) {
      int cur = rem * 10 + d;
      d = cur / 2;
      rem = cur % 2;
    }
    if (rem) bits.push_back(bit);
    ++bit;
  }
  // Kernel list format: "0-3,8".
  for (size_t i = 0; i < bits.size();) {
    size_t j = i;
    while (j + 1 < bits.size() && bits[j + 1] == bits[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(bits[i]);
    if (j > i) out += "-" + std::to_string(bits[j]);
    i = j + 1;
  }
  return "{" + out + "}";
}

}  // namespace

std::string describe(const z3::model& m, const State& s, const State* before) {
  std::ostringstream os;
  bool first = true;
  for (const Field& f : fields()) {
    // The value fields of an absent entry mean nothing: show only its presence bit.
    std::string name = f.name;
    if (name.size() > 2 && name[1] == '_' && name != "d_chg" && name != "b_max" && name != "p_has" &&
        name != "p_chg" && name.substr(2) != "p") {
      std::string present = name.substr(0, 2) + "p";
      if (m.eval(s[present], true).is_false() && (!before || m.eval((*before)[present], true).is_false())) continue;
    }
    std::string now = value_text(m, s[f.name], f.sort);
    if (before && value_text(m, (*before)[f.name], f.sort) == now) continue;
    os << (first ? "" : " ") << f.name << "=" << now;
    first = false;
  }
  return os.str();
}

std::string describe_params(const z3::model& m, const Params& p) {
  std::ostringstream os;
  bool first = true;
  for (const auto& [k, x] : p.v) {
    Sort s = x.is_bool() ? Sort::Bool : x.is_bv() ? Sort::Cpus : Sort::Int;
    os << (first ? "" : " ") << k << "=" << value_text(m, x, s);
    first = false;
  }
  return os.str();
}

}  // namespace c2c::z3m
