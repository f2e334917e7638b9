#!/usr/bin/env python3
"""The vLLM runs' picture (issue 43 item 6): one CDF of step latency per configuration, every
round and EngineCore of the run pooled, from the per-step CSVs of `run-scenarios.sh --mode vllm
--samples-dir DIR` (vllm-<config>-r<round>-dp<rank>.csv, written by vllm_loop.cpp's samples_csv),
the deadline as a line, the run's metadata (vllm-experiment.sh's metadata.json) in the title and
each configuration's judged figures (goals.json) in its legend.

  vllm_picture.py --samples-dir DIR --out FILE.png [--metadata metadata.json] [--goals goals.json]

Skipped ticks have no latency and are not in the curve: the legend gives the missed share.
Prints one line per configuration (steps, rounds) and exits 1 when the directory holds no CSV.
"""
import argparse
import csv
import json
import os
import re
import sys
import textwrap

NAME = re.compile(r"^vllm-(?P<cfg>.+)-r(?P<round>\d+)-dp(?P<rank>\d+)\.csv$")
ORDER = ["eevdf-idle", "eevdf", "claim2core", "adapter", "adapter-workers-lc", "scx-lavd", "scx-bpfland"]


def load_steps(d):
    """{config: ([latency ms of every step], {rounds})} from the directory's per-step CSVs."""
    out = {}
    for f in sorted(os.listdir(d)):
        m = NAME.match(f)
        if not m:
            continue
        lat, rounds = out.setdefault(m["cfg"], ([], set()))
        rounds.add(int(m["round"]))
        with open(os.path.join(d, f), newline="") as fh:
            rows = csv.DictReader(fh)
            if rows.fieldnames is None or "latency_us" not in rows.fieldnames:
                raise SystemExit(f"vllm_picture: {f} has no latency_us column (header {rows.fieldnames})")
            for n, r in enumerate(rows, 2):
                try:
                    lat.append(float(r["latency_us"]) / 1000.0)
                except (TypeError, ValueError):
                    raise SystemExit(f"vllm_picture: {f} line {n}: latency_us is not a number: {r['latency_us']!r}")
    return out


def title_of(meta):
    if not meta:
        return "vLLM stand-in: step latency per configuration"
    p = meta.get("parameters", {})
    shape = ", ".join(f"{k} {v}" for k, v in p.items()) if isinstance(p, dict) else str(p)
    return (f"vLLM stand-in, step latency per configuration: {meta.get('date', '?')}, commit {meta.get('commit', '?')}\n"
            + "\n".join(textwrap.wrap(shape, 110)) + f"\nhost load before {meta.get('host_load_before', '?')}, after {meta.get('host_load_after', '?')}")


def draw(steps, out, meta=None, goals=None, deadline_ms=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 5.5))
    key = lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c)
    table = (goals or {}).get("configurations", {})
    for cfg in sorted(steps, key=key):
        xs = sorted(steps[cfg][0])
        if not xs:
            continue
        ys = [(i + 1) / len(xs) for i in range(len(xs))]
        label = f"{cfg} ({len(xs)} steps, {len(steps[cfg][1])} rounds"
        if cfg in table:
            t = table[cfg]
            label += f"; missed {t['missed']:.1f} %, p99 {t['p99']:.0f} ms (medians of rounds)"
        ax.step(xs, ys, where="post", label=label + ")")
    if deadline_ms:
        ax.axvline(deadline_ms, color="black", linestyle="--", linewidth=1, label=f"deadline {deadline_ms:g} ms")
    ax.set_xscale("log")
    ax.set_xlabel("step latency (tick to output), ms, log scale")
    ax.set_ylabel("share of steps")
    ax.set_ylim(0, 1.0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title_of(meta), fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--metadata")
    ap.add_argument("--goals")
    a = ap.parse_args(argv)
    meta = goals = None
    if a.metadata:
        with open(a.metadata) as f:
            meta = json.load(f)
    if a.goals:
        with open(a.goals) as f:
            goals = json.load(f)
    steps = load_steps(a.samples_dir)
    if not steps:
        print(f"vllm_picture: no vllm-<config>-r<round>-dp<rank>.csv in {a.samples_dir}", file=sys.stderr)
        return 1
    period = ((meta or {}).get("parameters") or {}).get("period_us")
    draw(steps, a.out, meta, goals, float(period) / 1000 if period else None)
    for cfg in sorted(steps):
        print(f"vllm_picture: {cfg}: {len(steps[cfg][0])} steps in {len(steps[cfg][1])} rounds")
    print(f"vllm_picture: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
