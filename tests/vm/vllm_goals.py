#!/usr/bin/env python3
"""The vLLM runs' goals (issue 43 items 4 and 5), judged from a `run-scenarios.sh --mode vllm`
run's results.jsonl: goals.json, goals.md, exit 1 when a goal is missed or cannot be judged.

This rule was written down and committed before any run's data was looked at with it; a change
after seeing data must be argued in the note and must not loosen a goal (issue 43, "Done when").

What is measured, per configuration and round (one window of one configuration; the guest runs
round 1 of every configuration, then round 2, ..., in one boot, so round r of two configurations
is a pair that the emulated machine's drift hit alike):
  - missed: the round's missed ticks over its ticks, both EngineCores pooled (sum of `missed` /
    sum of `ticks` of the round's DP ranks), in percent;
  - p99: the step latency p99 of the worse EngineCore of the round (max over the DP ranks of
    `latency.p99_us`), in ms. The worse, not a pooled one: it needs no per-step CSV, and it is
    the same statistic in every configuration;
  - bogo: stress-ng's bogo ops/s of the round (`stress_bogo_ops_per_s`).
A round counts only when every EngineCore of it has a result with `pass` true (every due tick
counted) and the stress-ng figure is positive where hogs ran. A comparison of two configurations
uses the rounds both have (paired by round number). MIN_ROUNDS = 6 paired rounds are needed; with
fewer the goal is "not judged" (and the run exits 1): six is the fewest for which the paired test
below can reach its threshold (its smallest p is 2^-n for n rounds: 1/64 < 0.05 / 2).

A goal is a set of comparisons "A's X against f x B's X" (f = 1 unless the goal names a factor).
Each comparison turns the rounds into paired excesses, positive when the round is on the wrong
side of the goal:
    lower is better (missed, p99):   e_r = A_r - (f * B_r * (1 + rel) + abs)
    higher is better (bogo):         e_r = f * B_r - A_r
where (rel, abs) is the allowance of a "no worse" comparison: ALLOW[metric] (missed: 10 % of
B's value + 0.5 percentage points, i.e. two ticks of 400; p99: 10 % + 1 ms, 2 % of the 50 ms
deadline; the 2x2's "no worse" allows 10 % + one emulated timer tick the same way). A goal that
states its own margin (bogo >= 90 %, <= half) and every "better" comparison get no allowance.

The test: the exact one-sided Wilcoxon signed-rank test of the paired excesses (zeros dropped,
tied |e| given their mid-rank; the p is the share of the 2^n sign assignments whose sum of
positive ranks is at least the observed one, counted exactly, not sampled). It is the paired
counterpart of the Mann-Whitney test the 2x2's judge uses (tests/vm/experiment_table.py): it
uses the pairing by round, and ranks keep one round of a host stall from deciding alone.

Two kinds of goal, by where the burden of proof lies:
  - "keep" goals (do no harm: no worse than, bogo >= 90 %): the goal is MISSED when a comparison
    shows harm: the median of its excesses is > 0 AND the test that they lie above 0 confirms it
    at family-wise FAMILY_ALPHA = 0.05 over the goal's comparisons (Holm's step-down). A
    comparison whose rounds cannot reach its Holm threshold whatever they hold (2^-n above
    FAMILY_ALPHA / m, e.g. six rounds against m = 4 comparisons; n counts the non-zero excesses,
    so ties to the threshold count against it) is decided by the median alone: too few rounds
    never make harm invisible. A median past 0 that the test does not confirm is named in the
    note, not failed. Holm because the goal is missed when any one comparison is: m tests at 0.05
    each would call harm where there is none up to 1 - 0.95^m of the time.
  - "win" goals (<= half of EEVDF, better than both peers): the goal is MET only when every
    comparison shows the win: the median of its excesses is <= 0 (< 0 for "better") AND the test
    that they lie below 0 rejects at FAMILY_ALPHA. No correction: every one must hold, so the
    chance of calling the goal met when one comparison is not won is at most FAMILY_ALPHA
    (an intersection-union test, Berger 1982). Rounds that cannot show it (too few or too tied:
    2^-n > FAMILY_ALPHA, e.g. both at 0 missed in most rounds) leave the goal missed: a win must
    be shown.

The goals (issue 43 item 4; the peers of item 5 where the run has them, `scx-lavd`, `scx-bpfland`):
  1. keep: claim2core (no policies) no worse than eevdf on missed and on p99 (m = 2);
  2. win:  adapter <= 0.5 x eevdf on missed and on p99;
  3. keep: adapter-workers-lc no worse than adapter on missed and on p99 (m = 2);
  4. keep: bogo >= 0.9 x eevdf's in every other configuration of the run with hogs (m = their
     number; eevdf-idle runs none; the `-base` builds are not judged);
  5. keep: claim2core no worse than the better peer on missed and on p99: on each metric the peer
     with the smaller median is the bar, and the family holds claim2core against every peer on
     both metrics (m = 2 x peers): which peer is better is read from the same data, and testing
     only against it would let a metric's chance of a false call reach twice the alpha (as the
     2x2's judge does for D against min(B, C));
  6. win:  adapter better than every peer on missed and on p99 (f = 1, no allowance, strict).
A goal whose configurations the run did not include is "not run" (no verdict, not a failure);
a run that judges no goal at all exits 1. A goal with some comparison short of MIN_ROUNDS
paired rounds is "not judged", and the run exits 1.
"""
import argparse
import functools
import json
import os
import statistics
import sys

