#!/usr/bin/python3
"""A workload for task_roles_test.py: threads named as given (prctl via threading names on
Linux's comm), each waiting for a line on stdin; threads named *-self register the role `decode`
themselves with the Python helper at start (what a workload does), the others wait to be
labelled from outside. Prints `ready <name>=<tid> ...` (and `self <name> ok|<error>`) once all
run; a line on stdin ends them all.

usage: role_worker.py CLIENTS_PYTHON_DIR NAME...
"""
import ctypes
import sys
import threading

sys.path.insert(0, sys.argv[1])
import claim2core_role  # noqa: E402

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NAME = 15
stop = threading.Event()
tids, results = {}, {}
started = threading.Barrier(len(sys.argv) - 2 + 1)


def run(name):
    libc.prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
    tids[name] = threading.get_native_id()
    if name.endswith("-self"):
        try:
            claim2core_role.register_role("decode")
            results[name] = "ok"
        except Exception as e:  # printed for the test to check
            results[name] = f"{type(e).__name__}:{e}".replace(" ", "_")
    started.wait()
    stop.wait()


threads = [threading.Thread(target=run, args=(n,)) for n in sys.argv[2:]]
for t in threads:
    t.start()
started.wait()
print("ready " + " ".join(f"{n}={tids[n]}" for n in sys.argv[2:]), flush=True)
for n, r in results.items():
    print(f"self {n} {r}", flush=True)
sys.stdin.readline()
stop.set()
for t in threads:
    t.join()
