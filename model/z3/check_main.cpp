// c2c-z3-check: proves INV-1..INV-8 inductive over every event of the core's transition
// (witness-key encoding, no quantifiers), then bounded-model-checks the node from an empty state.
//
//   c2c-z3-check [--mutant=NAME] [--expect-fail[=INV-n]] [--only=INV-n] [--bmc-depth=N]
//                [--bmc-events=e1,e2,...] [--no-scenarios] [--no-assume-persisted]
//
// Without --expect-fail the exit status is 0 only if the base case, every (invariant, event)
// induction step and the BMC hold, and every event is enabled somewhere (no vacuous proof).
// With --expect-fail (seeded bugs) it is 0 only if some check fails (for that invariant, if named).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>

#include "z3_model.hpp"

namespace {

using namespace c2c::z3m;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Args {
  Options opt;
  bool expect_fail = false;
  std::string expect_inv;
  int bmc_depth = 3;
  bool scenarios = true;
  std::string only;  // check the induction steps of this invariant only
  std::vector<Event> bmc_events = all_events();
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto val = [&](const char* k) { return s.substr(std::string(k).size()); };
    if (s.rfind("--mutant=", 0) == 0) {
      auto m = mutant_from_string(val("--mutant="));
      if (!m) {
        std::cerr << "c2c-z3-check: --mutant: unknown mutant '" << val("--mutant=") << "'; known:";
        for (Mutant x : all_mutants()) std::cerr << " " << to_string(x);
        std::cerr << "\n";
        return false;
      }
      a.opt.mutant = *m;
    } else if (s == "--expect-fail") {
      a.expect_fail = true;
    } else if (s.rfind("--expect-fail=", 0) == 0) {
      a.expect_fail = true;
      a.expect_inv = val("--expect-fail=");
    } else if (s.rfind("--bmc-depth=", 0) == 0) {
      try {
        a.bmc_depth = std::stoi(val("--bmc-depth="));
      } catch (...) {
        a.bmc_depth = -1;
      }
      if (a.bmc_depth < 0 || a.bmc_depth > 32) {
        std::cerr << "c2c-z3-check: --bmc-depth: expected 0..32\n";
        return false;
      }
    } else if (s.rfind("--bmc-events=", 0) == 0) {
      a.bmc_events.clear();
      std::string list = val("--bmc-events=") + ",";
      for (size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos; at = comma + 1) {
        auto e = event_from_string(list.substr(at, comma - at));
        if (!e) {
          std::cerr << "c2c-z3-check: --bmc-events: unknown event '" << list.substr(at, comma - at) << "'\n";
          return false;
        }
        a.bmc_events.push_back(*e);
      }
    } else if (s.rfind("--only=", 0) == 0) {
      a.only = val("--only=");
      bool known = false;
      for (const auto& inv : invariants()) known = known || inv.id == a.only;
      if (!known) {
        std::cerr << "c2c-z3-check: --only: unknown invariant '" << a.only << "' (INV-1..INV-8)\n";
        return false;
      }
    } else if (s == "--no-scenarios") {
      a.scenarios = false;
    } else if (s == "--no-assume-persisted") {
      a.opt.assume_persisted = false;
    } else {
      std::cerr << "c2c-z3-check: unknown argument '" << s << "'\n";
      return false;
    }
  }
  return true;
}

const char* verdict(z3::check_result r) {
  return r == z3::unsat ? "holds" : r == z3::sat ? "FAILS" : "UNKNOWN";
}


// Every interleaving of two threads' event sequences, each after a common prefix.
void interleavings(const std::vector<Event>& a, const std::vector<Event>& b, size_t i, size_t j,
                   std::vector<Event>& cur, std::vector<std::vector<Event>>& out) {
  if (i == a.size() && j == b.size()) {
    out.push_back(cur);
    return;
  }
  if (i < a.size()) {
    cur.push_back(a[i]);
    interleavings(a, b, i + 1, j, cur, out);
    cur.pop_back();
  }
  if (j < b.size()) {
    cur.push_back(b[j]);
    interleavings(a, b, i, j + 1, cur, out);
    cur.pop_back();
  }
}

