#!/usr/bin/env python3
"""Aggregates the raw 2x2 experiment runs (JSON lines from the guest) into the A/B/C/D table of
medians and checks the goals: p99 latency under full contention >= 10x lower with claim2core
than with the default scheduler (cell B vs A), background throughput loss <= 10 % (B vs A), and
hackbench with no policies within 5 % of the default scheduler."""
import json
import statistics
import sys


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main(path):
    runs, hb = [], {"off": [], "on": []}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if r.get("experiment") == "2x2":
                runs.append(r)
            elif r.get("experiment") == "hackbench":
                hb[r["sched"]].append(float(r["seconds"]))
    cells = {}
    for r in runs:
        cells.setdefault(r["cell"], []).append(r)
    cols = ["p50_us", "p99_us", "p999_us", "ctx_switches", "migrations"]
    print(f"{'cell':4} {'alloc':5} {'sched':5} {'n':>2} " + " ".join(f"{c:>12}" for c in cols)
          + f" {'sys_ctxsw':>10} {'bg_bogo_ops':>11} {'bg_ops_per_s':>12}")
    table = {}
    for cell in sorted(cells):
        rs = cells[cell]
        row = {c: med([r["probe"][c] for r in rs]) for c in cols}
        row["sys_ctx_switches"] = med([r["sys_ctx_switches"] for r in rs])
        row["bg_bogo_ops"] = med([r["bg_bogo_ops"] for r in rs])
        # Throughput: bogo ops per second of real time (older raw files: total bogo ops).
        row["bg_rate"] = med([r.get("bg_bogo_ops_per_s", r["bg_bogo_ops"]) for r in rs])
        table[cell] = row
        print(f"{cell:4} {rs[0]['alloc']:5} {rs[0]['sched']:5} {len(rs):>2} "
              + " ".join(f"{row[c]:>12.0f}" for c in cols)
              + f" {row['sys_ctx_switches']:>10.0f} {row['bg_bogo_ops']:>11.0f} {row['bg_rate']:>12.1f}")
    ok = True
    if "A" in table and "B" in table:
        a, b = table["A"], table["B"]
        ratio = a["p99_us"] / max(b["p99_us"], 1)
        loss = 1 - b["bg_rate"] / a["bg_rate"] if a["bg_rate"] else float("nan")
        g1, g2 = ratio >= 10, loss <= 0.10
        ok &= g1 and g2
        print(f"goal p99(A)/p99(B) >= 10: {ratio:.1f}x  {'MET' if g1 else 'NOT MET'}")
        print(f"goal background loss B vs A <= 10%: {loss * 100:.1f}%  {'MET' if g2 else 'NOT MET'}")
    if hb["off"] and hb["on"]:
        d = med(hb["on"]) / med(hb["off"]) - 1
        g3 = abs(d) <= 0.05 or d < 0
        ok &= g3
        print(f"hackbench median default {med(hb['off']):.3f}s, claim2core {med(hb['on']):.3f}s: "
              f"{d * 100:+.1f}%  {'MET' if g3 else 'NOT MET'} (goal: within 5%)")
    return 0 if table else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