# Holm's step-down is the 2x2 judge's (one copy; its seeded bugs are tests/mutants/judge.tsv's).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiment_table import holm_rejected  # noqa: E402

MIN_ROUNDS = 6
FAMILY_ALPHA = 0.05
# The allowance of a "no worse" comparison, per metric: (relative, absolute in the metric's unit).
ALLOW = {"missed": (0.10, 0.5), "p99": (0.10, 1.0)}
BOGO_SHARE = 0.90  # goal 4: every configuration keeps >= 90 % of EEVDF's background throughput
HALF = 0.5  # goal 2: the adapter at most half of EEVDF's missed steps and p99
PEERS = ("scx-lavd", "scx-bpfland")
HOGLESS = ("eevdf-idle",)  # configurations that run no stress-ng (goal 4 skips them)


def load_results(path):
    if not os.path.isfile(path):
        raise SystemExit(f"vllm_goals: --results {path}: no such file (did the guest run?)")
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"vllm_goals: {path} line {n} is not JSON ({e}): {line[:120]}")
    return out


def per_round(results):
    """{config: {round: {"missed": %, "p99": ms, "bogo": ops/s}}} of the rounds that count (the
    docstring), and {config: [why a round was left out]}."""
    rows, errors = {}, {}
    for r in results:
        if r.get("scenario") != "vllm":
            continue
        if "round" not in r or "dp_rank" not in r:
            # An error line (a configuration not measured: no daemon, not the intended threads, no
            # engine result) leaves its round without rows; its reason is kept for the notes.
            if r.get("config") and r.get("error"):
                errors.setdefault(r["config"], []).append(f"not measured: {r['error']}")
            continue
        for field in ("config", "ticks", "missed", "latency", "pass"):
            if field not in r:
                raise SystemExit(f"vllm_goals: a vllm result has no '{field}': {json.dumps(r)[:160]}")
        if not isinstance(r["latency"], dict) or "p99_us" not in r["latency"]:
            raise SystemExit(f"vllm_goals: a vllm result's 'latency' has no 'p99_us': {json.dumps(r)[:160]}")
        rows.setdefault(r["config"], {}).setdefault(int(r["round"]), []).append(r)
    ranks = max((len(rs) for byr in rows.values() for rs in byr.values()), default=0)
    out, dropped = {}, dict(errors)
    for cfg, byr in rows.items():
        for rnd, rs in sorted(byr.items()):
            why = None
            if len(rs) != ranks:
                why = f"round {rnd}: {len(rs)} of {ranks} EngineCores"
            elif not all(x.get("pass") is True for x in rs):
                why = f"round {rnd}: an EngineCore did not pass (a due tick not counted)"
            else:
                ticks = sum(x.get("ticks", 0) for x in rs)
                hogs = rs[0].get("stress_hogs", 0)
                bogo = rs[0].get("stress_bogo_ops_per_s", 0) or 0
                if ticks <= 0:
                    why = f"round {rnd}: no ticks"
                elif hogs > 0 and bogo <= 0:
                    why = f"round {rnd}: {hogs} hogs but no stress-ng figure"
                else:
                    out.setdefault(cfg, {})[rnd] = {
                        "missed": 100.0 * sum(x["missed"] for x in rs) / ticks,
                        "p99": max(x["latency"]["p99_us"] for x in rs) / 1000.0,
                        "bogo": float(bogo), "hogs": hogs}
            if why:
                dropped.setdefault(cfg, []).append(why)
    return out, dropped


# ---- the test --------------------------------------------------------------------------------


