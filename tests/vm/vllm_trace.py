#!/usr/bin/env python3
"""Where a woken vLLM Worker waits, from the guest's scheduler trace (issue 43).

Reads the C2C-VLLM-TRACE lines that `run-scenarios.sh --mode vllm --append c2c.vllm_trace_ms=N`
writes to <samples dir>/vllm-trace.txt (the kernel's sched_wakeup and sched_switch events of N ms
of each configuration's window, tests/vm/vllm-guest.sh) and prints, per configuration, one
Markdown row: for every wakeup of a Worker thread (comm VLLM::Worker*), the time until it ran
(p50, mean, p99), the time until the first context switch on any CPU after the wakeup (what a
waiting task waits for a running slice to end), how many other tasks the CPUs picked before it
and how many of those were CPU hogs (stress-ng) and the stand-in's own threads, how much CPU
time the hogs got on all CPUs while it waited, and the length of the hogs' runs (their slice as
run). `--json` prints the same as one JSON object per configuration.

  tests/vm/vllm_trace.py /tmp/vllm/vllm-trace.txt [--json]
"""
import argparse
import collections
import json
import statistics
import sys


def kind(comm):
    if comm.startswith("stress-ng"):
        return "hog"
    if comm.startswith(("VLLM::", "python3", "vllm", "ZMQbg")):
        return "standin"
    if comm.startswith("swapper"):
        return "idle"
    return "other"


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q / 100 * len(xs)))]


def analyse(events):
    """events: (ts_s, cpu, 'W', comm, pid) or (ts_s, cpu, 'S', prev_comm, prev_pid, prev_state, next_comm, next_pid)."""
    events.sort(key=lambda e: e[0])
    # Per-CPU runs: (start, end, pid, comm), from one switch to the next on that CPU.
    runs, cur = [], {}
    for e in events:
        if e[2] != "S":
            continue
        ts, cpu, _, _, _, _, ncomm, npid = e
        if cpu in cur:
            s, pid, comm = cur[cpu]
            runs.append((s, ts, pid, comm, cpu))
        cur[cpu] = (ts, npid, ncomm)
    hog_runs = [(r[1] - r[0]) * 1e3 for r in runs if kind(r[3]) == "hog"]
    waits = []
    for i, e in enumerate(events):
        if e[2] != "W" or not e[3].startswith("VLLM::Worker"):
            continue
        t, pid = e[0], e[4]
        first_switch, picked, t_run = None, collections.Counter(), None
        for f in events[i + 1:]:
            if f[2] != "S":
                continue
            if first_switch is None:
                first_switch = f[0] - t
            if f[7] == pid:
                t_run = f[0]
                break
            picked[kind(f[6])] += 1
        if t_run is None:
            continue  # not run inside the trace window
        hog_ms = sum(max(0.0, min(r[1], t_run) - max(r[0], t)) for r in runs if kind(r[3]) == "hog") * 1e3
        waits.append({"wait_ms": (t_run - t) * 1e3, "first_switch_ms": first_switch * 1e3,
                      "picked_hogs": picked["hog"], "picked_standin": picked["standin"],
                      "picked_other": picked["other"] + picked["idle"], "hog_cpu_ms": hog_ms})
    if not waits:
        return {"wakeups": 0}
    w = [x["wait_ms"] for x in waits]
    mean = lambda k: statistics.fmean(x[k] for x in waits)  # noqa: E731
    return {"wakeups": len(waits), "wait_p50_ms": pct(w, 50), "wait_mean_ms": statistics.fmean(w),
            "wait_p99_ms": pct(w, 99), "first_switch_mean_ms": mean("first_switch_ms"),
            "picked_hogs_mean": mean("picked_hogs"), "picked_standin_mean": mean("picked_standin"),
            "picked_other_mean": mean("picked_other"), "hog_cpu_during_wait_mean_ms": mean("hog_cpu_ms"),
            "waits_with_a_hog_picked_first_pct": 100 * sum(1 for x in waits if x["picked_hogs"] > 0) / len(waits),
            "hog_runs": len(hog_runs), "hog_run_p50_ms": pct(hog_runs, 50), "hog_run_p90_ms": pct(hog_runs, 90)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    by_cfg = collections.defaultdict(list)
    for line in open(a.trace, errors="replace"):
        f = line.split()
        if len(f) < 8 or f[0] != "C2C-VLLM-TRACE":
            continue
        try:
            cfg, ts, cpu, ev = f[1], float(f[3]), int(f[4]), f[5]
            if ev == "W":
                by_cfg[cfg].append((ts, cpu, "W", f[6], f[7]))
            elif ev == "S" and len(f) >= 11:
                by_cfg[cfg].append((ts, cpu, "S", f[6], f[7], f[8], f[9], f[10]))
        except ValueError:
            continue
    if not by_cfg:
        sys.exit("vllm_trace: no C2C-VLLM-TRACE lines in " + a.trace)
    rows = {cfg: analyse(ev) for cfg, ev in by_cfg.items()}
    if a.json:
        for cfg, r in rows.items():
            print(json.dumps({"config": cfg, **r}))
        return
    print("| configuration | Worker wakeups | wait p50 / mean / p99 ms | to the first switch, mean ms | "
          "tasks picked before it: hogs / stand-in / other | wakeups a hog was picked before | "
          "hogs' CPU time while it waited, mean ms | hog runs: p50 / p90 ms |")
    print("|---|---|---|---|---|---|---|---|")
    f1 = lambda x: "-" if x is None else f"{x:.1f}"  # noqa: E731
    for cfg, r in rows.items():
        if not r["wakeups"]:
            print(f"| {cfg} | 0 | - | - | - | - | - | - |")
            continue
        print(f"| {cfg} | {r['wakeups']} | {f1(r['wait_p50_ms'])} / {f1(r['wait_mean_ms'])} / {f1(r['wait_p99_ms'])} | "
              f"{f1(r['first_switch_mean_ms'])} | {r['picked_hogs_mean']:.2f} / {r['picked_standin_mean']:.2f} / "
              f"{r['picked_other_mean']:.2f} | {r['waits_with_a_hog_picked_first_pct']:.0f} % | "
              f"{f1(r['hog_cpu_during_wait_mean_ms'])} | {f1(r['hog_run_p50_ms'])} / {f1(r['hog_run_p90_ms'])} |")


if __name__ == "__main__":
    main()
