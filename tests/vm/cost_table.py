#!/usr/bin/env python3
"""The scheduler's cost per callback from a `run-scenarios.sh --mode cost` run: per task shape and
scheduler object (base, new), the median over the rounds of each callback's ns per call, the BPF
time per context switch of the probe (every callback's time over the window, whoever it ran for,
divided by the probe's switches) and the probe's run delay.

    cost_table.py RESULTS.jsonl        # the C2C-RESULT lines of the run (run-scenarios writes them)
"""
import json
import statistics
import sys

SHAPES = ["none", "class", "boosted", "placed"]
CALLBACKS = ["select_cpu", "enqueue", "dispatch", "running", "stopping", "tick"]
COLUMNS = ["bpf_ns_per_switch"] + CALLBACKS + ["enqueue_calls", "run_delay_p50_us", "run_delay_p99_us"]


def per_call(program):
    """ns per call of one program's {ns, runs} over the window; None when it did not run."""
    runs = (program or {}).get("runs") or 0
    return (program.get("ns") or 0) / runs if runs else None


def figures(result):
    """One cost line's figures: ns per call by callback, calls of enqueue, BPF ns per switch."""
    programs = result.get("programs") or {}
    switches = result.get("ctx_switches") or 0
    total_ns = sum(p.get("ns") or 0 for p in programs.values())
    out = {"bpf_ns_per_switch": total_ns / switches if switches else None}
    for cb in CALLBACKS:
        out[cb] = per_call(programs.get("c2c_" + cb))
    out["enqueue_calls"] = (programs.get("c2c_enqueue") or {}).get("runs")
    delay = result.get("run_delay") or {}
    out["run_delay_p50_us"] = delay.get("p50_us")
    out["run_delay_p99_us"] = delay.get("p99_us")
    return out


def table(results):
    """{(shape, object): {column: median over rounds}} of the cost lines among results."""
    rounds = {}
    for r in results:
        if r.get("scenario") != "cost":
            continue
        rounds.setdefault((r["shape"], r.get("object", "new")), []).append(figures(r))
    out = {}
    for key, rows in rounds.items():
        out[key] = {}
        for c in COLUMNS:
            values = [row[c] for row in rows if row[c] is not None]
            out[key][c] = statistics.median(values) if values else None
    return out


def render(tab):
    lines = ["| shape | object | " + " | ".join(COLUMNS) + " |", "|---|---|" + "---|" * len(COLUMNS)]
    for shape in SHAPES:
        for obj in ["base", "new"]:
            row = tab.get((shape, obj))
            if row is None:
                continue
            cells = ["-" if row[c] is None else f"{row[c]:.0f}" for c in COLUMNS]
            lines.append(f"| {shape} | {obj} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    results = []
    with open(argv[1]) as f:
        for line in f:
            line = line.strip()
            if line:
                results.append(json.loads(line))
    tab = table(results)
    if not tab:
        print("cost_table: no cost results in " + argv[1], file=sys.stderr)
        return 1
    print(render(tab))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
