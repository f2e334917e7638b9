#!/usr/bin/python3
"""tests/proof/wp_cache_sync.py (scripts/test keeps WP's proofs across clean clones): only proofs
are copied, never a timeout, an unknown or a file that is not an entry; an entry already there is
left as it is; a missing source is no error; nothing half-written is left under an entry's name."""
import json
import os
import subprocess
import sys
import tempfile

SYNC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wp_cache_sync.py")


def main():
    fails = []
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "src"), os.path.join(d, "dst")
        os.makedirs(src)
        entries = {"proved.json": {"prover": "Z3:4.8.12", "verdict": "valid", "time": 0.03},
                   "timeout.json": {"prover": "CVC4:1.8", "verdict": "timeout"},
                   "unknown.json": {"prover": "Z3:4.8.12", "verdict": "unknown"},
                   "kept.json": {"prover": "CVC4:1.8", "verdict": "valid", "time": 1.0}}
        for name, e in entries.items():
            with open(os.path.join(src, name), "w") as f:
                json.dump(e, f)
        with open(os.path.join(src, "torn.json"), "w") as f:
            f.write('{ "prover": "Z3:4.8.12", "verd')  # a half-written entry of a run still going
        with open(os.path.join(src, "notes.txt"), "w") as f:
            f.write('"verdict": "valid"')
        os.makedirs(dst)
        with open(os.path.join(dst, "kept.json"), "w") as f:
            f.write("already here")
        r = subprocess.run([sys.executable, SYNC, src, dst], capture_output=True, text=True)
        got = sorted(os.listdir(dst))
        if r.returncode != 0 or got != ["kept.json", "proved.json"]:
            fails.append(f"copied: rc {r.returncode}, {got}, want kept.json and proved.json\n{r.stdout}{r.stderr}")
        if "1 proved goals copied" not in r.stdout:
            fails.append(f"the count: {r.stdout!r}")
        if open(os.path.join(dst, "kept.json")).read() != "already here":
            fails.append("an entry already in the destination was overwritten")
        if open(os.path.join(dst, "proved.json")).read() != open(os.path.join(src, "proved.json")).read():
            fails.append("the copied entry differs from its source")
        r = subprocess.run([sys.executable, SYNC, os.path.join(d, "none"), dst], capture_output=True, text=True)
        if r.returncode != 0 or "no cache yet" not in r.stdout:
            fails.append(f"a missing source: rc {r.returncode}, {r.stdout!r}{r.stderr!r}")
    for f in fails:
        print("FAIL", f)
    print("wp_cache_sync_test:", "FAIL" if fails else "PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
