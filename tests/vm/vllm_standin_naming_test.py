#!/usr/bin/python3
"""vm.vllm_standin_naming: the guest's C++ vLLM stand-in (workloads/vllm_standin.cpp) names its
processes and threads exactly as the Python stand-in does with the real setproctitle
(examples/vllm-standin, Debian's python3-setproctitle, the library stock vLLM uses): for every part
the same comm and process title (argv[0] of /proc/<tgid>/cmdline), read live from /proc, and the
parts examples/vllm-standin/intended.json knows. Then a short measured run of its EngineCore loop:
every due step measured, no step faster than its work, the CSV agreeing with the summary.

  vllm_standin_naming_test.py <c2c-vllm-standin> <examples/vllm-standin>   (77: no setproctitle)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit"))
from check_lines import check, finish  # noqa: E402

binary, examples = sys.argv[1], sys.argv[2]
if subprocess.run(["/usr/bin/python3", "-c", "import setproctitle"], capture_output=True).returncode != 0:
    print("SKIP: /usr/bin/python3 has no setproctitle (apt-get install python3-setproctitle)")
    sys.exit(77)


def live(tgid, tid):
    """(comm, title) of a running thread, from /proc."""
    with open(f"/proc/{tgid}/task/{tid}/comm") as f:
        comm = f.read().rstrip("\n")
    with open(f"/proc/{tgid}/cmdline", "rb") as f:
        title = f.read().split(b"\0")[0].decode(errors="replace")
    return comm, title


def layout(cmd):
    """Runs a stand-in until `ready`; its parts as {part: Counter((comm, title))} read live."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    rows = []
    try:
        for line in proc.stdout:
            if line.strip() == "ready":
                break
            rows.append(json.loads(line))
        parts = {}
        for r in rows:
            comm, title = live(r["tgid"], r["tid"])
            check((comm, title) == (r["comm"], r["title"]) or r["part"] == "api-server" and comm == r["comm"],
                  f"{os.path.basename(cmd[0])} {r['part']} {r['tid']}: "
                  f"reported ({r['comm']}, {r['title']}) is what /proc says ({comm}, {title})")
            # One API server keeps the launcher's argv[0] (an interpreter or binary path): not a title.
            key = (comm, title if title.startswith("VLLM::") else "<launcher>")
            parts.setdefault(r["part"], Counter())[key] += 1
        return parts
    finally:
        proc.terminate()
        proc.wait(10)


work = tempfile.mkdtemp(prefix="vllm-naming.")
try:
    sizes = ["--data-parallel-size", "2", "--tensor-parallel-size", "2"]
    # Executed as its script (#!/usr/bin/python3), as `vllm serve` is: the kernel names it `vllm`.
    py = layout([os.path.join(examples, "vllm"), "serve", *sizes, "--seconds", "60",
                 "--report-dir", os.path.join(work, "py")])
    cc = layout([binary, "serve", *sizes, "--seconds", "60", "--out", os.path.join(work, "cc")])
    with open(os.path.join(examples, "intended.json")) as f:
        intended = set(json.load(f)["standin"])
    check(set(cc) == intended, f"the C++ stand-in's parts are intended.json's ({sorted(set(cc) ^ intended)} differ)")
    for part in sorted(set(py) | set(cc)):
        check(py.get(part) == cc.get(part),
              f"{part}: (comm, title) x count {dict(cc.get(part, {}))} == setproctitle's {dict(py.get(part, {}))}")

    # The measured loop, briefly: 10 ms ticks, 500 ms, one engine with two workers.
    out = os.path.join(work, "loop")
    rc = subprocess.run([binary, "serve", "--data-parallel-size", "1", "--tensor-parallel-size", "2",
                         "--period-us", "10000", "--engine-work-us", "500", "--worker-work-us", "200",
                         "--device-us", "1000", "--measure-ms", "500", "--out", out],
                        stdout=subprocess.DEVNULL, timeout=30).returncode
    check(rc == 0, f"measured run exits 0 (rc {rc})")
    with open(os.path.join(out, "engine-0.json")) as f:
        s = json.load(f)
    check(s["ticks"] == s["ticks_expected"] == 50 and s["steps"] + s["skipped"] == 50,
          f"every due tick counted, released or skipped ({s['steps']} steps + {s['skipped']} skipped of "
          f"{s['ticks']}, expected {s['ticks_expected']}, 50)")
    check(s["latency"]["n"] == s["steps"] > 0 and s["latency"]["p50_us"] >= 1700,
          f"no step faster than its work (500 + 200 us CPU + 1000 us device): p50 {s['latency']['p50_us']} us")
    with open(os.path.join(out, "engine-0.csv")) as f:
        lines = f.read().splitlines()
    rows = [dict(zip(lines[0].split(","), line.split(","))) for line in lines[1:]]
    late = sum(float(r["latency_us"]) > s["deadline_us"] for r in rows)
    check(len(rows) == s["steps"] and sum(int(r["late"]) for r in rows) == s["late"] == late and
          sum(int(r["skipped_before"]) for r in rows) <= s["skipped"] and s["missed"] == s["late"] + s["skipped"],
          f"the CSV holds every step and its late ones ({len(rows)} rows, {late} late; summary {s['late']} late, "
          f"{s['skipped']} skipped, {s['missed']} missed)")
finally:
    shutil.rmtree(work, ignore_errors=True)
finish("PASS")