def signed_rank_p_greater(es):
    """Exact one-sided p of the Wilcoxon signed-rank test that the paired excesses lie above 0:
    zeros dropped, tied |e| at their mid-rank; the share of the 2^n sign assignments whose sum of
    positive ranks is at least the observed one. Counted with doubled ranks (integers)."""
    nz = [e for e in es if e != 0]
    n = len(nz)
    if n == 0:
        return 1.0
    ranks2 = doubled_midranks([abs(e) for e in nz])
    observed = sum(r for r, e in zip(ranks2, nz) if e > 0)
    counts = rank_sum_counts(tuple(sorted(ranks2)))
    return sum(c for w, c in counts.items() if w >= observed) / 2 ** n


def signed_rank_p_less(es):
    return signed_rank_p_greater([-e for e in es])


def doubled_midranks(values):
    """2 x the mid-rank of each value among values (ascending, ties share the mean rank)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + 1) + (j + 1)  # 2 x mean of ranks i+1..j+1
        i = j + 1
    return out


@functools.lru_cache(maxsize=None)
def rank_sum_counts(ranks2):
    """{sum of the positive (doubled) ranks: how many of the 2^n sign assignments give it}."""
    counts = {0: 1}
    for r in ranks2:
        nxt = dict(counts)
        for w, c in counts.items():
            nxt[w + r] = nxt.get(w + r, 0) + c
        counts = nxt
    return counts


def floor_p(es):
    """The smallest p the test can give for these excesses: 2^-n, n the non-zero ones."""
    return 2.0 ** -sum(1 for e in es if e != 0)


# ---- comparisons and goals -------------------------------------------------------------------


def compare(data, a, b, metric, factor=1.0, allow=(0.0, 0.0)):
    """One comparison "a's metric against factor x b's", paired by round: its excesses (the
    docstring), their median, both one-sided p and the test's floor."""
    ra, rb = data.get(a, {}), data.get(b, {})
    rounds = sorted(set(ra) & set(rb))
    av = [ra[r][metric] for r in rounds]
    bv = [rb[r][metric] for r in rounds]
    rel, ab = allow
    if metric == "bogo":  # higher is better
        es = [factor * y - x for x, y in zip(av, bv)]
    else:
        es = [x - (factor * y * (1 + rel) + ab) for x, y in zip(av, bv)]
    med = statistics.median(es) if es else float("nan")
    return {"a": a, "b": b, "metric": metric, "factor": factor, "allowance": {"relative": rel, "absolute": ab},
            "rounds": rounds, "a_values": av, "b_values": bv, "excess": es, "median_excess": med,
            "a_median": statistics.median(av) if av else None, "b_median": statistics.median(bv) if bv else None,
            "p_worse": signed_rank_p_greater(es), "p_better": signed_rank_p_less(es), "floor": floor_p(es)}


def judge_keep(comps, alpha=FAMILY_ALPHA):
    """A "keep" goal: (missed, notes). Missed when a comparison shows harm (the docstring)."""
    m = len(comps)
    confirmed = holm_rejected({i: c["p_worse"] for i, c in enumerate(comps)}, alpha)
    harm, notes = [], []
    for i, c in enumerate(comps):
        c["holm_threshold_floor"] = alpha / m
        if not c["median_excess"] > 0:
            c["decision"] = "kept"
            continue
        line = f"{c['a']} vs {c['b']} {c['metric']}: median excess {c['median_excess']:+.3g}"
        if c["floor"] > alpha / m:
            c["decision"] = "worse (median alone: the rounds cannot reach the test's threshold)"
            harm.append(f"{line} ({len(c['rounds'])} rounds, floor p {c['floor']:.4f} > {alpha}/{m})")
        elif i in confirmed:
            c["decision"] = "worse (confirmed)"
            harm.append(f"{line} (signed-rank p {c['p_worse']:.4f}, Holm over {m})")
        else:
            c["decision"] = "past the allowance, not confirmed"
            notes.append(f"{line} (p {c['p_worse']:.3f}: not confirmed)")
    return bool(harm), harm + notes


def judge_win(comps, strict, alpha=FAMILY_ALPHA):
    """A "win" goal: (met, notes). Met only when every comparison shows the win."""
    met, notes = True, []
    for c in comps:
        side = c["median_excess"] < 0 if strict else c["median_excess"] <= 0
        shown = side and c["p_better"] <= alpha
        c["decision"] = "won" if shown else "not shown"
        if not shown:
            met = False
            why = (f"floor p {c['floor']:.4f} > {alpha}: the rounds cannot show it" if c["floor"] > alpha
                   else f"median excess {c['median_excess']:+.3g}, signed-rank p {c['p_better']:.4f}")
            notes.append(f"{c['a']} vs {c['b']} {c['metric']}: not shown ({why})")
    return met, notes


