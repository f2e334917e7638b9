#!/usr/bin/env python3
"""Aggregates the raw 2x2 experiment runs (JSON lines from the guest) into the A/B/C/D table of
medians and checks the goals of cell B (claim2core) against cell A (default scheduler), both
under full contention in one shared CPU pool:

  - the latency-critical probe's p99 wakeup latency >= 10x lower. Wakeup latency is the
    scheduling delay, runnable -> running (schedstat run delay, kept by the core scheduler for
    every class). The probe's timer lateness (cyclictest's figure) is printed beside it: it also
    holds the time the timer interrupt takes to reach the guest, which under TCG is the
    emulator's, and cell C (the probe alone on its CPU) shows that floor;
  - background throughput loss <= 10 %: the background's CPU time while the probe runs
    (bogo ops per second over stress-ng's whole run, setup included, is printed too);
  - hackbench with no policies within 5 % of the default scheduler (faster is fine).
"""
import json
import statistics
import sys


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def run_delay(r, key):
    rd = r["probe"].get("run_delay")
    return rd[key] if rd else None


def bg_share(r):
    """CPUs' worth of CPU time the background received during the probe's window."""
    ticks, window = r.get("bg_cpu_ticks_window"), r.get("window_cs")
    return ticks / window if ticks is not None and window else None


COLUMNS = [  # (header, extractor, format)
    ("t_p50", lambda r: r["probe"]["p50_us"], "{:.0f}"),
    ("t_p99", lambda r: r["probe"]["p99_us"], "{:.0f}"),
    ("t_p99.9", lambda r: r["probe"]["p999_us"], "{:.0f}"),
    ("sd_p50", lambda r: run_delay(r, "p50_us"), "{:.1f}"),
    ("sd_p99", lambda r: run_delay(r, "p99_us"), "{:.1f}"),
    ("sd_p99.9", lambda r: run_delay(r, "p999_us"), "{:.1f}"),
    ("ctxsw", lambda r: r["probe"]["ctx_switches"], "{:.0f}"),
    ("migr", lambda r: r["probe"]["migrations"], "{:.0f}"),
    ("sys_ctxsw", lambda r: r["sys_ctx_switches"], "{:.0f}"),
    ("bg_ops/s", lambda r: r.get("bg_bogo_ops_per_s", r["bg_bogo_ops"]), "{:.1f}"),
    ("bg_cpus", bg_share, "{:.3f}"),
]


def ratio(a, b):
    return a / b if b and b == b and a == a else float("nan")


def load(lines):
    """The 2x2 runs and the hackbench times (by sched on/off) of raw JSON lines."""
    runs, hb = [], {"off": [], "on": []}
    for line in lines:
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if r.get("experiment") == "2x2":
            runs.append(r)
        elif r.get("experiment") == "hackbench":
            hb[r["sched"]].append(float(r["seconds"]))
    return runs, hb


def summarize(runs, hb):
    """Per-cell medians and the goals: {"table": {cell: row}, "goals": {name: (value, met)}}."""
    cells = {}
    for r in runs:
        cells.setdefault(r["cell"], []).append(r)
    table = {cell: {h: med([x(r) for r in rs]) for h, x, _ in COLUMNS} for cell, rs in sorted(cells.items())}
    goals = {}
    if "A" in table and "B" in table:
        a, b = table["A"], table["B"]
        sd = ratio(a["sd_p99"], b["sd_p99"])
        goals["p99_scheduling_delay_ratio"] = (sd, sd >= 10)
        loss = 1 - ratio(b["bg_cpus"], a["bg_cpus"])
        goals["background_loss"] = (loss, loss <= 0.10)
    if hb["off"] and hb["on"]:
        d = med(hb["on"]) / med(hb["off"]) - 1
        goals["hackbench_delta"] = (d, abs(d) <= 0.05 or d < 0)
    return {"cells": cells, "table": table, "goals": goals}


def main(path):
    with open(path) as f:
        runs, hb = load(f)
    s = summarize(runs, hb)
    table, goals = s["table"], s["goals"]
    print("t_*: timer lateness (us), sd_*: scheduling delay runnable->running (us), "
          "bg_cpus: background CPU time / window; medians over n runs")
    print(f"{'cell':4} {'alloc':5} {'sched':5} {'n':>2} " + " ".join(f"{h:>9}" for h, _, _ in COLUMNS))
    for cell, row in table.items():
        rs = s["cells"][cell]
        print(f"{cell:4} {rs[0]['alloc']:5} {rs[0]['sched']:5} {len(rs):>2} "
              + " ".join(f"{fmt.format(row[h]):>9}" for h, _, fmt in COLUMNS))
    if "p99_scheduling_delay_ratio" in goals:
        a, b = table["A"], table["B"]
        sd, g1 = goals["p99_scheduling_delay_ratio"]
        print(f"goal p99 wakeup latency (scheduling delay) A/B >= 10: {sd:.1f}x  {'MET' if g1 else 'NOT MET'}")
        print(f"     p99.9 scheduling delay A/B: {ratio(a['sd_p99.9'], b['sd_p99.9']):.1f}x; "
              f"p99 timer lateness A/B: {ratio(a['t_p99'], b['t_p99']):.1f}x "
              f"(the probe alone on its CPU, cell C: p99 {table.get('C', {}).get('t_p99', float('nan')):.0f} us)")
        loss, g2 = goals["background_loss"]
        print(f"goal background loss B vs A <= 10% (CPU time in the probe's window): {loss * 100:.1f}%  "
              f"{'MET' if g2 else 'NOT MET'}")
        print(f"     bogo ops per second over the whole run: {(1 - ratio(b['bg_ops/s'], a['bg_ops/s'])) * 100:.1f}% loss")
    if "hackbench_delta" in goals:
        d, g3 = goals["hackbench_delta"]
        print(f"goal hackbench (no policies) within 5%: default {med(hb['off']):.3f}s, claim2core "
              f"{med(hb['on']):.3f}s: {d * 100:+.1f}%  {'MET' if g3 else 'NOT MET'}")
    ok = bool(table) and len(goals) == 3 and all(met for _, met in goals.values())
    print(f"goals: {'ALL MET' if ok else 'NOT ALL MET'}")
    return 0 if table else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