// One straight-line path from the empty node with free parameters at every step: is any
// invariant violated at any step? States are expressions, so the solver searches parameters only.
// Returns the check result and prints the trace on a violation.
z3::check_result check_path(z3::context& c, const z3::params& sp, const Options& opt, const std::vector<Event>& seq,
                            std::set<std::string>& failed, bool progress_only = false) {
  z3::solver sol(c);
  sol.set(sp);
  std::vector<State> st;
  std::vector<Params> ps;
  st.push_back(fresh_state(c, "q0_"));
  sol.add(initial(st[0]) && type_ok(st[0]));
  z3::expr bad = c.bool_val(false);
  for (size_t i = 1; i <= seq.size(); ++i) {
    ps.push_back(fresh_params(c, "q" + std::to_string(i) + "_"));
    Step sk = step(seq[i - 1], st[i - 1], ps.back(), opt);
    sol.add(sk.guard);
    st.push_back(sk.next);
    for (const auto& inv : invariants())
      bad = bad || !(inv_state(inv.id, st[i]) && inv_step(inv.id, st[i - 1], st[i], seq[i - 1]));
  }
  if (progress_only) {
    // Feasibility instead of safety: every step of the path really changes the state.
    for (size_t i = 1; i < st.size(); ++i) sol.add(!same_state(st[i - 1], st[i]));
    return sol.check();
  }
  sol.add(bad);
  auto r = sol.check();
  if (r == z3::sat) {
    z3::model m = sol.get_model();
    std::printf("    VIOLATION on the path:\n");
    bool violated = false;
    for (size_t j = 1; j < st.size() && !violated; ++j) {  // up to the first violating step
      std::printf("    %zu. %-18s %s\n", j, to_string(seq[j - 1]), describe(m, st[j], &st[j - 1]).c_str());
      for (const auto& inv : invariants())
        if (m.eval(inv_state(inv.id, st[j]) && inv_step(inv.id, st[j - 1], st[j], seq[j - 1]), true).is_false()) {
          std::printf("       violated: %s (%s)\n", inv.id.c_str(), inv.what.c_str());
          failed.insert(inv.id);
          violated = true;
        }
    }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, args)) return 2;
  const Options& opt = args.opt;
  const auto t0 = Clock::now();

  z3::context c;
  z3::params sp(c);
  sp.set("timeout", 120000u);
  std::set<std::string> failed;  // invariants with a failing or unknown check
  bool incomplete = false;

  std::printf("c2c-z3-check: mutant=%s assume-persisted=%s\n", to_string(opt.mutant),
              opt.assume_persisted ? "yes" : "no");

  // ---- base case ----
  {
    State s = fresh_state(c, "s0_");
    for (const auto& inv : invariants()) {
      auto t = Clock::now();
      z3::solver sol(c);
      sol.set(sp);
      sol.add(initial(s) && type_ok(s) && !inv_state(inv.id, s));
      auto r = sol.check();
      std::printf("  base   %-6s %-18s %-7s %7.1f ms\n", inv.id.c_str(), "initial", verdict(r), ms_since(t));
      if (r != z3::unsat) failed.insert(inv.id), incomplete |= r == z3::unknown;
    }
  }

  // ---- every event is possible from some invariant state (the proofs are not vacuous) ----
  for (Event e : all_events()) {
    State s = fresh_state(c, "s_");
    State n = fresh_state(c, "n_");
    Params p = fresh_params(c, "p_");
    z3::solver sol(c);
    sol.set(sp);
    sol.add(type_ok(s) && all_inv_state(s) && transition(e, s, p, n, opt) && !same_state(s, n));
    auto r = sol.check();
    if (r != z3::sat) {
      std::printf("  event  %-18s cannot change any state: the checks below would be vacuous\n", to_string(e));
      failed.insert("vacuous");
    }
  }

  // ---- induction: Inv(s) /\ T_e(s, s') /\ not I(s') ----
  for (const auto& inv : invariants()) {
    if (!args.only.empty() && inv.id != args.only) continue;
    for (Event e : all_events()) {
      auto t = Clock::now();
      State s = fresh_state(c, "s_");
      State n = fresh_state(c, "n_");
      Params p = fresh_params(c, "p_");
      z3::solver sol(c);
      sol.set(sp);
      sol.add(type_ok(s) && all_inv_state(s) && transition(e, s, p, n, opt));
      sol.add(!(inv_state(inv.id, n) && inv_step(inv.id, s, n, e)));
      auto r = sol.check();
      std::printf("  step   %-6s %-18s %-7s %7.1f ms\n", inv.id.c_str(), to_string(e), verdict(r), ms_since(t));
      if (r == z3::sat) {
        failed.insert(inv.id);
        z3::model m = sol.get_model();
        std::printf("    counterexample to induction (%s on %s):\n", inv.id.c_str(), to_string(e));
        std::printf("      pre:    %s\n", describe(m, s).c_str());
        std::printf("      params: %s\n", describe_params(m, p).c_str());
        std::printf("      post:   %s (changed fields only)\n", describe(m, n, &s).c_str());
      } else if (r == z3::unknown) {
        failed.insert(inv.id);
        incomplete = true;
        std::printf("    solver: %s\n", sol.reason_unknown().c_str());
      }
    }
  }

  // ---- bounded model checking from the empty node ----
  if (args.bmc_depth > 0) {
    auto t = Clock::now();
    z3::solver sol(c);
    sol.set(sp);
    // States are expressions over the initial state and the per-step parameters (no fresh
    // constants and no frame equalities): the solver only searches the parameters.
    std::vector<State> st;
    std::vector<z3::expr> which;
    std::vector<Params> ps;
    st.push_back(fresh_state(c, "b0_"));
    sol.add(initial(st[0]) && type_ok(st[0]));
    int found = -1;
    for (int i = 1; i <= args.bmc_depth && found < 0; ++i) {
      std::string pre = "b" + std::to_string(i) + "_";
      ps.push_back(fresh_params(c, pre + "p_"));
      {
        // Small parameter domains (a bounded search anyway): generations, starts and times.
        const Params& q = ps.back();
        sol.add(q["g"] <= 8 && q["start"] <= 8 && q["persisted"] <= 16 && q["hiA"] <= 16 && q["t"] <= 64000000 &&
                q["pmax"] <= 16000000);
      }
      which.push_back(c.int_const((pre + "event").c_str()));
      const auto& evs = args.bmc_events;
      State next = st[i - 1];
      z3::expr guard = c.bool_val(false);
      for (size_t k = evs.size(); k-- > 0;) {
        Step sk = step(evs[k], st[i - 1], ps.back(), opt);
        z3::expr is_k = which.back() == static_cast<int>(k);
        guard = guard || (is_k && sk.guard);
        for (auto& [f, x] : next.v) x = k + 1 == evs.size() ? sk.next[f] : z3::ite(is_k, sk.next[f], x);
      }
      for (auto& [f, x] : next.v) x = x.simplify();
      st.push_back(next);
      sol.add(guard && which.back() >= 0 && which.back() < static_cast<int>(evs.size()));
      sol.push();
      z3::expr bad = c.bool_val(false);
      for (const auto& inv : invariants())
        bad = bad || !(inv_state(inv.id, st[i]) && inv_step(inv.id, st[i - 1], st[i]));
      sol.add(bad);
      auto td = Clock::now();
      auto r = sol.check();
      std::printf("  bmc    depth %d: %s (%.1f ms)\n", i, r == z3::sat ? "violation" : r == z3::unsat ? "clean" : "unknown",
                  ms_since(td));
      std::fflush(stdout);
      if (r == z3::sat) {
        found = i;
        z3::model m = sol.get_model();
        std::printf("  bmc    depth %d: VIOLATION\n", i);
        for (int j = 1; j <= i; ++j) {
          int k = m.eval(which[j - 1], true).get_numeral_int();
          std::printf("    %d. %-18s %s\n", j, to_string(args.bmc_events[k]), describe(m, st[j], &st[j - 1]).c_str());
        }
        for (const auto& inv : invariants()) {
          if (m.eval(inv_state(inv.id, st[i]) && inv_step(inv.id, st[i - 1], st[i]), true).is_false()) {
            std::printf("    violated: %s (%s)\n", inv.id.c_str(), inv.what.c_str());
            failed.insert(inv.id);
          }
        }
      } else if (r == z3::unknown) {
        incomplete = true;
        failed.insert("bmc");
        std::printf("  bmc    depth %d: UNKNOWN (%s)\n", i, sol.reason_unknown().c_str());
        break;
      }
      sol.pop();
    }
    if (found < 0 && !incomplete) {
      std::printf("  bmc    depth %d: no violation from the empty node (%.1f ms)\n", args.bmc_depth, ms_since(t));
    }
  }

  // ---- scenario BMC: every interleaving of the core's events with the applier's steps ----
  if (args.scenarios) {
    using E = Event;
    struct Scenario {
      const char* name;
      std::vector<Event> prefix, core, mirror;
    };
    const std::vector<Event> live = {E::PolicyUpsert, E::ClaimUpsert, E::PodBound, E::TaskSeen};
    const std::vector<Scenario> scenarios = {
        {"stale write racing a deallocation", live, {E::ClaimDealloc, E::BpfSynced, E::ClaimUpsert},
         {E::MirrorSnapshot, E::MirrorWrite}},
        {"stale write racing a TID reuse", live, {E::TaskSeen, E::BpfSynced}, {E::MirrorSnapshot, E::MirrorWrite}},
        {"restart in the middle of an apply",
         {E::PolicyUpsert, E::ClaimUpsert, E::PodBound, E::TaskSeen, E::BpfSynced},
         {E::ClaimDealloc, E::CrashMidApply, E::BpfObserved, E::SyncComplete, E::BpfSynced},
         {E::MirrorSnapshot, E::MirrorWrite}},
        {"relist after a restart",
         {E::PolicyUpsert, E::ClaimUpsert, E::PodBound, E::TaskSeen, E::BpfSynced, E::DaemonRestart},
         {E::ClaimUpsert, E::PodBound, E::TaskSeen, E::BpfObserved, E::SyncComplete, E::BpfSynced},
         {E::MirrorSnapshot, E::MirrorWrite}},
    };
    for (const auto& sc : scenarios) {
      auto t = Clock::now();
      std::vector<std::vector<Event>> paths;
      std::vector<Event> cur = sc.prefix;
      interleavings(sc.core, sc.mirror, 0, 0, cur, paths);
      size_t bad = 0, unknown = 0;
      for (const auto& path : paths) {
        auto r = check_path(c, sp, opt, path, failed);
        bad += r == z3::sat;
        unknown += r == z3::unknown;
        if (r != z3::unsat) break;
      }
      // Not vacuous: the core-first ordering can run with every step changing the state.
      bool feasible = check_path(c, sp, opt, paths.front(), failed, true) == z3::sat;
      std::printf("  bmc    %-36s depth %zu, %zu interleavings: %s%s (%.1f ms)\n", sc.name, paths[0].size(),
                  paths.size(), bad ? "VIOLATION" : unknown ? "UNKNOWN" : "no violation",
                  feasible ? "" : ", NOT FEASIBLE", ms_since(t));
      if (!feasible) failed.insert("bmc-vacuous");
      if (unknown) failed.insert("bmc"), incomplete = true;
    }
  }

  std::printf("c2c-z3-check: %s in %.1f ms\n", failed.empty() ? "all invariants hold" : "FAILED", ms_since(t0));
  if (!failed.empty()) {
    std::printf("  failing:");
    for (const auto& f : failed) std::printf(" %s", f.c_str());
    std::printf("\n");
  }

  if (!args.expect_fail) return failed.empty() ? 0 : 1;
  if (incomplete) {
    std::printf("c2c-z3-check: a check was inconclusive; a seeded bug must be caught by a definite counterexample\n");
    return 1;
  }
  if (failed.empty()) {
    std::printf("c2c-z3-check: expected the mutant to be caught, but every check passed\n");
    return 1;
  }
  if (!args.expect_inv.empty() && !failed.count(args.expect_inv)) {
    std::printf("c2c-z3-check: expected %s to fail\n", args.expect_inv.c_str());
    return 1;
  }
  std::printf("c2c-z3-check: mutant %s caught as expected\n", to_string(opt.mutant));
  return 0;
}