def goal_specs(configs):
    """[(name, kind, strict, [(a, b, metric, factor, allow)], the configurations it needs, threshold
    text)] for the configurations this run has; a goal needing an absent one is listed as not run."""
    noworse = lambda a, b: [(a, b, m, 1.0, ALLOW[m]) for m in ("missed", "p99")]
    specs = [
        ("claim2core (no policies) no worse than EEVDF on missed steps and p99", "keep", False,
         noworse("claim2core", "eevdf"), ["claim2core", "eevdf"], "no worse (allowance 10 % + 0.5 pp / 1 ms)"),
        ("adapter <= half of EEVDF's missed steps and p99", "win", False,
         [("adapter", "eevdf", m, HALF, (0.0, 0.0)) for m in ("missed", "p99")], ["adapter", "eevdf"], "<= 0.5 x eevdf"),
        ("adapter-workers-lc no worse than adapter on missed steps and p99", "keep", False,
         noworse("adapter-workers-lc", "adapter"), ["adapter-workers-lc", "adapter"],
         "no worse (allowance 10 % + 0.5 pp / 1 ms)"),
    ]
    hogged = [c for c in sorted(configs) if c != "eevdf" and c not in HOGLESS and not c.endswith("-base")]
    specs.append(("stress-ng bogo ops >= 90 % of EEVDF's in every configuration", "keep", False,
                  [(c, "eevdf", "bogo", BOGO_SHARE, (0.0, 0.0)) for c in hogged], ["eevdf"] + hogged,
                  ">= 0.9 x eevdf"))
    peers = [p for p in PEERS if p in configs]
    specs.append(("claim2core (no policies) no worse than the better peer on missed steps and p99", "keep", False,
                  [x for p in peers for x in noworse("claim2core", p)], ["claim2core"] + (peers or list(PEERS)),
                  "no worse than the better of " + ", ".join(PEERS) + " (allowance 10 % + 0.5 pp / 1 ms)"))
    specs.append(("adapter better than every peer on missed steps and p99", "win", True,
                  [("adapter", p, m, 1.0, (0.0, 0.0)) for p in peers for m in ("missed", "p99")],
                  ["adapter"] + (peers or list(PEERS)), "< every peer (strict)"))
    return specs


TEST_KEEP = (f"exact one-sided Wilcoxon signed-rank of the paired per-round excesses; missed when a median "
             f"excess > 0 is confirmed at family-wise {FAMILY_ALPHA} (Holm over the goal's comparisons), or "
             f"by the median alone where the rounds cannot reach the threshold")
TEST_WIN = (f"exact one-sided Wilcoxon signed-rank of the paired per-round excesses; met only when every "
            f"comparison's median excess is on the goal's side and p <= {FAMILY_ALPHA} (intersection-union)")


def judge(results):
    """{"configurations": per-configuration medians, "goals": [...], "dropped": ...}."""
    data, dropped = per_round(results)
    configs = set(data) | set(dropped)
    goals = []
    for name, kind, strict, comps_spec, needs, threshold in goal_specs(configs):
        g = {"name": name, "kind": kind, "configurations": needs, "threshold": threshold,
             "test": TEST_KEEP if kind == "keep" else TEST_WIN, "comparisons": [], "notes": []}
        goals.append(g)
        absent = [c for c in needs if c not in configs]
        if absent or not comps_spec:
            g["verdict"] = "not run"
            g["notes"].append("not in this run: " + ", ".join(absent or needs))
            continue
        comps = [compare(data, a, b, m, f, al) for a, b, m, f, al in comps_spec]
        g["comparisons"] = comps
        g["measured"] = [f"{c['a']} {c['metric']} {fmt(c['a_median'])} vs {c['factor']:g} x {c['b']} {fmt(c['b_median'])}"
                         for c in comps]
        short = [c for c in comps if len(c["rounds"]) < MIN_ROUNDS]
        if short:
            g["verdict"] = "not judged"
            g["notes"].append("too few rounds: " + ", ".join(
                f"{c['a']} vs {c['b']} {c['metric']} {len(c['rounds'])} paired" for c in short) + f" (< {MIN_ROUNDS})")
            continue
        if kind == "keep":
            if "better peer" in name:
                missed, notes = judge_keep_better_peer(comps)
            else:
                missed, notes = judge_keep(comps)
            g["verdict"] = "missed" if missed else "met"
        else:
            met, notes = judge_win(comps, strict)
            g["verdict"] = "met" if met else "missed"
        g["notes"] += notes
    table = {c: {m: statistics.median([v[m] for v in rs.values()]) for m in ("missed", "p99", "bogo")} | {"rounds": len(rs)}
             for c, rs in data.items()}
    return {"configurations": table, "dropped_rounds": dropped, "goals": goals,
            "rule": {"min_rounds": MIN_ROUNDS, "family_alpha": FAMILY_ALPHA, "allowance": ALLOW,
                     "bogo_share": BOGO_SHARE, "half": HALF}}


def judge_keep_better_peer(comps):
    """Goal 5: on each metric only the comparison with the better peer (the smaller median) can
    miss the goal, while Holm's family holds every comparison (the docstring)."""
    best = {}
    for c in comps:
        if c["metric"] not in best or c["b_median"] < best[c["metric"]]["b_median"]:
            best[c["metric"]] = c
    missed, notes = judge_keep(comps)
    harm = [c for c in best.values() if c["decision"].startswith("worse")]
    for c in comps:
        if c not in best.values() and c["decision"].startswith("worse"):
            c["decision"] = "worse than a peer that is not the better one (not judged against)"
    return bool(harm), [n for n in notes if any(f"vs {c['b']} {c['metric']}:" in n for c in best.values())]


ORDER = ["eevdf-idle", "eevdf", "claim2core", "adapter", "adapter-workers-lc", "scx-lavd", "scx-bpfland"]


def fmt(v, nd=3):
    return "-" if v is None or v != v else f"{v:.{nd}g}"


def markdown(s, meta=None):
    lines = []
    if meta:
        p = meta.get("parameters", {})
        shape = ", ".join(f"{k} {v}" for k, v in p.items()) if isinstance(p, dict) else str(p)
        lines.append(f"vLLM runs of {meta.get('date', '?')} on {meta.get('commit', '?')}: "
                     f"{shape}; host load before {meta.get('host_load_before', '?')}, "
                     f"after {meta.get('host_load_after', '?')}")
        lines.append("")
    lines += ["| configuration | rounds | missed % (median of rounds) | p99 ms (worse EngineCore, median) | stress-ng bogo ops/s (median) |",
              "|---|---|---|---|---|"]
    key = lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c)
    for c in sorted(s["configurations"], key=key):
        row = s["configurations"][c]
        lines.append(f"| {c} | {row['rounds']} | {fmt(row['missed'])} | {fmt(row['p99'])} | {fmt(row['bogo'])} |")
    lines += ["", "| goal | verdict | measured (medians of rounds) | threshold | notes |", "|---|---|---|---|---|"]
    for g in s["goals"]:
        lines.append(f"| {g['name']} | **{g['verdict']}** | {'; '.join(g.get('measured', [])) or '-'} | "
                     f"{g['threshold']} | {'; '.join(g['notes']) or '-'} |")
    for c, why in sorted(s["dropped_rounds"].items()):
        lines.append(f"\n{c}: rounds left out: " + "; ".join(why))
    return "\n".join(lines) + "\n"


def exit_code(s):
    """0 when every goal that ran is met; 1 when one is missed or not judged, or none ran."""
    verdicts = [g["verdict"] for g in s["goals"]]
    if any(v in ("missed", "not judged") for v in verdicts):
        return 1
    return 0 if any(v == "met" for v in verdicts) else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", required=True, help="run-scenarios.sh --mode vllm --results FILE")
    ap.add_argument("--out", help="directory for goals.json and goals.md (default: print only)")
    ap.add_argument("--metadata", help="the run's metadata.json (vllm-experiment.sh), copied into goals.json")
    a = ap.parse_args(argv)
    meta = None
    if a.metadata:
        with open(a.metadata) as f:
            meta = json.load(f)
    s = judge(load_results(a.results))
    s["metadata"] = meta
    md = markdown(s, meta)
    print(md, end="")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "goals.json"), "w") as f:
            json.dump(s, f, indent=1, sort_keys=True)
        with open(os.path.join(a.out, "goals.md"), "w") as f:
            f.write(md)
    rc = exit_code(s)
    print(f"vllm_goals: {'every goal met' if rc == 0 else 'a goal missed or not judged'}"
          f" ({', '.join(g['verdict'] for g in s['goals'])})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
